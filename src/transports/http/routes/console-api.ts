import type { FastifyInstance } from 'fastify';
import { erc20Abi, formatUnits, getAddress, isHash, parseEventLogs, type PublicClient } from 'viem';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';
import { explorerOf } from '#shared/networks.ts';
import { consoleFigures, maxWindowMinutes, type ConsoleFiguresDeps } from '../../../console/console-figures.ts';
import type { ActivityRow, ConsoleRepository } from '../../../store/console-repository.ts';
import type { ReceiptService } from '../../../receipts/receipt-service.ts';
import type { ReceiptVerification } from '../../../receipts/verify-receipt.ts';
import { zodRoute, parsed } from '../route-schema.ts';

export interface ConsoleApiDeps {
  figures: ConsoleFiguresDeps;
  repository: ConsoleRepository;
  receipts: ReceiptService;
  /** The chain of a network, or undefined for a name that is not one of ours. */
  chainOf(network: string): { chainId: number; client: PublicClient } | undefined;
  /** `vixpay receipt verify`'s checks of a receipt (docs/receipts.md): the receipt page's verdict. */
  verifyReceipt(receipt: unknown): Promise<ReceiptVerification>;
}

const figuresQuery = z.object({
  minutes: z.coerce.number().int().min(1).max(maxWindowMinutes).default(60).describe('Minutes of the per-minute chart'),
});
const searchQuery = z.object({
  q: z.string().min(1).max(200).describe('A tran_no, reward_id, transaction id, user id, user_uuid, wallet address or store tid'),
});
const paymentParams = z.object({ tid: z.string(), tranNo: z.string() });
const rewardParams = z.object({ tid: z.string(), rewardId: z.string() });
const txParams = z.object({ network: z.string(), hash: z.string() });
const receiptBody = z.looseObject({ proof: z.looseObject({ jwt: z.string().min(1).max(16_384) }) }).describe('A receipt as the receipt endpoints answer it');

/** Rows as the page shows them: `amount` in token units beside the base units. */
async function withAmounts(deps: ConsoleApiDeps, rows: ActivityRow[]) {
  return Promise.all(rows.map(async (row) => ({
    ...row,
    explorerUrl: explorerLink(deps, row.network, row.transactionId && `tx/${row.transactionId}`),
    amount: row.tokenAmount !== null && row.contractAddress
      ? formatUnits(BigInt(row.tokenAmount), await deps.figures.tokenDecimals(row.network, row.contractAddress)) : null,
  })));
}

/** `path` on the network's block explorer (etherscan, bscscan…), when its chain is the public one; null on a test chain. */
function explorerLink(deps: ConsoleApiDeps, network: string, path: string | null | undefined): string | null {
  const chain = deps.chainOf(network);
  const explorer = chain && explorerOf(network, chain.chainId);
  return explorer && path ? `${explorer}/${path}` : null;
}

const searchLimit = 50;
const recentLimit = 20;

/** The console's JSON API (operator session required, see console.ts). */
export async function consoleApiRoutes(app: FastifyInstance, deps: ConsoleApiDeps): Promise<void> {
  const api = { tags: ['console'] };
  app.get('/figures', zodRoute({ ...api, querystring: figuresQuery, summary: 'Every figure of the console' }), async (request, reply) => {
    const { minutes } = parsed(figuresQuery, request.query);
    reply.header('cache-control', 'no-store');
    return consoleFigures(deps.figures, minutes);
  });

  app.get('/recent', zodRoute({ ...api, summary: 'The latest payments and rewards' }), async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { rows: await withAmounts(deps, await deps.repository.recentActivity(recentLimit)) };
  });

  app.get('/search', zodRoute({ ...api, querystring: searchQuery, summary: 'Payments and rewards by tran_no, transaction id, user or store' }), async (request, reply) => {
    const { q } = parsed(searchQuery, request.query);
    reply.header('cache-control', 'no-store');
    return { query: q, rows: await withAmounts(deps, await deps.repository.search(q, searchLimit)) };
  });

  app.get('/receipts/payments/:tid/:tranNo', zodRoute({ ...api, params: paymentParams, summary: 'A payment\'s receipts (docs/receipts.md)' }), async (request) => {
    const { tid, tranNo } = parsed(paymentParams, request.params);
    return deps.receipts.paymentReceipts(tid, tranNo);
  });

  app.get('/receipts/rewards/:tid/:rewardId', zodRoute({ ...api, params: rewardParams, summary: 'A reward claim\'s receipt (docs/receipts.md)' }), async (request) => {
    const { tid, rewardId } = parsed(rewardParams, request.params);
    return { tid, rewardId, receipts: [await deps.receipts.rewardClaimReceipt(tid, rewardId)] };
  });

  app.post('/receipts/verify', zodRoute({ ...api, body: receiptBody, summary: 'Verifies a receipt as `vixpay receipt verify` does: signature, issuer, network, transaction, transfer' }), async (request) => {
    return deps.verifyReceipt(parsed(receiptBody, request.body));
  });

  app.get('/transactions/:network/:hash', zodRoute({ ...api, params: txParams, summary: 'A transaction as the chain has it, with its token transfers' }), async (request) => {
    const { network, hash } = parsed(txParams, request.params);
    const chain = deps.chainOf(network);
    if (!chain) throw new DomainError('network.unknown', `unknown network ${network.slice(0, 32)}`);
    if (!isHash(hash)) throw new DomainError('request.invalid', 'hash: not a transaction hash', { details: 'hash' });
    const receipt = await chain.client.getTransactionReceipt({ hash }).catch(() => undefined);
    if (!receipt) throw new DomainError('request.not_found', `${hash} is not mined on ${network}`);
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs, strict: true });
    const decimals = new Map<string, number>();
    const rows = [];
    for (const log of transfers) {
      const token = getAddress(log.address);
      if (!decimals.has(token)) {
        decimals.set(token, await chain.client.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' }).catch(() => 18));
      }
      rows.push({ token, from: getAddress(log.args.from), to: getAddress(log.args.to), amount: formatUnits(log.args.value, decimals.get(token)!) });
    }
    return {
      network, chainId: chain.chainId, hash: receipt.transactionHash, status: receipt.status, blockNumber: Number(receipt.blockNumber),
      from: receipt.from, to: receipt.to, gasUsed: receipt.gasUsed.toString(), transfers: rows,
      explorerUrl: explorerLink(deps, network, `tx/${receipt.transactionHash}`),
    };
  });
}
