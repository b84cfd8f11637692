import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, rpcOver, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStore, testStoreEnv } from './support/stores.ts';

// What an operator sees: the CLI finding (or refusing) a platform, configuration errors, a failed
// start that leaves nothing running, the console of a running server, and GET /v2/auth/me.
const run = promisify(execFile);
const root = mkdtempSync(path.join(tmpdir(), 'vixpay-console-'));
const dataDir = path.join(root, 'data');
// The platform's database: DATA_DIR/vixpay.sqlite, or its PostgreSQL schema (VIXPAY_TEST_STORE=postgres).
const storeEnv = await testStoreEnv(dataDir);
let server: ServerProcess | undefined;
after(async () => {
  if (server) await stopServerProcess(server);
  rmSync(root, { recursive: true, force: true });
});

const quietEnv = (extra: Record<string, string> = {}) => {
  const env: Record<string, string> = { ...process.env as Record<string, string>, LOG_LEVEL: 'warn', ...extra };
  for (const name of ['DATA_DIR', 'DATABASE_URL', 'MASTER_KEY', 'RELAYER_PRIVATE_KEY']) if (!(name in extra)) delete env[name];
  return env;
};

/** Runs a command to its end: exit code, stdout, stderr. */
async function runToEnd(args: string[], env: Record<string, string>, cwd = process.cwd()) {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { env, cwd, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error: any) {
    return { code: error.code as number, stdout: error.stdout as string, stderr: error.stderr as string };
  }
}
const vixpayBin = path.resolve('bin/vixpay.js');
const mainTs = path.resolve('src/main.ts');

/** Anvil processes whose state lives under `dir` (what a start left running). */
function anvilsUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = (() => { try { return readFileSync(`/proc/${entry}/cmdline`, 'utf8'); } catch { return ''; } })();
    if (cmdline.includes('anvil') && cmdline.includes(dir)) pids.push(Number(entry));
  }
  return pids;
}

test('a CLI command without a platform in DATA_DIR fails naming the directory, and creates nothing', async () => {
  const empty = path.join(root, 'empty');
  for (const [args, env] of [
    [['token', 'balance', '0x0000000000000000000000000000000000000001'], quietEnv({ DATA_DIR: empty })],
    [['token', 'balance', '0x0000000000000000000000000000000000000001', '--data-dir', empty], quietEnv()],
  ] as const) {
    const result = await runToEnd([vixpayBin, ...args], env);
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, new RegExp(`^vixpay: .*no platform in ${empty.replace(/[/.]/g, '\\$&')}.*--data-dir`));
    assert.equal(existsSync(empty), false, 'no directory made');
  }
  // The default is ./data of the current directory.
  const result = await runToEnd([vixpayBin, 'user', 'add', '--id', 'a', '--password', 'p', '--name', 'A'], quietEnv(), root);
  assert.equal(result.code, 1);
  assert.match(result.stderr, new RegExp(`no platform in ${path.join(root, 'data').replace(/[/.]/g, '\\$&')} \\(no such directory\\)`));
});

test('bad settings: one line each, exit 2, no stack trace (CLI and npm start)', async () => {
  const env = quietEnv({ DATA_DIR: path.join(root, 'never'), HTTP_PORT: 'eighty', TRUST_PROXY: 'true' });
  for (const args of [[vixpayBin, 'token', 'balance', '0x0000000000000000000000000000000000000001'], [mainTs]]) {
    const result = await runToEnd(args, env);
    assert.equal(result.code, 2, result.stderr);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 2, result.stderr);
    assert.match(lines[0]!, /^vixpay: invalid configuration: HTTP_PORT: /);
    assert.match(lines[1]!, /^vixpay: invalid configuration: TRUST_PROXY: "true" would trust every hop/);
  }
});

test('a start that cannot listen on its HTTP port stops every process it started', async () => {
  const blocker = createServer().listen(0, '127.0.0.1');
  await once(blocker, 'listening');
  const { port } = blocker.address() as { port: number };
  try {
    const result = await runToEnd([mainTs], quietEnv({ DATA_DIR: dataDir, ...storeEnv, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1', GRPC_PORT: String(await freePort()) }));
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const output = (result.stdout + result.stderr).trim();
    assert.match(output, new RegExp(`HTTP server cannot listen on 127\\.0\\.0\\.1:${port} \\(HTTP_HOST, HTTP_PORT\\): .*EADDRINUSE`));
    assert.doesNotMatch(output, /\n\s+at /, 'no stack trace');
    assert.ok(existsSync(path.join(dataDir, testStore() === 'sqlite' ? 'vixpay.sqlite' : 'master.key')), 'the platform was made before the listen failed');
    assert.deepEqual(anvilsUnder(dataDir), [], 'no anvil left running');
  } finally {
    blocker.close();
  }
});

test('a running server: a ready line with every URL, no health-poll lines, GET /v2/auth/me for the app', async () => {
  server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
  for (let i = 0; i < 3; i++) await fetch(`${server.baseUrl}/healthz`);
  const lines = server.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
  const ready = lines.find((line) => line.msg === 'ready');
  assert.ok(ready, 'a ready line');
  for (const api of ['/token', '/block', '/v1/chain', '/v2/auth', '/v2/did', '/v1/ict/pay', '/v1/ipfs', '/healthz', '/console', '/x402', '/v1/stores/{tid}/statements', '/docs', '/openapi.json', '/metrics', '/readyz']) {
    assert.ok(Object.values(ready.urls as Record<string, string>).some((url) => url.includes(`${server!.baseUrl}${api}`)), `${api} in ${JSON.stringify(ready.urls)}`);
  }
  assert.ok(Object.values(ready.urls as Record<string, string>).some((url) => /PaymentsService/.test(url)), 'the gRPC server');
  assert.equal(lines.filter((line) => line.req?.url === '/healthz' || line.msg?.includes?.('healthz')).length, 0, 'health polls are not logged at info');
  assert.equal(anvilsUnder(dataDir).length, 4, 'the probe for left-over anvils sees running ones');

  // The operator's CLI, told where the platform is, and the app's view of its user.
  const added = JSON.parse((await run(process.execPath, [vixpayBin, 'user', 'add', '--id', 'dana', '--password', 'correct horse battery', '--name', 'Dana', '--data-dir', dataDir, '--json'], { env: quietEnv(storeEnv) })).stdout);
  const login = await (await fetch(`${server.baseUrl}/v2/auth/auth-user`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'dana', password: 'correct horse battery' }),
  })).json() as { token: string };
  const me = await fetch(`${server.baseUrl}/v2/auth/me`, { headers: { authorization: `Bearer ${login.token}` } });
  assert.equal(me.status, 200);
  const token = (await rpcOver(server.baseUrl, '/token', 'getTokenInfo', {})).resultData;
  assert.deepEqual(await me.json(), {
    userId: 'dana', name: 'Dana', walletAddress: added.address, did: null,
    qrCode: { user_uuid: 'dana', user_address: added.address, contract_address: token.contractAddress, token_symbol: token.tokenSymbol },
  });
  assert.ok(server.output().includes('"url":"/v2/auth/me"'), 'other requests are logged at info');
});
