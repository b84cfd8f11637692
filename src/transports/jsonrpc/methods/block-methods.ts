import { z } from 'zod';
import type { BlockReader, BlockRecord, GetBlockParameters } from '../../../chain/get-block.ts';
import { stringifyJson } from '#shared/json.ts';
import { JsonText, rpcMethod, type RpcMethods } from '../rpc-method.ts';

/** The block API: `getBlock` with params `[]` or `[number | hex | tag | hash]` (an array, as docs/interfaces.md#block-api shows). */
export function blockMethods(readBlock: BlockReader): RpcMethods {
  // A block the reader keeps (old, hence frozen: createBlockReader) is the same object on every
  // ask: its JSON is written once, while the reader keeps it.
  const written = new WeakMap<BlockRecord, JsonText>();
  const resultData = (record: BlockRecord): BlockRecord | JsonText => {
    if (!Object.isFrozen(record)) return record;
    let json = written.get(record);
    if (!json) written.set(record, json = new JsonText(stringifyJson(record)));
    return json;
  };
  return {
    getBlock: rpcMethod({
      params: z.union([
        z.undefined().transform((): GetBlockParameters => []),
        z.tuple([]),
        z.tuple([z.union([z.number(), z.string().max(66)])]),
      ]),
      run: async (p, ctx) => ({ resultData: resultData(await readBlock(ctx.network(), p as GetBlockParameters)) }),
    }),
  };
}
