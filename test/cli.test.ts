import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { rpcOver, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';

const run = promisify(execFile);
const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-cli-'));
const storeEnv = await testStoreEnv(dataDir);
let server: ServerProcess;

before(async () => { server = await startServerProcess({ DATA_DIR: dataDir }); });
after(async () => {
  if (server) await stopServerProcess(server);
  rmSync(dataDir, { recursive: true, force: true });
});

async function vixpay(...args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, ['bin/vixpay.js', ...args, '--json'], { env: { ...process.env, DATA_DIR: dataDir, ...storeEnv, LOG_LEVEL: 'silent' } });
  return JSON.parse(stdout);
}

test('vixpay token mint and token balance work beside the running server', async () => {
  const { address } = (await rpcOver(server.baseUrl, '/token', 'createAddress', {})).resultData;
  const minted = await vixpay('token', 'mint', '--to', address, '--amount', '250.5', '--network', 'bnb');
  assert.equal(minted.network, 'bnb');
  assert.equal(minted.balance, '250.5');
  assert.match(minted.transactionId, /^0x[0-9a-f]{64}$/);
  assert.equal((await vixpay('token', 'balance', address, '--network', 'bnb')).balance, '250.5');
  assert.equal((await vixpay('token', 'balance', address)).balance, '0', 'other networks untouched');
  // fetch() may not set Host, so a plain HTTP request carries the chain API's network label.
  const overHttp = await new Promise<any>((resolve, reject) => {
    const request = http.request(`${server.baseUrl}/v1/chain`, { method: 'POST', headers: { 'content-type': 'application/json', host: 'api-bsc.vixpay.example' } }, (response) => {
      let body = '';
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve(JSON.parse(body)));
    });
    request.on('error', reject);
    request.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: { address } }));
  });
  assert.equal(overHttp.result.resultData.balance, '250.5');
});

test('bad CLI input is a clear error with a non-zero exit', async () => {
  await assert.rejects(vixpay('token', 'mint', '--to', 'nope', '--amount', '1'), (error: any) => {
    assert.equal(error.code, 1);
    assert.equal(JSON.parse(error.stdout).error.code, 'request.invalid');
    return true;
  });
  await assert.rejects(run(process.execPath, ['bin/vixpay.js', 'token', 'mint', '--bogus']), (error: any) => error.code === 2);
});

test('vixpay user add, then auth-user over HTTP returns a JWT that jwks.json verifies', async () => {
  const added = await vixpay('user', 'add', '--id', 'alice', '--password', 'correct horse battery', '--name', 'Alice', '--email', 'alice@example.com');
  assert.deepEqual(Object.keys(added).sort(), ['address', 'mnemonic', 'secretKey', 'userId']);
  assert.equal(added.userId, 'alice');
  const temp = await rpcOver(server.baseUrl, '/token', 'net_getTempKey', { address: added.address, keyType: 'transfer' });
  assert.equal(temp.resultCode, '200', 'the user has a custodial wallet account');

  const login = await fetch(`${server.baseUrl}/v2/auth/auth-user`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'alice', password: 'correct horse battery', userType: 'x' }),
  });
  assert.equal(login.status, 200);
  const record = await login.json() as any;
  assert.deepEqual(Object.keys(record).sort(), ['email', 'name', 'telNo', 'token', 'userId']);
  assert.deepEqual([record.userId, record.name, record.email, record.telNo], ['alice', 'Alice', 'alice@example.com', null]);
  const { payload } = await jwtVerify(record.token, createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`)));
  assert.equal(payload.sub, 'alice');

  const wrong = await fetch(`${server.baseUrl}/v2/auth/auth-user`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'alice', password: 'wrong password!' }),
  });
  assert.equal(wrong.status, 401);
  assert.deepEqual(Object.keys(await wrong.json() as object), ['error']);
});

test('the server records its URLs in DATA_DIR, and vixpay demo pay finds it there on a port the command is not told', async () => {
  const recorded = JSON.parse(readFileSync(path.join(dataDir, 'server.json'), 'utf8'));
  assert.equal(recorded.http, server.baseUrl);
  assert.notEqual(new URL(recorded.http).port, '8080', 'the server listens on a port other than the default');
  assert.match(recorded.grpc, /^127\.0\.0\.1:\d+$/);
  assert.notEqual(recorded.grpc, '127.0.0.1:50051');
  // Only DATA_DIR: no HTTP_PORT, GRPC_PORT, --http or --grpc.
  const { HTTP_PORT: _http, GRPC_PORT: _grpc, ...env } = process.env;
  const { stdout } = await run(process.execPath, ['bin/vixpay.js', 'demo', 'pay', '--amount', '3000'], {
    env: { ...env, DATA_DIR: dataDir, ...storeEnv, LOG_LEVEL: 'warn' }, timeout: 60_000,
  });
  assert.ok(stdout.includes('pos <- END_PAY [00 Success]'), stdout);
  const result = JSON.parse(stdout.slice(stdout.lastIndexOf('\n{')));
  assert.equal(result.resCode, '00');
  assert.match(result.approvalNo, /^\d{16}$/);
});

test('SIGTERM stops the server cleanly and takes its anvils down', async () => {
  const pids = ['ethereum', 'optimism', 'bnb', 'opbnb'].map((n) => Number(readFileSync(path.join(dataDir, 'chains', n, 'anvil.pid'), 'utf8')));
  assert.equal(await stopServerProcess(server, 'SIGTERM'), 0);
  assert.ok(!existsSync(path.join(dataDir, 'server.json')), 'a clean stop removes the URLs it recorded');
  for (const pid of pids) assert.throws(() => process.kill(pid, 0), 'anvil stopped');
  assert.ok(existsSync(path.join(dataDir, 'chains', 'ethereum', 'state.json')), 'state dumped');
  server = await startServerProcess({ DATA_DIR: dataDir });
  assert.equal(JSON.parse(readFileSync(path.join(dataDir, 'server.json'), 'utf8')).http, server.baseUrl, 'recorded again at the next start');
});
