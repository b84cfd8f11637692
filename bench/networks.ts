// `--only=networks`: each network the platform names at its own block rhythm — Ethereum 12 s,
// Optimism 2 s, BNB Smart Chain 0.45 s, opBNB 0.25 s — on an external anvil (`--block-time`, the
// network's own chain id) serving that network of the platform, and the two OP-stack networks also
// on Hardhat's EDR (`hardhat node --chain-type op`, OP Mainnet's published L1 fee scalars in its
// L1Block predeploy) for their L1 data fees. Transfers arrive as customers pay (Poisson) through the
// token API (the host `localhost` labelled with the network, so the API selects it). Beside them,
// on the same chain in the same run: one direct `transferWithAuthorization` and the platform's
// fullest batch (100 transfers sent at once), the contract's floor. Fees are the receipts' own
// (gasUsed × effectiveGasPrice, `l1Fee`, the operator fee), in the network's coin with wei beside.
import { createPublicClient, formatEther, http, numberToHex, pad, type Hex, type PublicClient } from 'viem';
import { coinSymbol, type NetworkName } from '../src/shared/networks.ts';
import { startHardhatNode } from '../test/support/hardhat-node.ts';
import type { LoadClient } from './load-client.ts';
import { batchFloor, directTransferWithAuthorization, platformOn, poissonRun, startIntervalAnvil, type receiptCost } from './real-chain.ts';
import { fundedSenders } from './token-transfers.ts';

export interface NetworkRhythm {
  network: NetworkName;
  blockTimeSeconds: number;
  chainId: number;
  /** Also on Hardhat's EDR as an OP-stack chain (L1 data fees). */
  opStack: boolean;
}

/** The four networks' rhythms (BNB Smart Chain since Fermi, opBNB since Fourier: January 2026). */
export const networkRhythms: readonly NetworkRhythm[] = [
  { network: 'ethereum', blockTimeSeconds: 12, chainId: 1, opStack: false },
  { network: 'optimism', blockTimeSeconds: 2, chainId: 10, opStack: true },
  { network: 'bnb', blockTimeSeconds: 0.45, chainId: 56, opStack: false },
  { network: 'opbnb', blockTimeSeconds: 0.25, chainId: 204, opStack: true },
];

export interface NetworksPlan {
  rates: number[];
  /** Each run's length for a block time: long enough for several blocks (12 s blocks need the longest). */
  durationMs(blockTimeSeconds: number): number;
  accounts: number;
  /** Only these networks (all by default). */
  networks?: readonly NetworkName[];
  log(message: string): void;
}

/** A fee in the network's coin, exact, with wei beside. */
export interface Coin { amount: string; wei: string }

export interface FeeSplit { execution: Coin; l1Data: Coin; operator: Coin; total: Coin }

export interface NetworkRun {
  ratePerSecond: number;
  durationMs: number;
  arrivals: number;
  completed: number;
  failed: number;
  firstError?: string;
  settlementTransactions: number;
  blocks: number;
  transfersPerTransaction: number;
  transactionsPerBlock: number;
  gasPerTransfer: number;
  /** The receipts' l1GasUsed per transfer (OP stack only; null elsewhere). */
  l1DataGasPerTransfer: number | null;
  feePerTransfer: FeeSplit;
  feePerTransaction: FeeSplit;
  p50Ms: number;
  p99Ms: number;
  p50Blocks: number;
  p99Blocks: number;
}

export interface NetworkResult {
  network: NetworkName;
  node: 'anvil' | 'edr-op';
  blockTimeSeconds: number;
  currency: string;
  /** One `transferWithAuthorization` from an EOA: gas, L1 data gas and fee. */
  direct: { gas: number; l1DataGas: number | null; fee: FeeSplit };
  /** The fullest batch of 100 sent at once: per transfer. */
  floor: { items: number; gasPerTransfer: number; l1DataGasPerTransfer: number | null; feePerTransfer: FeeSplit };
  runs: NetworkRun[];
}

const coin = (wei: bigint): Coin => ({ amount: formatEther(wei), wei: wei.toString() });
const per = (wei: bigint, count: number) => (count === 0 ? 0n : (wei * 2n + BigInt(count)) / (2n * BigInt(count)));
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

