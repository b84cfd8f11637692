// `--only=real-chain`: the platform with its ethereum network on an external anvil that mines every
// `blockTime` seconds (`--block-time`, as Ethereum, Optimism or BNB do), its relayer lanes funded by
// hand as an operator funds them, and transfers arriving as customers pay (Poisson) through the
// token API's key scheme. Each load runs twice on the same chain: as the platform settles by default,
// and one transfer per transaction (SETTLEMENT_BATCH_MAX_ITEMS=1), the baseline. Beside them, on the
// same chain in the same run: one direct `transferWithAuthorization` (a plain EIP-3009 call from an
// EOA) and the platform's fullest batch (100 transfers sent at once), the contract's floor.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  createPublicClient, createTestClient, createWalletClient, http, keccak256, parseEther, parseSignature, stringToHex, type Hex, type PublicClient,
} from 'viem';
import { foundry } from 'viem/chains';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { anvilBinaryPath } from '../src/chain/anvil-process.ts';
import { loadRelayerLanes } from '../src/chain/platform-account.ts';
import { loadConfig } from '../src/config/config.ts';
import type { NetworkName } from '../src/shared/networks.ts';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { transferAuthorizationTypes } from '../src/wallet/authorize-transfer.ts';
import { startBenchPlatform, type BenchPlatform } from './bench-platform.ts';
import type { LoadClient, PoissonResult } from './load-client.ts';
import { percentile, spread, type Spread } from './measure.ts';
import { rpcCall, signTransfer } from './spec-transfer.ts';
import { fundedSenders } from './token-transfers.ts';

export interface RealChainPlan {
  blockTimes: number[];
  rates: number[];
  /** Other rates for a block time (its seconds as written: `'0.45'`) than `rates`. */
  ratesByBlockTime?: Record<string, number[]>;
  durationMs: number;
  runs: number;
  /** Custodial accounts the arrivals take turns from. */
  accounts: number;
  log(message: string): void;
}

/** What one Poisson run settled, read from the chain's receipts and the platform's counters. */
export interface RunFigures {
  arrivals: number;
  completed: number;
  failed: number;
  firstError?: string;
  reachedPerSecond: number;
  settlementTransactions: number;
  blocks: number;
  transfersPerTransaction: number;
  transactionsPerBlock: number;
  gasPerTransfer: number;
  calldataBytesPerTransfer: number;
  /** Every JSON-RPC call to the ethereum node during the run (vixpay_node_rpc_calls_total), per transfer settled. */
  rpcCallsPerTransfer: number;
  rpcCallsByMethod: Record<string, number>;
  /** The `transfer` call, in ms and in blocks (its transaction's block less the head when it was sent). */
  p50Ms: number;
  p99Ms: number;
  p50Blocks: number;
  p99Blocks: number;
  /** The whole scheme (temp key, signData, transfer). */
  schemeP50Ms: number;
}

export interface ModeSummary {
  transfersPerTransaction: Spread;
  transactionsPerBlock: Spread;
  gasPerTransfer: Spread;
  calldataBytesPerTransfer: Spread;
  rpcCallsPerTransfer: Spread;
  p50Ms: Spread;
  p99Ms: Spread;
  p50Blocks: Spread;
  p99Blocks: Spread;
  reachedPerSecond: Spread;
  completed: number[];
  failed: number[];
  firstError?: string;
  runs: RunFigures[];
}

export interface RealChainLevel {
  ratePerSecond: number;
  batched: ModeSummary;
  oneByOne: ModeSummary;
  /** Batched gas per transfer over the contract's batch-100 floor and over the direct call, both of this chain. */
  gasVsFloor: number | null;
  gasVsDirect: number;
}

export interface RealChainResult {
  blockTimeSeconds: number;
  durationMs: number;
  accounts: number;
  /** One `transferWithAuthorization(v, r, s)` from an EOA, to a payee that already holds VIXP. */
  direct: { gas: number; calldataBytes: number };
  /** The platform's fullest settlement transaction when 100 signed transfers are sent at once. */
  floor: { items: number; gasPerTransfer: number; calldataBytesPerTransfer: number };
  levels: RealChainLevel[];
}

