// The chain's one-transaction-per-transfer rate as its history grows: ERC-20 transfers from anvil's
// ten unlocked accounts (anvil signs), in chunks, each chunk timed until mined. Run on an anvil with
// the platform's settings (state file, `--state-interval 1`) and on a bare one, to the same count.
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import type { Address, Hex } from 'viem';
import { devAccounts, erc20Burst, mintData, send, startBareChain, transferData, untilMined, type BareChain } from './bare-chain.ts';
import { repeat } from './measure.ts';
import { spread, ratio, type Spread } from './measure.ts';

export interface HistoryPoint {
  /** Transactions on the chain before this chunk. */
  transactions: number;
  perSecond: number;
}

export interface ChainHistory {
  transactions: number;
  seconds: number;
  /** The baseline burst on the fresh chain, and again after the fill. */
  fresh: Spread;
  after: Spread;
  afterVsFresh: number;
  curve: HistoryPoint[];
}

/** One chunk of transfers from the ten accounts, each sending its share one after the other. */
async function chunk(chain: BareChain, size: number, recipient: Address, nonces: number[]): Promise<number> {
  const perAccount = Math.ceil(size / devAccounts.length);
  const begin = performance.now();
  const last = await Promise.all(devAccounts.map(async (from, k) => {
    let hash: Hex | undefined;
    for (let i = 0; i < perAccount; i++) {
      hash = await chain.client.request({
        method: 'eth_sendTransaction',
        params: [{ from, to: chain.token, data: transferData(recipient, 1n), gas: '0x30000', nonce: `0x${(nonces[k]!++).toString(16)}`, maxFeePerGas: '0x174876e800', maxPriorityFeePerGas: '0x3b9aca00' }],
      } as any) as Hex;
    }
    return hash!;
  }));
  await untilMined(chain, last);
  return (perAccount * devAccounts.length) / ((performance.now() - begin) / 1000);
}

/**
 * Probes a fresh chain with the baseline's burst (`probes` times), fills it with transfers up to
 * `target` transactions or for `budgetMs`, whichever ends first (timing every chunk: the curve), and
 * probes it again.
 */
export async function measureChainHistory(options: { platformSettings: boolean; target: number; budgetMs: number; chunkSize: number; burst: number; probes: number }): Promise<ChainHistory> {
  const chain = await startBareChain({ platformSettings: options.platformSettings });
  try {
    const probe = async () => spread((await repeat(options.probes, () => erc20Burst(chain, options.burst))).map((r) => r.perSecond));
    const fresh = await probe();
    const minted: Hex[] = [];
    for (const to of devAccounts) minted.push(await send(chain.client, devAccounts[0]!, chain.token, mintData(to, 10n ** 30n)));
    await untilMined(chain, minted);
    const nonces = await Promise.all(devAccounts.map((address) => chain.client.getTransactionCount({ address })));
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const curve: HistoryPoint[] = [];
    let transactions = await transactionCount(chain);
    const begin = performance.now();
    while (transactions + options.chunkSize <= options.target && performance.now() - begin < options.budgetMs) {
      const perSecond = await chunk(chain, options.chunkSize, recipient, nonces);
      curve.push({ transactions, perSecond: Number(perSecond.toFixed(1)) });
      transactions = await transactionCount(chain);
    }
    const seconds = Math.round((performance.now() - begin) / 1000);
    const after = await probe();
    return { transactions, seconds, fresh, after, afterVsFresh: ratio(after, fresh), curve };
  } finally {
    await chain.stop();
  }
}

/** Every block of an automining anvil carries one transaction. */
async function transactionCount(chain: BareChain): Promise<number> {
  return Number(await chain.client.getBlockNumber({ cacheTime: 0 }));
}
