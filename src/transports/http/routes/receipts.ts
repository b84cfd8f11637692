import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../../../store/merchant-repository.ts';
import type { ReceiptService } from '../../../receipts/receipt-service.ts';
import { maxReceiptsListed } from '../../../receipts/receipt-service.ts';
import { currentUser, requireUser, type AccessTokenVerifier } from '../auth-hook.ts';
import { posApiKey, userJwt, zodRoute, parsed } from '../route-schema.ts';

export interface ReceiptRoutesDeps {
  receipts: ReceiptService;
  authenticateStore(apiKey: string): Promise<StoreRecord>;
  verify: AccessTokenVerifier;
  /** The wallet address of a user (their receipts are those of this account). */
  walletAddressOf(userId: string): Promise<string | undefined>;
}

const paymentParams = z.object({
  tid: z.string().describe('The store\'s terminal id (tid)'),
  tranNo: z.string().describe('The POS\'s transaction number (tran_no) of the payment'),
});
const rewardParams = z.object({
  tid: z.string().describe('The store\'s terminal id (tid)'),
  rewardId: z.string().describe('The reward_id IssueReward answered'),
});
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(maxReceiptsListed).default(20).describe(`How many receipts, newest first (1 to ${maxReceiptsListed})`),
});

/** The store of the request's `Authorization: Bearer <POS API key>`, which must be store `tid`. */
async function storeOf(request: FastifyRequest, tid: string, deps: ReceiptRoutesDeps): Promise<StoreRecord> {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  if (!match?.[1]) throw new DomainError('request.unauthorized', 'Authorization: Bearer <POS API key> required');
  const store = await deps.authenticateStore(match[1]);
  if (store.tid !== tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
  return store;
}

/**
 * Receipts (docs/receipts.md): verifiable credentials of approvals, refunds and reward claims,
 * signed by the platform's system issuer DID. A store reads its own with its POS API key, a user
 * theirs with their access token.
 */
export async function receiptRoutes(app: FastifyInstance, deps: ReceiptRoutesDeps): Promise<void> {
  app.get('/receipts/:tid/:tranNo', zodRoute({
    params: paymentParams, tags: ['receipts'], security: posApiKey,
    summary: 'Receipts of a payment: its approval and each refund, as verifiable credentials',
  }), async (request) => {
    const { tid, tranNo } = parsed(paymentParams, request.params);
    await storeOf(request, tid, deps);
    return deps.receipts.paymentReceipts(tid, tranNo);
  });

  app.get('/receipts/:tid/rewards/:rewardId', zodRoute({
    params: rewardParams, tags: ['receipts'], security: posApiKey, summary: 'Receipt of a reward claim, as a verifiable credential',
  }), async (request) => {
    const { tid, rewardId } = parsed(rewardParams, request.params);
    await storeOf(request, tid, deps);
    return { tid, rewardId, receipts: [await deps.receipts.rewardClaimReceipt(tid, rewardId)] };
  });

  app.get('/receipts', {
    preHandler: requireUser(deps.verify),
    ...zodRoute({ querystring: listQuery, tags: ['receipts'], security: userJwt, summary: 'The caller\'s receipts, newest first' }),
  }, async (request) => {
    const { limit } = parsed(listQuery, request.query);
    const address = await deps.walletAddressOf(currentUser(request).userId);
    return { receipts: address ? await deps.receipts.userReceipts(address, limit) : [] };
  });
}
