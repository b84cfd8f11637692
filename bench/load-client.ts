// The load generator, in a process of its own so that the server measured keeps its thread: the
// parent forks it once and sends it jobs. Every job is bounded by a count and a time window; a
// closed loop of `concurrency` clients, each starting its next request when its last one answered.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rpcCall, signTransfer, specTransfer, type Sender } from './spec-transfer.ts';
import { paymentBurst, type PaymentBurst, type PaymentPair, type PaymentTarget } from './payments.ts';
import { poissonX402, type PoissonX402Job, type PoissonX402Result } from './x402-load.ts';
import { seeded, wallClock } from './arrivals.ts';

export interface TransfersJob {
  kind: 'transfers';
  baseUrl: string;
  /** One sender per concurrent client, each a funded custodial account. */
  senders: Sender[];
  recipient: string;
  amount: string;
  maxTotal: number;
  windowMs: number;
}

export interface RequestsJob {
  kind: 'requests';
  url: string;
  /** The request body, sent as is (application/json). */
  body: string;
  /** Answers must be these bytes (a check that both servers really answer the same). */
  expectedBytes?: number;
  concurrency: number;
  maxTotal: number;
  windowMs: number;
}

export interface PaymentsJob {
  kind: 'payments';
  target: PaymentTarget;
  /** One POS/app pair per concurrent client. */
  pairs: PaymentPair[];
  maxTotal: number;
  windowMs: number;
}

/** Transfers arriving as customers pay: a Poisson process at `ratePerSecond` for `durationMs`, each from the next sender. */
export interface PoissonTransfersJob {
  kind: 'poisson-transfers';
  baseUrl: string;
  senders: Sender[];
  recipient: string;
  amount: string;
  ratePerSecond: number;
  durationMs: number;
  /** The arrivals are the same for the same seed (the batched run and its one-per-transaction baseline). */
  seed: number;
}

/** One transfer of a Poisson job: when its `transfer` call left and was answered (epoch ms, both processes' clock), and its transaction. */
export interface TimedTransfer {
  sentAt: number;
  answeredAt: number;
  /** The whole scheme, temp key to answer. */
  schemeMs: number;
  transactionId: string;
}

export interface PoissonResult {
  arrivals: number;
  transfers: TimedTransfer[];
  failed: number;
  firstError?: string;
  elapsedMs: number;
}

type Job = TransfersJob | RequestsJob | PaymentsJob | PoissonTransfersJob | PoissonX402Job;

/** Open loop: each arrival starts its scheme at its time, whatever the earlier ones are doing; ends once every one is answered. */
async function poissonTransfers(job: PoissonTransfersJob): Promise<PoissonResult> {
  const random = seeded(job.seed);
  const result: PoissonResult = { arrivals: 0, transfers: [], failed: 0, elapsedMs: 0 };
  const begin = performance.now();
  const running: Array<Promise<void>> = [];
  let next = 0;
  for (;;) {
    next += -Math.log(1 - random()) * (1000 / job.ratePerSecond);
    if (next >= job.durationMs) break;
    const wait = begin + next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sender = job.senders[result.arrivals % job.senders.length]!;
    result.arrivals++;
    running.push((async () => {
      const t0 = performance.now();
      try {
        const { tempKey, hashKey, signature } = await signTransfer(job.baseUrl, sender, job.recipient, job.amount);
        const sentAt = wallClock();
        const answer = await rpcCall(job.baseUrl, '/token', 'transfer', { fromAddress: sender.address, toAddress: job.recipient, amount: job.amount, tempKey, hashKey, signature });
        const answeredAt = wallClock();
        result.transfers.push({ sentAt, answeredAt, schemeMs: performance.now() - t0, transactionId: String(answer.resultData.transactionId) });
      } catch (error) {
        result.failed++;
        result.firstError ??= String((error as Error).message ?? error);
      }
    })());
  }
  await Promise.all(running);
  result.elapsedMs = performance.now() - begin;
  return result;
}

export interface LoadResult {
  completed: number;
  failed: number;
  firstError?: string;
  /** From the first request sent to the last answer received. */
  elapsedMs: number;
  latenciesMs: number[];
  /** Transfers only: the `transfer` call alone, without the temp key and signData. */
  transferLatenciesMs?: number[];
}

async function closedLoop(concurrency: number, maxTotal: number, windowMs: number, once: (client: number) => Promise<void>): Promise<LoadResult> {
  const result: LoadResult = { completed: 0, failed: 0, elapsedMs: 0, latenciesMs: [] };
  let started = 0;
  const begin = performance.now();
  const deadline = begin + windowMs;
  await Promise.all(Array.from({ length: concurrency }, async (_, client) => {
    while (started < maxTotal && performance.now() < deadline) {
      started++;
      const t0 = performance.now();
      try {
        await once(client);
        result.latenciesMs.push(performance.now() - t0);
        result.completed++;
      } catch (error) {
        result.failed++;
        result.firstError ??= String((error as Error).message ?? error);
      }
    }
  }));
  result.elapsedMs = performance.now() - begin;
  return result;
}

export async function runJob(job: TransfersJob | RequestsJob): Promise<LoadResult>;
export async function runJob(job: PaymentsJob): Promise<PaymentBurst>;
export async function runJob(job: PoissonTransfersJob): Promise<PoissonResult>;
export async function runJob(job: PoissonX402Job): Promise<PoissonX402Result>;
export async function runJob(job: Job): Promise<LoadResult | PaymentBurst | PoissonResult | PoissonX402Result> {
  if (job.kind === 'payments') return paymentBurst(job.target, job.pairs, job);
  if (job.kind === 'poisson-x402') return poissonX402(job);
  if (job.kind === 'poisson-transfers') return poissonTransfers(job);
  if (job.kind === 'transfers') {
    const transferLatenciesMs: number[] = [];
    const result = await closedLoop(job.senders.length, job.maxTotal, job.windowMs, async (client) => {
      const { transferMs } = await specTransfer(job.baseUrl, job.senders[client]!, job.recipient, job.amount);
      transferLatenciesMs.push(transferMs);
    });
    return { ...result, transferLatenciesMs };
  }
  return closedLoop(job.concurrency, job.maxTotal, job.windowMs, async () => {
    const response = await fetch(job.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: job.body });
    const bytes = (await response.arrayBuffer()).byteLength;
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    if (job.expectedBytes !== undefined && bytes !== job.expectedBytes) throw new Error(`answered ${bytes} bytes, expected ${job.expectedBytes}`);
  });
}

/** A forked load client; `run` sends it one job at a time. */
export interface LoadClient {
  run(job: TransfersJob | RequestsJob): Promise<LoadResult>;
  run(job: PaymentsJob): Promise<PaymentBurst>;
  run(job: PoissonTransfersJob): Promise<PoissonResult>;
  run(job: PoissonX402Job): Promise<PoissonX402Result>;
  stop(): Promise<void>;
}

export async function startLoadClient(): Promise<LoadClient> {
  const child: ChildProcess = fork(new URL(import.meta.url), ['--load-client'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await once(child, 'message');
  return {
    async run(job: Job) {
      child.send(job);
      const [message] = (await once(child, 'message')) as [{ result?: never; error?: string }];
      if (message.error) throw new Error(`load client: ${message.error}`);
      return message.result!;
    },
    async stop() {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

if (process.argv.includes('--load-client') && process.send) {
  process.on('message', (job: Job) => {
    runJob(job as never).then(
      (result) => process.send!({ result }),
      (error: unknown) => process.send!({ error: String(error) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
  process.send('ready');
}