type Cost = ReturnType<typeof receiptCost>;
/** The fees of `costs` split by part, divided by `count` (to the nearest wei, each part on its own). */
function split(costs: readonly Cost[], count: number): FeeSplit {
  const sum = (pick: (c: Cost) => bigint) => costs.reduce((total, c) => total + pick(c), 0n);
  const execution = sum((c) => c.executionWei);
  const l1Data = sum((c) => c.l1FeeWei);
  const operator = sum((c) => c.operatorFeeWei);
  return { execution: coin(per(execution, count)), l1Data: coin(per(l1Data, count)), operator: coin(per(operator, count)), total: coin(per(execution + l1Data + operator, count)) };
}
const l1GasPer = (costs: readonly Cost[], count: number) =>
  costs.some((c) => c.l1GasUsed === undefined) || count === 0 ? null : Math.round(Number(costs.reduce((t, c) => t + c.l1GasUsed!, 0n)) / count);

/** OP Mainnet's published Ecotone scalars (SystemConfig: base fee 5227, blob base fee 1014213), as the OP-fee test sets them. */
async function setOpMainnetScalars(url: string): Promise<void> {
  const client = createPublicClient({ transport: http(url) });
  // L1Block (0x4200…0015) slot 3 packs sequenceNumber (lowest), blobBaseFeeScalar, baseFeeScalar.
  await client.request({
    method: 'hardhat_setStorageAt', params: ['0x4200000000000000000000000000000000000015', numberToHex(3), pad(numberToHex((5227n << 96n) | (1_014_213n << 64n)), { size: 32 })],
  } as never);
}

/** Hardhat's OP-stack node mining every `blockTime` seconds (interval mining, in ms). */
async function startOpNode(rhythm: NetworkRhythm) {
  const node = await startHardhatNode(['--chain-type', 'op', '--chain-id', String(rhythm.chainId)]);
  const rpc = (method: string, params: unknown[]) => createPublicClient({ transport: http(node.url) }).request({ method, params } as never);
  await setOpMainnetScalars(node.url);
  await rpc('evm_setAutomine', [false]);
  await rpc('evm_setIntervalMining', [Math.round(rhythm.blockTimeSeconds * 1000)]);
  return node;
}

async function measureOn(rhythm: NetworkRhythm, node: 'anvil' | 'edr-op', url: string, plan: NetworksPlan, load: LoadClient): Promise<NetworkResult> {
  const { network, blockTimeSeconds } = rhythm;
  const client = createPublicClient({ transport: http(url, { batch: { batchSize: 100 } }) }) as PublicClient;
  const label = `${network} on ${node}, ${blockTimeSeconds} s blocks`;
  plan.log(`networks: ${label}: platform, ${plan.accounts} funded accounts`);
  // The token API selects its network by the host's first label: `localhost` is this network here.
  // Hardhat's EDR in OP mode refuses type-4 transactions: custodial transfers take EIP-3009 there (docs/decisions/tokens.md).
  const bench = await platformOn(url, { HOST_LABELS: `localhost=${network}`, ...(node === 'edr-op' && { [`EIP7702_${network.toUpperCase()}`]: 'off' }) }, network);
  try {
    const baseUrl = bench.baseUrl.replace('127.0.0.1', 'localhost');
    const senders = await fundedSenders(bench, plan.accounts, network);
    await bench.platform.wallet.mint(network, { to: senders.recipient, amount: '1' });
    const direct = await directTransferWithAuthorization(bench, url, client, senders.recipient as Hex, network);
    const floor = await batchFloor(bench, client, senders, baseUrl);
    const result: NetworkResult = {
      network, node, blockTimeSeconds, currency: coinSymbol(network),
      direct: { gas: direct.gas, l1DataGas: l1GasPer([direct.cost], 1), fee: split([direct.cost], 1) },
      floor: { items: floor.items, gasPerTransfer: floor.gasPerTransfer, l1DataGasPerTransfer: l1GasPer([floor.tx], floor.items), feePerTransfer: split([floor.tx], floor.items) },
      runs: [],
    };
    plan.log(`  direct ${direct.gas} gas${result.direct.l1DataGas === null ? '' : `, ${result.direct.l1DataGas} L1 data gas`}, ${result.direct.fee.total.amount} ${result.currency}; `
      + `fullest batch ${floor.items}: ${floor.gasPerTransfer} gas${result.floor.l1DataGasPerTransfer === null ? '' : `, ${result.floor.l1DataGasPerTransfer} L1 data gas`} per transfer`);
    for (const rate of plan.rates) {
      const durationMs = plan.durationMs(blockTimeSeconds);
      const run = await poissonRun(bench, load, client, url, senders, rate, durationMs, rate, network, baseUrl);
      const { mined } = run;
      const figures: NetworkRun = {
        ratePerSecond: rate, durationMs, arrivals: run.arrivals, completed: run.completed, failed: run.failed, ...(run.firstError && { firstError: run.firstError }),
        settlementTransactions: run.settlementTransactions, blocks: run.blocks,
        transfersPerTransaction: run.transfersPerTransaction, transactionsPerBlock: run.transactionsPerBlock, gasPerTransfer: run.gasPerTransfer,
        l1DataGasPerTransfer: l1GasPer(mined, run.completed),
        feePerTransfer: split(mined, run.completed), feePerTransaction: split(mined, mined.length),
        p50Ms: run.p50Ms, p99Ms: run.p99Ms, p50Blocks: run.p50Blocks, p99Blocks: run.p99Blocks,
      };
      result.runs.push(figures);
      plan.log(`  Poisson ${rate}/s ${durationMs / 1000} s: ${figures.completed} ok ${figures.failed} failed, ${figures.transfersPerTransaction}/tx, ${figures.transactionsPerBlock} tx/block, `
        + `${figures.gasPerTransfer} gas${figures.l1DataGasPerTransfer === null ? '' : ` + ${figures.l1DataGasPerTransfer} L1 data gas`} per transfer, `
        + `${figures.feePerTransfer.total.amount} ${result.currency} (${figures.feePerTransfer.total.wei} wei) per transfer, `
        + `p50 ${figures.p50Ms} ms / ${figures.p50Blocks} blk, p99 ${figures.p99Ms} ms / ${figures.p99Blocks} blk${figures.firstError ? ` (${figures.firstError})` : ''}`);
    }
    return result;
  } finally {
    await bench.stop();
  }
}

