import { z } from 'zod';
import type { ChainClients } from '../../../chain/chain-clients.ts';
import { getBlock, type GetBlockParameters } from '../../../chain/get-block.ts';
import { rpcMethod, type RpcMethods } from '../rpc-method.ts';

/** The block API: `getBlock` with params `[]` or `[number | hex | tag | hash]` (an array, as SPEC.md shows). */
export function blockMethods(chains: ChainClients): RpcMethods {
  return {
    getBlock: rpcMethod({
      params: z.union([
        z.undefined().transform((): GetBlockParameters => []),
        z.tuple([]),
        z.tuple([z.union([z.number(), z.string().max(66)])]),
      ]),
      run: async (p, ctx) => ({ resultData: await getBlock(chains, ctx.network(), p as GetBlockParameters) }),
    }),
  };
}
