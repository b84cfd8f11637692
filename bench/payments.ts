// Concurrent gRPC payments at one store: N users pay at once over real HTTP/2 streams (SQLite, anvil).
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { newUser, openSession, startPay, startPaymentTest, transferFor } from '../test/support/payments.ts';

export async function benchPayments(count = Number(process.env.BENCH_PAYMENTS ?? 20)): Promise<object> {
  const p = await startPaymentTest();
  try {
    const store = await p.t.platform.payments.addStore({ tid: 'BENCH', name: 'Bench Store' });
    await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
    const users = [];
    for (let i = 0; i < count; i++) users.push(await newUser(p, '100'));
    const latencies: number[] = [];
    const started = performance.now();
    const codes = await Promise.all(users.map(async (user, i) => {
      const begin = performance.now();
      const uuid = randomUUID();
      const app = openSession(p.client, 'DoPayment', user.token);
      const pos = openSession(p.client, 'StartPayment', store.apiKey);
      app.send({ state: 'START_PAY', user_uuid: uuid });
      pos.send(startPay(p, store.tid, `B${i}`, user, uuid, '5000'));
      const request = await app.next();
      await pos.next();
      app.send(await transferFor(p, user, request));
      const end = await pos.next();
      await app.next();
      latencies.push(performance.now() - begin);
      return end.common.res_code as string;
    }));
    const elapsed = performance.now() - started;
    latencies.sort((a, b) => a - b);
    const pct = (q: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1));
    return {
      concurrentPayments: count,
      approved: codes.filter((c) => c === '00').length,
      totalMs: Math.round(elapsed),
      paymentsPerSecond: Number((count / (elapsed / 1000)).toFixed(1)),
      latencyMs: { p50: pct(0.5), p95: pct(0.95), max: pct(1) },
    };
  } finally {
    await p.stop();
  }
}