export async function measureNetworks(plan: NetworksPlan, load: LoadClient): Promise<NetworkResult[]> {
  const results: NetworkResult[] = [];
  for (const rhythm of networkRhythms) {
    if (plan.networks && !plan.networks.includes(rhythm.network)) continue;
    const anvil = await startIntervalAnvil(rhythm.blockTimeSeconds, rhythm.chainId);
    try {
      results.push(await measureOn(rhythm, 'anvil', anvil.url, plan, load));
    } finally {
      await anvil.stop();
    }
    if (!rhythm.opStack) continue;
    const edr = await startOpNode(rhythm);
    try {
      results.push(await measureOn(rhythm, 'edr-op', edr.url, plan, load));
    } finally {
      await edr.stop();
    }
  }
  return results;
}

const ratio = (value: number | null, base: number | null) => (value === null || base === null || base === 0 ? '–' : `${round(value / base)}x`);

/** The results as a Markdown table, one row per network, node and rate (docs/performance.md). */
export function networksTable(results: readonly NetworkResult[]): string {
  const lines = [
    '| network (node, blocks) | arrivals | settled / failed | transfers per tx | tx per block | gas per transfer (vs floor, vs direct) | L1 data gas per transfer (floor, direct) | fee per transfer: execution + L1 data = total | fee per tx (total) | p50 ms / blocks | p99 ms / blocks |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    for (const run of r.runs) {
      const fee = run.feePerTransfer;
      const l1 = run.l1DataGasPerTransfer === null ? '–' : `${run.l1DataGasPerTransfer} (${r.floor.l1DataGasPerTransfer}, ${r.direct.l1DataGas})`;
      lines.push(`| ${r.network} (${r.node}, ${r.blockTimeSeconds} s) | ${run.ratePerSecond}/s × ${run.durationMs / 1000} s | ${run.completed} / ${run.failed} | ${run.transfersPerTransaction} | ${run.transactionsPerBlock} `
        + `| ${run.gasPerTransfer} (${ratio(run.gasPerTransfer, r.floor.gasPerTransfer)}, ${ratio(run.gasPerTransfer, r.direct.gas)}) | ${l1} `
        + `| ${fee.execution.amount} + ${fee.l1Data.amount} = ${fee.total.amount} ${r.currency} (${fee.total.wei} wei) | ${run.feePerTransaction.total.amount} ${r.currency} `
        + `| ${run.p50Ms} / ${run.p50Blocks} | ${run.p99Ms} / ${run.p99Blocks} |`);
    }
  }
  return lines.join('\n');
}
