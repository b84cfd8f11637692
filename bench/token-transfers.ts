// Token-API transfers at several concurrencies: each concurrent sender is a funded custodial account
// running the key scheme (net_getTempKey, hashKey, signData, transfer) over HTTP to the listening
// server, from the load client's process. The server's RSS growth is sampled during each burst.
import type { NetworkName } from '../src/shared/networks.ts';
import type { BenchPlatform } from './bench-platform.ts';
import type { LoadClient } from './load-client.ts';
import { percentile, rssGrowthDuring, spread, type Spread } from './measure.ts';
import type { Sender } from './spec-transfer.ts';

export interface TransferLevel {
  senders: number;
  transfersPerSecond: Spread;
  /** The whole scheme, temp key to transfer answer. */
  p50Ms: Spread;
  p99Ms: Spread;
  /** The `transfer` call alone. */
  transferCallP50Ms: Spread;
  transferCallP99Ms: Spread;
  completed: number[];
  failed: number[];
  firstError?: string;
  serverRssGrowthMiB: Spread;
}

export interface TransferBurst {
  perSecond: number;
  p50: number;
  p99: number;
  callP50: number;
  callP99: number;
  completed: number;
  failed: number;
  firstError?: string;
  rssGrowthMiB: number;
}

/** Custodial accounts with VIXP on `network` (ethereum by default), created and minted through the platform. */
export async function fundedSenders(bench: BenchPlatform, count: number, network: NetworkName = 'ethereum'): Promise<{ senders: Sender[]; recipient: string }> {
  const { wallet } = bench.platform;
  const senders: Sender[] = [];
  for (let i = 0; i < count; i++) {
    const { address, secretKey } = await wallet.createAddress();
    senders.push({ address, secretKey });
  }
  const recipient = (await wallet.createAddress()).address;
  for (let i = 0; i < senders.length; i += 50) {
    await Promise.all(senders.slice(i, i + 50).map((s) => wallet.mint(network, { to: s.address, amount: '1000' })));
  }
  // An account's first transfer carries its EIP-7702 delegation, priced apart (docs/decisions/tokens.md):
  // made here, so what is measured is what an account pays from its second transfer on.
  for (let i = 0; i < senders.length; i += 100) {
    await Promise.all(senders.slice(i, i + 100).map((s) => wallet.transferFromCustody(network, { fromAddress: s.address, toAddress: recipient, amount: '0.001' })));
  }
  return { senders, recipient };
}

/** One burst: `senders.length` concurrent senders in a closed loop for `windowMs` or `maxTotal` transfers. */
export async function transferBurst(bench: BenchPlatform, load: LoadClient, senders: Sender[], recipient: string, window: { windowMs: number; maxTotal: number }): Promise<TransferBurst> {
  const { result, rssGrowthMiB } = await rssGrowthDuring(() => load.run({
    kind: 'transfers', baseUrl: bench.baseUrl, senders, recipient, amount: '0.001', ...window,
  }));
  const calls = result.transferLatenciesMs ?? [];
  return {
    perSecond: result.completed / (result.elapsedMs / 1000),
    p50: percentile(result.latenciesMs, 0.5), p99: percentile(result.latenciesMs, 0.99),
    callP50: percentile(calls, 0.5), callP99: percentile(calls, 0.99),
    completed: result.completed, failed: result.failed, ...(result.firstError && { firstError: result.firstError }),
    rssGrowthMiB,
  };
}

export function summariseLevel(senders: number, bursts: TransferBurst[]): TransferLevel {
  const firstError = bursts.find((b) => b.firstError)?.firstError;
  return {
    senders,
    transfersPerSecond: spread(bursts.map((b) => b.perSecond)),
    p50Ms: spread(bursts.map((b) => b.p50), 0), p99Ms: spread(bursts.map((b) => b.p99), 0),
    transferCallP50Ms: spread(bursts.map((b) => b.callP50), 0), transferCallP99Ms: spread(bursts.map((b) => b.callP99), 0),
    completed: bursts.map((b) => b.completed), failed: bursts.map((b) => b.failed),
    ...(firstError && { firstError }),
    serverRssGrowthMiB: spread(bursts.map((b) => b.rssGrowthMiB)),
  };
}
