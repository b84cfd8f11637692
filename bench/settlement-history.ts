// The chain's transfer rate as its history grows, with transfers settled as the platform settles them:
// EIP-3009 authorizations signed beforehand by many holders, executed up to 100 at a time by one
// `VixpSettlement.settle` transaction (contracts/VixpSettlement.sol, encoded as the relayer encodes it:
// src/chain/settlement-calldata.ts), on an anvil run with the
// platform's settings (its state checkpointed as src/chain/chain-checkpoint.ts does), then on a bare
// anvil to the same count. A
// burst on the fresh chain, a fill to the target number of transfers in chunks (the curve), and the
// same burst again.
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { encodeDeployData, parseEventLogs, toHex, type Address, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { localAccount } from '../src/chain/local-account.ts';
import type { SettlementItem } from '../src/chain/relayer.ts';
import { batchBaseGas, batchItemGas, encodeSettlement } from '../src/chain/settlement-calldata.ts';
import { vixpName } from '../src/chain/platform-contracts.ts';
import { vixpSettlementAbi, vixpSettlementBytecode } from '../src/gen/contracts/vixp-settlement.ts';
import { transferAuthorizationTypes } from '../src/wallet/authorize-transfer.ts';
import { devAccounts, mintData, send, startBareChain, untilMined, type BareChain } from './bare-chain.ts';
import { ratio, repeat, spread, type Spread } from './measure.ts';

/** Items per settlement transaction: the platform's default (SETTLEMENT_BATCH_MAX_ITEMS). */
export const batchItems = 100;
/** The relayer's gas for a batch (src/chain/settlement-calldata.ts): a base and a fixed allowance per item. */
const batchGas = batchBaseGas + batchItemGas * BigInt(batchItems);

export interface SettlementPoint {
  /** Transfers executed on the chain before this chunk. */
  transfers: number;
  /** Transactions sent to the chain before this chunk (deployments, mints, batches). */
  transactions: number;
  perSecond: number;
}

export interface SettlementHistory {
  /** With the platform's settings (state checkpoints), or a bare anvil. */
  platformSettings: boolean;
  batchItems: number;
  holders: number;
  /** Transfers in each probe (burstBatches batches of batchItems), in each fill chunk. */
  burst: number;
  chunk: number;
  target: number;
  /** Transfers executed on the chain, its transactions and blocks, before the probe after the fill. */
  transfers: number;
  transactions: number;
  blocks: number;
  /** Blocks mined by hand because anvil's automine left sent batches in its pool (see receiptsOf). */
  blocksMinedByHand: number;
  /** The size of the checkpointed state file before the second burst (the last checkpoint's). */
  stateFileMiB?: number;
  /** Checkpoints taken during the fill (platform settings), the longest one's duration, and one taken after the fill. */
  checkpoints?: { count: number; maxMs: number; afterFillMs: number; afterFillMiB: number };
  reachedTarget: boolean;
  /** Seconds the fill took (signing included). */
  seconds: number;
  /** Transfers per second: the burst on the fresh chain, and again after the fill. */
  fresh: Spread;
  after: Spread;
  afterVsFresh: number;
  curve: SettlementPoint[];
}

/**
 * Probes a fresh chain `probes` times with `burstBatches` settlement batches sent at once, fills it
 * with batches (`chunkBatches` at a time, each chunk timed until mined) up to `target` transfers or
 * for `budgetMs`, whichever ends first, and probes it again.
 */
export async function measureSettlementHistory(options: {
  platformSettings: boolean; target: number; budgetMs: number; burstBatches: number; chunkBatches: number; probes: number; holders: number;
}): Promise<SettlementHistory> {
  const chain = await startBareChain({ platformSettings: options.platformSettings });
  try {
    const settlement = await deploySettlement(chain);
    const holders = Array.from({ length: options.holders }, () => localAccount(generatePrivateKey()));
    const minted: Hex[] = [];
    for (const holder of holders) minted.push(await send(chain.client, devAccounts[0]!, chain.token, mintData(holder.address, 10n ** 30n)));
    if ((await untilMined(chain, minted)) !== holders.length) throw new Error('settlement history: a mint failed');
    // Payees as a platform has them: a few hundred stores' settlement addresses.
    const payees = Array.from({ length: 200 }, () => localAccount(generatePrivateKey()).address);
    const nonces = await Promise.all(devAccounts.map((address) => chain.client.getTransactionCount({ address, blockTag: 'pending' })));
    const signer = authorizationSigner(chain, holders, payees);
    let transfers = 0;
    // The deployments (token, settlement), the mints, then every settlement batch.
    let transactions = 2 + holders.length;
    const stalls = { count: 0 };

    /** Signs `batches` batches (not timed), sends them all at once from the ten accounts, times them until mined. */
    const round = async (batches: number): Promise<number> => {
      const calldata: Hex[] = [];
      for (let b = 0; b < batches; b++) {
        const items = await signer(batchItems);
        calldata.push(encodeSettlement(settlement, items).data);
      }
      const begin = performance.now();
      // Each account sends its share in nonce order (a nonce ahead of the pool would wait for the next block).
      const hashes: Hex[] = [];
      await Promise.all(devAccounts.map(async (from, k) => {
        for (let b = k; b < calldata.length; b += devAccounts.length) {
          hashes[b] = await chain.client.request({
            method: 'eth_sendTransaction',
            params: [{ from, to: settlement, data: calldata[b], gas: toHex(batchGas), nonce: toHex(nonces[k]!++), maxFeePerGas: '0x174876e800', maxPriorityFeePerGas: '0x3b9aca00' }],
          } as any) as Hex;
        }
      }));
      const receipts = await receiptsOf(chain, hashes, stalls);
      transactions += batches;
      const seconds = (performance.now() - begin) / 1000;
      const executed = executedItems(receipts);
      if (executed !== batches * batchItems) throw new Error(`settlement history: ${executed} of ${batches * batchItems} authorizations executed`);
      transfers += executed;
      return executed / seconds;
    };

    const probe = async () => spread(await repeat(options.probes, () => round(options.burstBatches)));
    const fresh = await probe();
    const chunk = options.chunkBatches * batchItems;
    const curve: SettlementPoint[] = [];
    const begin = performance.now();
    while (transfers + chunk <= options.target && performance.now() - begin < options.budgetMs) {
      const before = { transfers, transactions };
      const perSecond = await round(options.chunkBatches);
      curve.push({ ...before, perSecond: Number(perSecond.toFixed(1)) });
    }
    const seconds = Math.round((performance.now() - begin) / 1000);
    const reached = { transfers, transactions, blocks: Number(await chain.client.getBlockNumber({ cacheTime: 0 })) };
    // One checkpoint of the filled chain: what each costs at this size (the next one waits 50 times that).
    const during = chain.checkpoints?.length ?? 0;
    await chain.checkpoint?.();
    const stateFileMiB = chain.statePath && existsSync(chain.statePath) ? Number((statSync(chain.statePath).size / 2 ** 20).toFixed(1)) : undefined;
    const after = await probe();
    return {
      platformSettings: options.platformSettings, batchItems, holders: options.holders, burst: options.burstBatches * batchItems, chunk, target: options.target,
      ...reached, reachedTarget: reached.transfers + chunk > options.target, seconds, blocksMinedByHand: stalls.count,
      ...(stateFileMiB !== undefined && { stateFileMiB }),
      ...(chain.checkpoints && stateFileMiB !== undefined && { checkpoints: {
        count: during, maxMs: Math.max(0, ...chain.checkpoints.slice(0, during).map((c) => c.ms)),
        afterFillMs: chain.checkpoints.at(-1)?.ms ?? 0, afterFillMiB: stateFileMiB,
      } }),
      fresh, after, afterVsFresh: ratio(after, fresh), curve,
    };
  } finally {
    await chain.stop();
  }
}

async function deploySettlement(chain: BareChain): Promise<Address> {
  const hash = await send(chain.client, devAccounts[0]!, undefined, encodeDeployData({ abi: vixpSettlementAbi, bytecode: vixpSettlementBytecode }));
  const receipt = await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (!receipt.contractAddress) throw new Error('VixpSettlement deployment failed');
  return receipt.contractAddress;
}

/**
 * Signs transfer authorizations (EIP-712 `TransferWithAuthorization` on the VIXP token, as
 * src/wallet/authorize-transfer.ts signs them) from the holders in turn, each with a random nonce,
 * to the payees in turn.
 */
function authorizationSigner(chain: BareChain, holders: LocalAccount[], payees: Address[]) {
  const domain = { name: vixpName, version: '1', chainId: chain.chainId, verifyingContract: chain.token } as const;
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 86_400);
  let next = 0;
  return async (count: number): Promise<SettlementItem[]> => {
    const items: SettlementItem[] = [];
    for (let i = 0; i < count; i++, next++) {
      const holder = holders[next % holders.length]!;
      const message = { from: holder.address, to: payees[next % payees.length]!, value: 1n, validBefore, nonce: toHex(randomBytes(32)) };
      const signature = await holder.signTypedData({ domain, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message: { ...message, validAfter: 0n } });
      items.push({ token: chain.token, ...message, signature });
    }
    return items;
  };
}

