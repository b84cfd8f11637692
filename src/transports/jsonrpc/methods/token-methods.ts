import { z } from 'zod';
import type { WalletService } from '../../../wallet/wallet-service.ts';
import { keyTypes } from '../../../wallet/temp-key.ts';
import { rpcMethod, type RpcMethods } from '../rpc-method.ts';

const text = (max = 200) => z.string().min(1).max(max);
const noParams = z.union([z.object({}).strict(), z.array(z.never()).max(0), z.undefined()]);

/** The token (custodial wallet) API: the wire names of docs/interfaces.md#token-api. */
export function tokenMethods(wallet: WalletService): RpcMethods {
  return {
    createAddress: rpcMethod({
      params: noParams,
      run: async () => ({ resultData: await wallet.createAddress() }),
    }),
    importAddress: rpcMethod({
      params: z.object({ mnemonic: text(1000) }).strict(),
      run: async (p) => ({ resultData: await wallet.importAddress(p) }),
    }),
    net_getTempKey: rpcMethod({
      params: z.object({ address: text(64), keyType: z.enum(keyTypes) }).strict(),
      run: async (p) => {
        const { tempKey, expiresAt } = await wallet.issueTempKey(p);
        return { resultData: { tempKey, expiresAt: new Date(expiresAt).toISOString() } };
      },
    }),
    signData: rpcMethod({
      params: z.object({ address: text(64), tempKey: text(), hashKey: text(), data: text(), keyType: z.enum(keyTypes).optional() }).strict(),
      run: async (p) => ({ resultData: await wallet.signData(p) }),
    }),
    transfer: rpcMethod({
      params: z.object({
        fromAddress: text(64), toAddress: text(64), amount: text(100), tempKey: text(), hashKey: text(), signature: text(),
        contractAddress: text(64).optional(),
      }).strict(),
      run: async (p, ctx) => {
        const result = await wallet.transfer(ctx.network(), p);
        // Sent, not settled yet: 202 with the transaction to follow (getTransferStatus).
        if (result.status === 'pending' && result.transactionId) {
          return { resultCode: '202', resultMessage: result.error.message, resultData: '', transactionId: result.transactionId };
        }
        if (result.status !== 'settled') throw result.error;
        return {
          transactionId: result.transactionId,
          resultData: { transactionId: result.transactionId, status: 'confirmed', amount: p.amount, contractAddress: result.contractAddress },
        };
      },
    }),
    createToken: rpcMethod({
      params: z.object({
        address: text(64), name: text(64), symbol: text(11), initialSupply: text(100), tempKey: text(), hashKey: text(), signature: text(),
      }).strict(),
      run: async (p, ctx) => {
        const result = await wallet.createToken(ctx.network(), p);
        return { transactionId: result.transactionId, resultData: { contractAddress: result.contractAddress } };
      },
    }),
    getBalance: rpcMethod({
      params: z.object({ address: text(64), contractAddress: text(64).optional() }).strict(),
      run: async (p, ctx) => ({ resultData: await wallet.getBalance(ctx.network(), p) }),
    }),
    getTokenInfo: rpcMethod({
      params: z.union([z.object({ tokenSymbol: text(11).optional(), contractAddress: text(64).optional() }).strict(), z.undefined()]),
      run: async (p, ctx) => ({ resultData: await wallet.getTokenInfo(ctx.network(), p ?? {}) }),
    }),
  };
}
