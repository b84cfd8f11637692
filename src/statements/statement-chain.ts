import { erc20Abi, getAddress, parseAbiItem, type Address, type PublicClient } from 'viem';
import { DomainError } from '#shared/errors.ts';

/** A `Transfer` log of a token, to or from the account a statement is of. */
export interface TransferLog {
  token: string;
  from: string;
  to: string;
  value: bigint;
  txHash: string;
  blockNumber: number;
  txIndex: number;
  logIndex: number;
}

/** What a statement reads on chain: block times, balances at a block, the account's Transfer logs. */
export interface StatementChain {
  /** The head block's number and timestamp (seconds). */
  head(): Promise<{ number: number; timestamp: number }>;
  /** Timestamp (seconds) of block `n`. */
  timestampOf(n: number): Promise<number>;
  /** The first block whose timestamp is `sec` or later; `headNumber + 1` when none is yet. */
  firstBlockFrom(sec: number, headNumber: number): Promise<number>;
  /** `balanceOf(account)` of `token` as of block `n` (0 before the token existed). */
  balanceOf(token: string, account: string, n: number): Promise<bigint>;
  /** Every Transfer of `tokens` from or to `account` in blocks `fromBlock`..`toBlock`, in chain order. */
  transfers(tokens: readonly string[], account: string, fromBlock: number, toBlock: number): Promise<TransferLog[]>;
}

const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
/** Block timestamps kept per network; the oldest dropped past this. */
const cachedTimestamps = 50_000;

const unavailable = (cause: unknown) => new DomainError('chain.unavailable', 'the chain did not answer the statement\'s reads', { cause });

/** A StatementChain over a viem client; block timestamps are kept (they do not change once mined). */
export function createStatementChain(client: PublicClient): StatementChain {
  const timestamps = new Map<number, number>();
  const timestampOf = async (n: number) => {
    let ts = timestamps.get(n);
    if (ts === undefined) {
      const block = await client.getBlock({ blockNumber: BigInt(n) }).catch((cause: unknown) => { throw unavailable(cause); });
      ts = Number(block.timestamp);
      if (timestamps.size >= cachedTimestamps) timestamps.delete(timestamps.keys().next().value as number);
      timestamps.set(n, ts);
    }
    return ts;
  };
  return {
    async head() {
      const block = await client.getBlock({ blockTag: 'latest' }).catch((cause: unknown) => { throw unavailable(cause); });
      return { number: Number(block.number), timestamp: Number(block.timestamp) };
    },
    timestampOf,
    async firstBlockFrom(sec, headNumber) {
      let lo = 0;
      let hi = headNumber + 1;
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2);
        if (await timestampOf(mid) >= sec) hi = mid; else lo = mid + 1;
      }
      return lo;
    },
    async balanceOf(token, account, n) {
      if (n < 0) return 0n;
      try {
        return await client.readContract({ address: token as Address, abi: erc20Abi, functionName: 'balanceOf', args: [account as Address], blockNumber: BigInt(n) });
      } catch (cause) {
        // No code at the address yet in that block: the token did not exist, nobody held any.
        if (/returned no data/i.test(String(cause))) return 0n;
        throw unavailable(cause);
      }
    },
    async transfers(tokens, account, fromBlock, toBlock) {
      if (tokens.length === 0 || fromBlock > toBlock) return [];
      const address = tokens.map((t) => getAddress(t));
      const range = { address, event: transferEvent, fromBlock: BigInt(fromBlock), toBlock: BigInt(toBlock) } as const;
      const [outgoing, incoming] = await Promise.all([
        client.getLogs({ ...range, args: { from: account as Address } }),
        client.getLogs({ ...range, args: { to: account as Address } }),
      ]).catch((cause: unknown) => { throw unavailable(cause); });
      const seen = new Set<string>();
      const logs: TransferLog[] = [];
      for (const log of [...outgoing, ...incoming]) {
        const key = `${log.transactionHash}:${log.logIndex}`;
        // A transfer from the account to itself comes in both answers: one log.
        if (seen.has(key) || log.args.from === undefined || log.args.to === undefined || log.args.value === undefined) continue;
        seen.add(key);
        logs.push({
          token: log.address, from: log.args.from, to: log.args.to, value: log.args.value, txHash: log.transactionHash,
          blockNumber: Number(log.blockNumber), txIndex: log.transactionIndex, logIndex: log.logIndex,
        });
      }
      return logs.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    },
  };
}
