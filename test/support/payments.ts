import { startTestPlatform, type TestPlatform } from './platform.ts';
import { startPaymentServer } from '../../src/main.ts';
import type { GrpcServer } from '../../src/transports/grpc/grpc-server.ts';
import { deleteKeys, testRedisUrl, uniquePrefix } from './redis.ts';
import { freshPostgresSchema, testStore } from './stores.ts';
import { untilAtDesk } from './pairing.ts';
import { paymentsClient, type PaymentTest } from './payment-calls.ts';

export * from './payment-calls.ts';

/** The pairing desk the payment suites run on: VIXPAY_TEST_PAIRING=in-process (default) or redis. */
export function testPairing(env: NodeJS.ProcessEnv = process.env): 'in-process' | 'redis' {
  const value = env.VIXPAY_TEST_PAIRING || 'in-process';
  if (value !== 'in-process' && value !== 'redis') throw new Error(`VIXPAY_TEST_PAIRING=${value}: expected in-process or redis`);
  return value;
}

/** The store the payment suites run on (moved to stores.ts, which platforms share). */
export { testStore };

/**
 * A platform and its payment server. `VIXPAY_TEST_PAIRING=redis` runs the server on the Redis pairing
 * desk (127.0.0.1:6379, a key prefix of its own) instead of the in-process one, and
 * `VIXPAY_TEST_STORE=postgres` the platform on PostgreSQL (VIXPAY_TEST_DATABASE_URL, a fresh schema of
 * its own, dropped by `stop`) instead of SQLite: the same suites then check that desk and that store
 * (`npm run test:matrix`).
 */
export async function startPaymentTest(env: Record<string, string> = {}): Promise<PaymentTest> {
  const overRedis = testPairing() === 'redis';
  const postgres = testStore() === 'postgres' ? await freshPostgresSchema('vixpay_pay') : undefined;
  const redisKeyPrefix = uniquePrefix('payments');
  let t: TestPlatform;
  try {
    t = await startTestPlatform({
      env: { ...(overRedis && { REDIS_URL: testRedisUrl }), ...(postgres && { DATABASE_URL: postgres.databaseUrl }), ...env },
      redisKeyPrefix,
    });
  } catch (error) {
    await postgres?.drop();
    throw error;
  }
  let server: GrpcServer;
  try {
    server = await startPaymentServer(t.platform, t.platform, { port: 0, host: '127.0.0.1' });
  } catch (error) {
    await t.stop();
    await postgres?.drop();
    throw error;
  }
  const client = paymentsClient(server.port);
  const p: PaymentTest = {
    t, server, client,
    ...(overRedis && { redisKeyPrefix }),
    async stop() {
      client.close();
      await server.stop(1000);
      await t.stop();
      if (overRedis) await deleteKeys(redisKeyPrefix);
      await postgres?.drop();
    },
  };
  // The run is on what it says it is on.
  const onRedis = 'instanceId' in t.platform.desk;
  if (onRedis !== overRedis || t.platform.store.dialect !== testStore()) {
    await p.stop();
    throw new Error(`startPaymentTest: expected the ${testPairing()} desk on ${testStore()}, got the ${onRedis ? 'redis' : 'in-process'} desk on ${t.platform.store.dialect}`);
  }
  return p;
}

const deskView = (p: PaymentTest) => ({ desk: p.t.platform.desk, ...(p.redisKeyPrefix && { redisKeyPrefix: p.redisKeyPrefix }) });

/** Until the app of `userUuid` waits at the payment server's desk: its START_PAY was registered. */
export function untilAppWaits(p: PaymentTest, userUuid: string): Promise<void> {
  return untilAtDesk(deskView(p), 'app', userUuid);
}

/** Until a POS waits at the payment server's desk for the app of `userUuid`. */
export function untilPosWaits(p: PaymentTest, userUuid: string): Promise<void> {
  return untilAtDesk(deskView(p), 'pos', userUuid);
}

