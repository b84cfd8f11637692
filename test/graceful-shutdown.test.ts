import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createClient } from 'redis';
import { skipWithout } from './support/parts.ts';
import { freePort, startServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';
import { waitFor } from './support/wait-for.ts';
import { openSession, paymentsClient, type Session } from './support/payment-calls.ts';
import { createTestClient, http, parseEther } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { shutdownDeadlineExitCode } from '../src/main.ts';
import { startAnvil, type AnvilProcess } from '../src/chain/anvil-process.ts';
import { loadRelayerLanes } from '../src/chain/platform-account.ts';
import { loadConfig } from '../src/config/config.ts';

// SIGTERM on a running server (`node src/main.ts`): the listeners stop accepting, an open payment is
// answered with a contract code, and the process exits by SHUTDOWN_TIMEOUT_SECONDS, even with its Redis
// and the node of its payment network gone.

const run = promisify(execFile);
const shutdownSeconds = 8;

function redisServerMissing(): Promise<string | false> {
  return run('redis-server', ['--version']).then(() => false, () => 'redis-server is not on PATH');
}

/** A Redis of this test's own on a free port, to kill under the server. */
async function startThrowawayRedis(): Promise<{ url: string; child: ChildProcess; kill(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode})`);
    const client = createClient({ url, socket: { reconnectStrategy: false } });
    client.on('error', () => undefined);
    return client.connect().then(async () => { await client.close(); return true; }, () => false);
  }, { timeoutMs: 10_000, intervalMs: 100, message: `redis-server answers at ${url}` });
  return {
    url, child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** `vixpay user add` beside the server, then its login: the user's access token. */
async function userToken(server: ServerProcess, env: Record<string, string>, id: string): Promise<string> {
  await run(process.execPath, ['bin/vixpay.js', 'user', 'add', '--id', id, '--password', 'correct horse battery', '--name', id, '--json'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
  });
  const login = await fetch(`${server.baseUrl}/v2/auth/auth-user`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, password: 'correct horse battery', userType: 'x' }),
  });
  assert.equal(login.status, 200);
  return ((await login.json()) as { token: string }).token;
}

/** SIGTERM, then the exit code; fails if the process is still there `withinMs` later. */
async function sigtermAndWait(server: ServerProcess, withinMs: number): Promise<number | null> {
  const exited = once(server.child, 'exit');
  server.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running ${withinMs} ms after SIGTERM:\n${server.output()}`)), withinMs);
  });
  try {
    const [code] = await Promise.race([exited, late]);
    return code as number | null;
  } finally {
    clearTimeout(timer);
  }
}

describe('graceful shutdown of a server process', async () => {
  const skip = skipWithout('redis', await redisServerMissing());
  let dataDir: string;
  let redis: Awaited<ReturnType<typeof startThrowawayRedis>> | undefined;
  let node: AnvilProcess | undefined;
  let server: ServerProcess | undefined;
  let grpcPort: number;
  /** What the server and a CLI command beside it share. */
  let platformEnv: Record<string, string>;

  before(async () => {
    if (skip) return;
    dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-shutdown-'));
    redis = await startThrowawayRedis();
    // The payment network on a node of its own (by RPC URL), its relayer lanes funded as an operator would.
    node = await startAnvil({ chainId: 31337, port: 0 });
    const relayerKey = generatePrivateKey();
    const controls = createTestClient({ mode: 'anvil', transport: http(node.url) });
    for (const lane of loadRelayerLanes({ privateKey: relayerKey, dataDir, vault: undefined as never, count: loadConfig({}).relayerLanes })) {
      await controls.setBalance({ address: lane.address, value: parseEther('1000') });
    }
    grpcPort = await freePort();
    platformEnv = { DATA_DIR: dataDir, ...(await testStoreEnv(dataDir)), RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey };
    server = await startServerProcess({
      ...platformEnv, REDIS_URL: redis.url, GRPC_PORT: String(grpcPort), GRPC_HOST: '127.0.0.1',
      SHUTDOWN_TIMEOUT_SECONDS: String(shutdownSeconds), LOG_LEVEL: 'info', PAYMENT_IDLE_TIMEOUT_SECONDS: '600',
    });
  });
  after(async () => {
    // A test that failed before its SIGTERM: stop the server cleanly (it stops its anvils), by force only if it hangs.
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      await sigtermAndWait(server, (shutdownSeconds + 4) * 1000).catch(() => server?.child.kill('SIGKILL'));
    }
    await redis?.kill();
    await node?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('with its Redis and its node killed: an app waiting for its POS gets END_PAY 10, and the process exits 0 within SHUTDOWN_TIMEOUT_SECONDS', { skip }, async () => {
    const live = server as ServerProcess;
    const token = await userToken(live, platformEnv, 'waiting-app');
    const client = paymentsClient(grpcPort);
    let app: Session | undefined;
    try {
      app = openSession(client, 'DoPayment', token);
      app.send({ state: 'START_PAY' });
      // The app waits at the Redis pairing desk for a POS that never comes.
      const probe = createClient({ url: (redis as { url: string }).url });
      await probe.connect();
      await waitFor(async () => (await probe.keys('vixpay:pairing:app:*')).length > 0, { timeoutMs: 15_000, message: 'the app waits at the desk' });
      await probe.close();

      await (redis as { kill(): Promise<void> }).kill();
      await (node as AnvilProcess).stop();
      const code = await sigtermAndWait(live, (shutdownSeconds + 4) * 1000);
      assert.ok(code === 0 || code === shutdownDeadlineExitCode, `exit code ${code}:\n${live.output()}`);

      const answer = await app.next(1000);
      assert.equal(answer.content.state, 'END_PAY');
      assert.equal(answer.common.res_code, '10', JSON.stringify(answer.common));
      assert.equal(answer.common.res_message, 'Internal server error');
      assert.match(live.output(), /shutting down/);
      assert.match(live.output(), /"msg":"stopped"|shutdown deadline passed/);
    } finally {
      client.close();
    }
  });
});

describe('a dependency unreachable at start', () => {
  test('a Redis that does not answer stops the start with one line naming REDIS_URL, exit 1, never a healthy half-started server', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-no-redis-'));
    try {
      const deadPort = await freePort();
      await assert.rejects(
        startServerProcess({ DATA_DIR: dataDir, REDIS_URL: `redis://user:hunter2@127.0.0.1:${deadPort}`, LOG_LEVEL: 'info' }),
        (error: Error) => {
          assert.match(error.message, /server exited \(1\)/);
          assert.match(error.message, new RegExp(`Redis \\(REDIS_URL, 127\\.0\\.0\\.1:${deadPort}\\) does not answer`));
          assert.doesNotMatch(error.message, /hunter2/, 'the URL\'s password is not printed');
          return true;
        },
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