/**
 * Until every transaction has a receipt (one batched request per poll); a reverted batch fails the
 * run. anvil's automine can leave ready transactions in its pool when many arrive at once
 * (foundry-rs/foundry#10122): when no receipt came for `stallMs` while the pool holds pending
 * transactions, a block is mined by hand (`evm_mine`) and counted; the wait stays in the timing.
 */
async function receiptsOf(chain: BareChain, hashes: Hex[], stalls: { count: number }): Promise<TransactionReceipt[]> {
  const stallMs = 250;
  const found = new Map<Hex, TransactionReceipt>();
  const deadline = performance.now() + 120_000;
  let progressAt = performance.now();
  while (found.size < hashes.length) {
    if (performance.now() > deadline) throw new Error(`settlement history: ${hashes.length - found.size} batches not mined within 120 s`);
    const pending = hashes.filter((hash) => !found.has(hash));
    const receipts = await Promise.all(pending.map((hash) => chain.batchClient.getTransactionReceipt({ hash }).catch(() => undefined)));
    for (const receipt of receipts) if (receipt) found.set(receipt.transactionHash, receipt);
    if (receipts.some(Boolean)) progressAt = performance.now();
    if (found.size === hashes.length) break;
    if (performance.now() - progressAt > stallMs) {
      const pool = await chain.client.request({ method: 'txpool_status' } as any) as { pending: Hex };
      if (Number(pool.pending) > 0) {
        await chain.client.request({ method: 'evm_mine' } as any);
        stalls.count++;
      }
      progressAt = performance.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const reverted = [...found.values()].filter((r) => r.status !== 'success').length;
  if (reverted > 0) throw new Error(`settlement history: ${reverted} settlement batches reverted`);
  return hashes.map((hash) => found.get(hash)!);
}

/** Items executed: each batch's items less its `ItemSkipped` events. */
function executedItems(receipts: TransactionReceipt[]): number {
  const skipped = parseEventLogs({ abi: vixpSettlementAbi, eventName: 'ItemSkipped', logs: receipts.flatMap((r) => r.logs) }).length;
  return receipts.length * batchItems - skipped;
}
