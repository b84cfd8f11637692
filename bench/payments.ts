// gRPC payments at several numbers of POS/app pairs, on the payment server as the tests run it: each
// pair is a store's POS (StartPayment) and a user's app (DoPayment) running whole payments one after
// the other; the app signs its TRANSFER over the token API. Latency is TRANSFER to END_PAY at the POS.
// The pairs run in the load client's process (bench/load-client.ts), so the server keeps its thread.
import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { openSession, paymentsClient } from '../test/support/payments.ts';
import type { BenchPlatform } from './bench-platform.ts';
import { percentile, spread, type Spread } from './measure.ts';
import { signTransfer, type Sender } from './spec-transfer.ts';

export interface PaymentPair {
  user: Sender & { token: string };
  store: { tid: string; apiKey: string };
}

export interface PaymentLevel {
  pairs: number;
  paymentsPerSecond: Spread;
  /** TRANSFER sent by the app to END_PAY received by the POS. */
  p50Ms: Spread;
  p99Ms: Spread;
  completed: number[];
  failed: number[];
  firstError?: string;
}

export interface PaymentBurst { perSecond: number; p50: number; p99: number; completed: number; failed: number; firstError?: string }

/** Where the pairs pay: the server's HTTP base URL (token API), its gRPC port, the token paid with. */
export interface PaymentTarget { baseUrl: string; grpcPort: number; contractAddress: string }

export const paymentTargetOf = (bench: BenchPlatform): PaymentTarget => ({
  baseUrl: bench.baseUrl, grpcPort: bench.grpcPort!, contractAddress: bench.platform.contracts[bench.platform.config.paymentNetwork].vixpToken,
});

/** `count` users (wallet, JWT, VIXP) and as many stores, and the rate notice payments are quoted at. */
export async function paymentPairs(bench: BenchPlatform, count: number): Promise<PaymentPair[]> {
  const { wallet, identity, payments } = bench.platform;
  await payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
  const pairs: PaymentPair[] = [];
  for (let i = 0; i < count; i++) {
    const { address, secretKey } = await wallet.createAddress();
    const userId = `bench-${randomUUID()}`;
    await identity.users.createUser({ id: userId, password: 'correct horse battery', name: 'Bench User', walletAddress: address });
    const { token } = await identity.jwt.issueAccessToken(userId);
    const store = await payments.addStore({ tid: `B${String(i).padStart(4, '0')}`, name: `Bench Store ${i}` });
    pairs.push({ user: { address, secretKey, token }, store });
  }
  for (let i = 0; i < pairs.length; i += 50) {
    await Promise.all(pairs.slice(i, i + 50).map((p) => wallet.mint(bench.platform.config.paymentNetwork, { to: p.user.address, amount: '100000' })));
  }
  return pairs;
}

let tranNo = 0;
/** One whole payment; answers the TRANSFER to END_PAY latency. */
async function pay(target: PaymentTarget, client: Record<string, any>, pair: PaymentPair): Promise<number> {
  const userUuid = randomUUID();
  const app = openSession(client, 'DoPayment', pair.user.token);
  const pos = openSession(client, 'StartPayment', pair.store.apiKey);
  try {
    app.send({ state: 'START_PAY', user_uuid: userUuid });
    pos.send({
      state: 'START_PAY', tid: pair.store.tid, tran_no: `BENCH${++tranNo}`, exchange_amount: '1000', user_uuid: userUuid,
      contract_address: target.contractAddress, token_symbol: 'VIXP',
      user_address: pair.user.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
    });
    const request = await app.next(60_000);
    await pos.next(60_000);
    const { content } = request;
    if (!content?.settlement_address) throw new Error(`no REQUEST_TRANSFER: ${JSON.stringify(request.common ?? request)}`);
    const signed = await signTransfer(target.baseUrl, pair.user, content.settlement_address, content.token_amount);
    const begin = performance.now();
    app.send({ state: 'TRANSFER', tran_no: content.tran_no, transfer_key: signed.tempKey, hash_key: signed.hashKey, transfer_signature: signed.signature, transfer_comment: content.transfer_comment });
    const end = await pos.next(60_000);
    const latency = performance.now() - begin;
    await app.next(60_000);
    if (end.common?.res_code !== '00') throw new Error(`END_PAY res_code ${end.common?.res_code} ${end.common?.res_msg ?? ''}`);
    return latency;
  } finally {
    app.call.end();
    pos.call.end();
  }
}

/** One burst: every pair pays in a closed loop for `windowMs` or until `maxTotal` payments started. */
export async function paymentBurst(target: PaymentTarget, pairs: PaymentPair[], window: { windowMs: number; maxTotal: number }): Promise<PaymentBurst> {
  // A connection per POS/app pair, as terminals and phones have: the server caps streams per connection.
  const clients = pairs.map(() => paymentsClient(target.grpcPort, { ownConnection: true }) as grpc.Client & Record<string, any>);
  const latencies: number[] = [];
  let started = 0;
  let failed = 0;
  let firstError: string | undefined;
  const begin = performance.now();
  try {
    await Promise.all(pairs.map(async (pair, i) => {
      while (started < window.maxTotal && performance.now() - begin < window.windowMs) {
        started++;
        try {
          latencies.push(await pay(target, clients[i]!, pair));
        } catch (error) {
          failed++;
          firstError ??= (error as Error).message;
        }
      }
    }));
  } finally {
    for (const client of clients) client.close();
  }
  const elapsed = performance.now() - begin;
  return {
    perSecond: latencies.length / (elapsed / 1000), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99),
    completed: latencies.length, failed, ...(firstError && { firstError }),
  };
}

export function summarisePayments(pairs: number, bursts: PaymentBurst[]): PaymentLevel {
  const firstError = bursts.find((b) => b.firstError)?.firstError;
  return {
    pairs,
    paymentsPerSecond: spread(bursts.map((b) => b.perSecond)),
    p50Ms: spread(bursts.map((b) => b.p50), 0), p99Ms: spread(bursts.map((b) => b.p99), 0),
    completed: bursts.map((b) => b.completed), failed: bursts.map((b) => b.failed),
    ...(firstError && { firstError }),
  };
}
