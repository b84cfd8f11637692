import { z } from 'zod';
import { getTransferStatus, type TransferStatusDeps } from '../../../pay/transfer-status.ts';
import { rpcMethod, type RpcMethods } from '../rpc-method.ts';

/** `getTransferStatus` {transactionId}: what became of a transfer (token API, docs/token-api.md). */
export function transferStatusMethods(deps: TransferStatusDeps): RpcMethods {
  return {
    getTransferStatus: rpcMethod({
      params: z.object({ transactionId: z.string().min(1).max(80) }).strict(),
      run: async (p, ctx) => {
        const resultData = await getTransferStatus(deps, ctx.network(), p.transactionId);
        return { resultData, transactionId: resultData.transactionId };
      },
    }),
  };
}
