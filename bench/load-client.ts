// The load generator, in a process of its own so that the server measured keeps its thread: the
// parent forks it once and sends it jobs. Every job is bounded by a count and a time window; a
// closed loop of `concurrency` clients, each starting its next request when its last one answered.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { specTransfer, type Sender } from './spec-transfer.ts';
import { paymentBurst, type PaymentBurst, type PaymentPair, type PaymentTarget } from './payments.ts';

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

type Job = TransfersJob | RequestsJob | PaymentsJob;

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
export async function runJob(job: Job): Promise<LoadResult | PaymentBurst> {
  if (job.kind === 'payments') return paymentBurst(job.target, job.pairs, job);
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
