import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';
import { compact } from '../src/cli/payments-client.ts';

const run = promisify(execFile);
let server: ServerProcess;
let env: Record<string, string>;
before(async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-cli-'));
  env = { DATA_DIR: dataDir, ...(await testStoreEnv(dataDir)), HTTP_PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };
  server = await startServerProcess(env);
});
after(async () => {
  if (server) await stopServerProcess(server);
  rmSync(env.DATA_DIR!, { recursive: true, force: true });
});

const vixpay = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ['bin/vixpay.js', ...args], { env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, timeout: 60_000 });
  return stdout;
};

test('vixpay demo pay runs a whole payment over the public interfaces and prints each state', async () => {
  const out = await vixpay('demo', 'pay', '--amount', '12000');
  assert.ok(out.split('\n').includes('app -> START_PAY'), `the app's START_PAY carries only state, as docs/interfaces.md#grpc-payments shows:\n${out}`);
  for (const line of ['app -> START_PAY', 'pos -> START_PAY', 'app <- REQUEST_TRANSFER [00 Success]', 'pos <- REQUEST_TRANSFER [00 Success]', 'app -> TRANSFER', 'app <- END_PAY [00 Success]', 'pos <- END_PAY [00 Success]']) {
    assert.ok(out.includes(line), `${line}\n${out}`);
  }
  assert.ok(out.includes('dates below (yyyyMMddHHmmss) are in the platform\'s TIME_ZONE, Asia/Seoul'), out);
  const result = JSON.parse(out.slice(out.lastIndexOf('\n{')));
  assert.equal(result.resCode, '00');
  assert.match(result.approvalNo, /^\d{16}$/);
  assert.equal(result.balances.user, String(100 - Number(result.tokenAmount)));
});

test('vixpay demo reward: issue, claim, 05 on a second claim, cancel, 03 on a second cancel; each step says what it shows; --json: one JSON document', async () => {
  // With --json, standard output is the result alone and the steps go to standard error.
  const { stdout, stderr: out } = await run(process.execPath, ['bin/vixpay.js', 'demo', 'reward', '--json'], { env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, timeout: 60_000 });
  assert.equal(stdout.trim().split('\n').length, 1, stdout);
  assert.ok(out.includes('app <- END_REWARD [00 Success]'), out);
  assert.ok(out.includes('app <- END_REWARD [05 Already rewarded]'), out);
  assert.ok(out.includes('pos <- CancelReward [03 Reward already canceled]'), out);
  // Each step says what it shows, and the end says why 03 is the expected last code.
  for (let n = 1; n <= 5; n++) assert.match(out, new RegExp(`^step ${n}/5: `, 'm'));
  assert.match(out, /step 5\/5: the POS cancels it again, on purpose: 03/);
  assert.match(out, /^as expected: claimed once \(00\), the repeated claim refused \(05\), cancelled once \(00\), the repeated cancellation refused \(03\)/m);
  const result = JSON.parse(stdout);
  assert.deepEqual(result.resCodes, { issue: '00', claim: '00', claimAgain: '05', cancel: '00', cancelAgain: '03' });
  assert.equal(result.asExpected, true);
  assert.equal(result.userBalanceAfterClaim, result.tokenAmount);
  assert.equal(result.userBalance, '0');
});

test('the simulators\' results are camelCase like every other command\'s', () => {
  assert.deepEqual(compact({ common: { res_code: '00', res_message: 'Success' }, content: { approval_no: '2026112600000001', token_amount: '15', tran_no: '' } }),
    { resCode: '00', resMessage: 'Success', approvalNo: '2026112600000001', tokenAmount: '15' });
});

test('vixpay store add and rate publish print what an operator needs', async () => {
  const store = JSON.parse(await vixpay('store', 'add', '--tid', 'CLI-1', '--name', 'Noodle Bar', '--json'));
  assert.equal(store.tid, 'CLI-1');
  assert.match(store.settlementAddress, /^0x[0-9a-fA-F]{40}$/);
  assert.match(store.apiKey, /^vxp_/);
  const notice = JSON.parse(await vixpay('rate', 'publish', '--currency', 'USD', '--rate', '0.75', '--json'));
  assert.equal(notice.rate, '0.75');
  assert.match(notice.exchangeDateIndex, /^\d{8}00001$/);
});