const wallClock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** An anvil of our own, mining every `blockTime` seconds, on loopback; its output is drained and dropped. */
export async function startIntervalAnvil(blockTime: number, chainId: number = foundry.id): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(anvilBinaryPath(), [
    '--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--block-time', String(blockTime), '--prune-history', '64',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = /Listening on (\S+:\d+)/.exec(seen);
      if (!match) return;
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      child.stdout!.resume();
      child.stderr!.resume();
      resolve(`http://${match[1]}`);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`anvil --block-time ${blockTime} exited ${code}: ${seen.slice(-500)}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The chain's head as the bench sees it, polled every 20 ms: which block was the latest at a given time. */
export function watchHeads(url: string) {
  const heads: Array<{ number: number; at: number }> = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const number = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })
        .then(async (response) => Number(((await response.json()) as { result: string }).result), () => undefined);
      if (number !== undefined && (heads.length === 0 || number > heads.at(-1)!.number)) heads.push({ number, at: wallClock() });
      await sleep(20);
    }
  })();
  return {
    /** The latest head seen at or before `at`. */
    headAt(at: number): number {
      let head = heads[0]?.number ?? 0;
      for (const h of heads) {
        if (h.at > at) break;
        head = h.number;
      }
      return head;
    },
    async stop() { running = false; await done; },
  };
}

/** Sum of vixpay_node_rpc_calls_total on `network`, by method. */
async function nodeRpcCalls(bench: BenchPlatform, network: NetworkName): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const { labels, value } of (await bench.platform.metrics.nodeRpcCalls.get()).values) {
    if (labels.network === network) calls[String(labels.method)] = (calls[String(labels.method)] ?? 0) + value;
  }
  return calls;
}

/** A receipt field an OP-stack node adds (hex quantity), or undefined on other nodes. */
const opField = (receipt: object, name: string): bigint | undefined => {
  const value = (receipt as Record<string, unknown>)[name];
  return typeof value === 'string' || typeof value === 'bigint' ? BigInt(value) : undefined;
};

/** What a mined transaction cost, from its receipt: execution (gasUsed × effectiveGasPrice), the L1 data fee and operator fee (OP stack; 0 elsewhere), and the L1 data gas (undefined on nodes without it). */
export function receiptCost(receipt: { gasUsed: bigint; effectiveGasPrice: bigint }) {
  const scalar = opField(receipt, 'operatorFeeScalar');
  const constant = opField(receipt, 'operatorFeeConstant');
  return {
    executionWei: receipt.gasUsed * receipt.effectiveGasPrice,
    l1FeeWei: opField(receipt, 'l1Fee') ?? 0n,
    // The Isthmus operator fee, from the receipt's own parameters.
    operatorFeeWei: scalar === undefined || constant === undefined ? 0n : receipt.gasUsed * scalar / 1_000_000n + constant,
    l1GasUsed: opField(receipt, 'l1GasUsed'),
  };
}

/** Receipts and inputs of transactions, from a client of the bench's own (not counted as the platform's calls). */
export async function transactionsOf(client: PublicClient, hashes: readonly Hex[]) {
  const out: Array<{ hash: Hex; gasUsed: bigint; blockNumber: bigint; calldataBytes: number } & ReturnType<typeof receiptCost>> = [];
  for (let i = 0; i < hashes.length; i += 200) {
    const slice = hashes.slice(i, i + 200);
    const [receipts, txs] = await Promise.all([
      Promise.all(slice.map((hash) => client.getTransactionReceipt({ hash }))),
      Promise.all(slice.map((hash) => client.getTransaction({ hash }))),
    ]);
    slice.forEach((hash, j) => out.push({
      hash, gasUsed: receipts[j]!.gasUsed, blockNumber: receipts[j]!.blockNumber, calldataBytes: (txs[j]!.input.length - 2) / 2, ...receiptCost(receipts[j]!),
    }));
  }
  return out;
}

/** The settlement transactions of one Poisson run, with the run's figures: for bench/networks.ts, which reads their fees. */
export async function poissonRun(
  bench: BenchPlatform, load: LoadClient, client: PublicClient, url: string, senders: Awaited<ReturnType<typeof fundedSenders>>, rate: number, durationMs: number, seed: number,
  network: NetworkName = 'ethereum', baseUrl = bench.baseUrl,
): Promise<RunFigures & { mined: Awaited<ReturnType<typeof transactionsOf>> }> {
  const heads = watchHeads(url);
  await sleep(100);
  const callsBefore = await nodeRpcCalls(bench, network);
  let result: PoissonResult;
  try {
    result = await load.run({
      kind: 'poisson-transfers', baseUrl, senders: senders.senders, recipient: senders.recipient, amount: '0.001',
      ratePerSecond: rate, durationMs, seed,
    });
  } finally {
    await heads.stop();
  }
  const callsAfter = await nodeRpcCalls(bench, network);
  const hashes = [...new Set(result.transfers.map((t) => t.transactionId as Hex))];
  const mined = await transactionsOf(client, hashes);
  const blockOf = new Map(mined.map((tx) => [tx.hash, Number(tx.blockNumber)]));
  const completed = result.transfers.length;
  const rpcCallsByMethod: Record<string, number> = {};
  for (const [method, after] of Object.entries(callsAfter)) {
    const delta = after - (callsBefore[method] ?? 0);
    if (delta > 0) rpcCallsByMethod[method] = delta;
  }
  const rpcCalls = Object.values(rpcCallsByMethod).reduce((a, b) => a + b, 0);
  const perTransfer = (value: number) => (completed === 0 ? Number.NaN : value / completed);
  const blocks = new Set(mined.map((tx) => tx.blockNumber)).size;
  const latencies = result.transfers.map((t) => t.answeredAt - t.sentAt);
  const inBlocks = result.transfers.map((t) => blockOf.get(t.transactionId as Hex)! - heads.headAt(t.sentAt));
  return {
    arrivals: result.arrivals, completed, failed: result.failed, ...(result.firstError && { firstError: result.firstError }),
    reachedPerSecond: round(completed / (durationMs / 1000), 2),
    settlementTransactions: hashes.length, blocks,
    transfersPerTransaction: round(completed / Math.max(1, hashes.length), 2),
    transactionsPerBlock: round(hashes.length / Math.max(1, blocks), 2),
    gasPerTransfer: Math.round(perTransfer(Number(mined.reduce((sum, tx) => sum + tx.gasUsed, 0n)))),
    calldataBytesPerTransfer: Math.round(perTransfer(mined.reduce((sum, tx) => sum + tx.calldataBytes, 0))),
    rpcCallsPerTransfer: round(perTransfer(rpcCalls), 2),
    rpcCallsByMethod: Object.fromEntries(Object.entries(rpcCallsByMethod).map(([method, n]) => [method, round(perTransfer(n), 2)])),
    p50Ms: Math.round(percentile(latencies, 0.5)), p99Ms: Math.round(percentile(latencies, 0.99)),
    p50Blocks: percentile(inBlocks, 0.5), p99Blocks: percentile(inBlocks, 0.99),
    schemeP50Ms: Math.round(percentile(result.transfers.map((t) => t.schemeMs), 0.5)),
    mined,
  };
}

function summarise(runs: RunFigures[]): ModeSummary {
  const of = (pick: (run: RunFigures) => number, digits = 1) => spread(runs.map(pick), digits);
  const firstError = runs.find((run) => run.firstError)?.firstError;
  return {
    transfersPerTransaction: of((r) => r.transfersPerTransaction, 2), transactionsPerBlock: of((r) => r.transactionsPerBlock, 2),
    gasPerTransfer: of((r) => r.gasPerTransfer, 0), calldataBytesPerTransfer: of((r) => r.calldataBytesPerTransfer, 0),
    rpcCallsPerTransfer: of((r) => r.rpcCallsPerTransfer, 2),
    p50Ms: of((r) => r.p50Ms, 0), p99Ms: of((r) => r.p99Ms, 0), p50Blocks: of((r) => r.p50Blocks, 0), p99Blocks: of((r) => r.p99Blocks, 0),
    reachedPerSecond: of((r) => r.reachedPerSecond, 2),
    completed: runs.map((r) => r.completed), failed: runs.map((r) => r.failed), ...(firstError && { firstError }), runs,
  };
}

/** One `transferWithAuthorization(v, r, s)` sent by an EOA: a holder's signed authorization to a payee that already holds VIXP. */
export async function directTransferWithAuthorization(bench: BenchPlatform, url: string, client: PublicClient, payee: Hex, network: NetworkName = 'ethereum') {
  const token = bench.platform.contracts[network].vixpToken;
  const holder = privateKeyToAccount(generatePrivateKey());
  const submitter = privateKeyToAccount(generatePrivateKey());
  // hardhat_setBalance: anvil answers it too.
  await createTestClient({ mode: 'hardhat', chain: foundry, transport: http(url) }).setBalance({ address: submitter.address, value: parseEther('10') });
  await bench.platform.wallet.mint(network, { to: holder.address, amount: '10' });
  const name = await client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'name' });
  const message = {
    from: holder.address, to: payee, value: parseEther('0.001'), validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600), nonce: keccak256(stringToHex(`bench:direct:${Date.now()}`)),
  };
  const signature = await holder.signTypedData({
    domain: { name, version: '1', chainId: await client.getChainId(), verifyingContract: token },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message,
  });
  const { r, s, v, yParity } = parseSignature(signature);
  const wallet = createWalletClient({ account: submitter, chain: { ...foundry, id: await client.getChainId() }, transport: http(url) });
  const hash = await wallet.writeContract({
    address: token, abi: vixpTokenAbi, functionName: 'transferWithAuthorization',
    args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, Number(v ?? BigInt(27 + yParity)), r, s],
  } as never);
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
  if (receipt.status !== 'success') throw new Error('the direct transferWithAuthorization reverted');
  const tx = await client.getTransaction({ hash });
  return { gas: Number(receipt.gasUsed), calldataBytes: (tx.input.length - 2) / 2, cost: receiptCost(receipt) };
}

/** 100 transfers signed first, then sent at once: the fullest settlement transaction the platform makes of them. */
export async function batchFloor(bench: BenchPlatform, client: PublicClient, senders: Awaited<ReturnType<typeof fundedSenders>>, baseUrl = bench.baseUrl) {
  const chosen = senders.senders.slice(0, 100);
  const signed = await Promise.all(chosen.map(async (from) => ({ from, ...(await signTransfer(baseUrl, from, senders.recipient, '0.001')) })));
  const answers = await Promise.all(signed.map(({ from, tempKey, hashKey, signature }) => rpcCall(baseUrl, '/token', 'transfer', {
    fromAddress: from.address, toAddress: senders.recipient, amount: '0.001', tempKey, hashKey, signature,
  })));
  const items = new Map<Hex, number>();
  for (const answer of answers) items.set(answer.resultData.transactionId as Hex, (items.get(answer.resultData.transactionId as Hex) ?? 0) + 1);
  const [fullest, count] = [...items.entries()].sort((a, b) => b[1] - a[1])[0]!;
  const [tx] = await transactionsOf(client, [fullest]);
  return { items: count, gasPerTransfer: Math.round(Number(tx!.gasUsed) / count), calldataBytesPerTransfer: Math.round(tx!.calldataBytes / count), tx: tx! };
}

/** A platform with its `network` (ethereum by default) on `url`: its relayer lanes funded there first, as an operator funds them. */
export async function platformOn(url: string, env: Record<string, string>, network: NetworkName = 'ethereum'): Promise<BenchPlatform> {
  const relayerKey = generatePrivateKey();
  // hardhat_setBalance: anvil and Hardhat's node both answer it.
  const controls = createTestClient({ mode: 'hardhat', chain: foundry, transport: http(url) });
  const lanes = loadRelayerLanes({ privateKey: relayerKey, dataDir: url, vault: undefined as never, count: loadConfig({}).relayerLanes });
  for (const lane of lanes) await controls.setBalance({ address: lane.address, value: parseEther('1000') });
  // Whatever chain the node is (anvil's 31337, a Hardhat node as OP Mainnet's 10): it stands for `network`.
  const chainId = await controls.request({ method: 'eth_chainId' } as never) as string;
  return startBenchPlatform({ env: { [`RPC_URL_${network.toUpperCase()}`]: url, [`CHAIN_ID_${network.toUpperCase()}`]: String(BigInt(chainId)), RELAYER_PRIVATE_KEY: relayerKey, PAYMENT_NETWORK: network, ...env } });
}

export async function measureRealChain(plan: RealChainPlan, load: LoadClient): Promise<RealChainResult[]> {
  const results: RealChainResult[] = [];
  for (const blockTime of plan.blockTimes) {
    const rates = plan.ratesByBlockTime?.[String(blockTime)] ?? plan.rates;
    const anvil = await startIntervalAnvil(blockTime);
    const client = createPublicClient({ chain: foundry, transport: http(anvil.url, { batch: { batchSize: 100 } }) }) as PublicClient;
    try {
      const modes = { batched: {}, oneByOne: { SETTLEMENT_BATCH_MAX_ITEMS: '1' } } as const;
      const runsOf: Record<keyof typeof modes, Map<number, RunFigures[]>> = { batched: new Map(), oneByOne: new Map() };
      let direct: RealChainResult['direct'] | undefined;
      let floor: RealChainResult['floor'] | undefined;
      for (const [mode, env] of Object.entries(modes) as Array<[keyof typeof modes, Record<string, string>]>) {
        plan.log(`real chain, ${blockTime} s blocks, ${mode}: platform, ${plan.accounts} funded accounts`);
        const bench = await platformOn(anvil.url, env);
        try {
          const senders = await fundedSenders(bench, plan.accounts);
          // The payee holds VIXP before anything is measured (every figure is for a payee already holding some).
          await bench.platform.wallet.mint('ethereum', { to: senders.recipient, amount: '1' });
          if (mode === 'batched') {
            direct = await directTransferWithAuthorization(bench, anvil.url, client, senders.recipient as Hex);
            floor = await batchFloor(bench, client, senders);
            plan.log(`  direct transferWithAuthorization ${direct.gas} gas, ${direct.calldataBytes} B; fullest batch ${floor.items} items: ${floor.gasPerTransfer} gas, ${floor.calldataBytesPerTransfer} B per transfer`);
          }
          for (let run = 0; run < plan.runs; run++) {
            for (const rate of rates) {
              const { mined: _mined, ...figures } = await poissonRun(bench, load, client, anvil.url, senders, rate, plan.durationMs, 1000 * run + rate);
              (runsOf[mode].get(rate) ?? runsOf[mode].set(rate, []).get(rate)!).push(figures);
              plan.log(`  ${mode} run ${run + 1}, Poisson ${rate}/s: ${figures.completed} ok ${figures.failed} failed, ${figures.transfersPerTransaction} transfers/tx, ${figures.transactionsPerBlock} tx/block, ${figures.gasPerTransfer} gas, ${figures.calldataBytesPerTransfer} B, ${figures.rpcCallsPerTransfer} node calls per transfer, p50 ${figures.p50Ms} ms / ${figures.p50Blocks} blocks, p99 ${figures.p99Ms} ms / ${figures.p99Blocks} blocks${figures.firstError ? ` (${figures.firstError})` : ''}`);
            }
          }
        } finally {
          await bench.stop();
        }
      }
      const levels = rates.map((rate) => {
        const batched = summarise(runsOf.batched.get(rate)!);
        const oneByOne = summarise(runsOf.oneByOne.get(rate)!);
        return {
          ratePerSecond: rate, batched, oneByOne,
          gasVsFloor: floor ? round(batched.gasPerTransfer.median / floor.gasPerTransfer, 3) : null,
          gasVsDirect: round(batched.gasPerTransfer.median / direct!.gas, 3),
        };
      });
      // Only the figures: the direct call's cost and the fullest batch's transaction carry bigints (for bench/networks.ts).
      const { gas, calldataBytes } = direct!;
      const { items, gasPerTransfer, calldataBytesPerTransfer } = floor!;
      results.push({ blockTimeSeconds: blockTime, durationMs: plan.durationMs, accounts: plan.accounts, direct: { gas, calldataBytes }, floor: { items, gasPerTransfer, calldataBytesPerTransfer }, levels });
    } finally {
      await anvil.stop();
    }
  }
  return results;
}

// ---------------------------------------------------------------------------------------------------
// `--only=node-calls`: node calls per settled transfer at each rate on `blockTime` s blocks, and in
// the minute after the last transfer (idle), counted by the platform's own counter
// (vixpay_node_rpc_calls_total, every call of a batch; the `newHeads` subscription's eth_subscribe
// counted too, its pushed heads not: they are no calls). Each mode on the same anvil in the same run:
// `polled`, the node's RPC URL alone (heads and receipts polled over HTTP), and `pushed`, beside it the
// node's WebSocket (WS_URL_ETHEREUM; anvil serves it on its HTTP port).

export type NodeCallsMode = 'polled' | 'pushed';

export interface NodeCallsPlan {
  blockTime: number;
  rates: number[];
  /** How long each rate runs. */
  durationMs: (rate: number) => number;
  /** The idle span counted, after the last transfer was answered and a few blocks went by. */
  idleMs: number;
  accounts: number;
  modes: NodeCallsMode[];
  log(message: string): void;
}

export interface NodeCallsLevel {
  ratePerSecond: number;
  completed: number;
  failed: number;
  callsPerTransfer: number;
  /** Per settled transfer, by method. */
  byMethod: Record<string, number>;
}

export interface NodeCallsResult {
  blockTimeSeconds: number;
  modes: Array<{ mode: NodeCallsMode; levels: NodeCallsLevel[]; idle: { seconds: number; calls: number; callsPerMinute: number; byMethod: Record<string, number> } }>;
}

export async function measureNodeCalls(plan: NodeCallsPlan, load: LoadClient): Promise<NodeCallsResult> {
  const anvil = await startIntervalAnvil(plan.blockTime);
  const client = createPublicClient({ chain: foundry, transport: http(anvil.url, { batch: { batchSize: 100 } }) }) as PublicClient;
  const result: NodeCallsResult = { blockTimeSeconds: plan.blockTime, modes: [] };
  try {
    for (const mode of plan.modes) {
      plan.log(`node calls, ${plan.blockTime} s blocks, ${mode}: platform, ${plan.accounts} funded accounts`);
      const bench = await platformOn(anvil.url, mode === 'pushed' ? { WS_URL_ETHEREUM: anvil.url.replace(/^http/, 'ws') } : {});
      try {
        const senders = await fundedSenders(bench, plan.accounts);
        await bench.platform.wallet.mint('ethereum', { to: senders.recipient, amount: '1' });
        const levels: NodeCallsLevel[] = [];
        for (const rate of plan.rates) {
          const figures = await poissonRun(bench, load, client, anvil.url, senders, rate, plan.durationMs(rate), 7000 + rate);
          levels.push({ ratePerSecond: rate, completed: figures.completed, failed: figures.failed, callsPerTransfer: figures.rpcCallsPerTransfer, byMethod: figures.rpcCallsByMethod });
          plan.log(`  ${mode} Poisson ${rate}/s: ${figures.completed} ok ${figures.failed} failed, ${figures.rpcCallsPerTransfer} node calls per transfer ${JSON.stringify(figures.rpcCallsByMethod)}${figures.firstError ? ` (${figures.firstError})` : ''}`);
        }
        // The last settlements' receipts come within a few blocks: the idle span starts after them.
        await sleep(3 * plan.blockTime * 1000);
        const before = await nodeRpcCalls(bench, 'ethereum');
        await sleep(plan.idleMs);
        const after = await nodeRpcCalls(bench, 'ethereum');
        const byMethod: Record<string, number> = {};
        for (const [method, n] of Object.entries(after)) if (n - (before[method] ?? 0) > 0) byMethod[method] = n - (before[method] ?? 0);
        const calls = Object.values(byMethod).reduce((a, b) => a + b, 0);
        const idle = { seconds: plan.idleMs / 1000, calls, callsPerMinute: round(calls / (plan.idleMs / 60_000), 1), byMethod };
        plan.log(`  ${mode} idle ${idle.seconds} s: ${calls} node calls (${idle.callsPerMinute} per minute) ${JSON.stringify(byMethod)}`);
        result.modes.push({ mode, levels, idle });
      } finally {
        await bench.stop();
      }
    }
  } finally {
    await anvil.stop();
  }
  return result;
}
