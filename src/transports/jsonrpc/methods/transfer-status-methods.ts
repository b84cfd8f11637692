import { z } from 'zod';
import { getTransferStatus, type TransferStatusDeps } from '../../../pay/transfer-status.ts';
import { rpcMethod, type RpcMethods } from '../rpc-method.ts';

/** `getTransferStatus` {transactionId[, fromAddress]}: what became of a transfer (token API, docs/token-api.md). */
export function transferStatusMethods(deps: TransferStatusDeps): RpcMethods {
  return {
    getTransferStatus: rpcMethod({
      params: z.object({ transactionId: z.string().min(1).max(80), fromAddress: z.string().regex(/^0x[0-9a-fA-F]{40}$/).optional() }).strict(),
      run: async (p, ctx) => {
        const resultData = await getTransferStatus(deps, ctx.network(), p.transactionId, p.fromAddress);
        return { resultData, transactionId: resultData.transactionId };
      },
    }),
  };
}
