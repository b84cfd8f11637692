import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { balanceOf, newUser, startPaymentTest, type PaymentTest } from './support/payments.ts';
import { python, pythonGrpcMissing, skipWithout } from './support/parts.ts';

// Interop with another language: a Python POS and app, whose gRPC stubs grpc_tools.protoc generates
// from test/interop/spec-payments.proto (written from docs/interfaces.md#grpc-payments alone, not from our .proto), run whole
// payments against a real payment server, calling the token API over real HTTP.
const here = path.dirname(new URL(import.meta.url).pathname);
const protoDir = path.join(here, 'interop');
const clientScript = path.join(protoDir, 'python_payment_client.py');

const skip = skipWithout('python-grpc', pythonGrpcMissing());

let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
let httpBase: string;
let stubs: string;

before(async () => {
  if (skip) return;
  stubs = mkdtempSync(path.join(tmpdir(), 'vixpay-pystubs-'));
  execFileSync(python, ['-m', 'grpc_tools.protoc', `-I${protoDir}`, `--python_out=${stubs}`, `--grpc_python_out=${stubs}`, path.join(protoDir, 'spec-payments.proto')]);
  assert.deepEqual(readdirSync(stubs).sort(), ['spec_payments_pb2.py', 'spec_payments_pb2_grpc.py']);
  p = await startPaymentTest();
  store = await p.t.platform.payments.addStore({ tid: `T-PY-${randomUUID().slice(0, 6)}`, name: 'Python Cafe' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
  httpBase = await p.t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await p?.stop();
  if (stubs) rmSync(stubs, { recursive: true, force: true });
});

interface SideResult {
  received: Array<Record<string, string>>;
  states: string[];
  end: Record<string, string> | null;
  status: string | null;
  error: string | null;
}
interface ClientResult { tran_no: string; app: SideResult; pos: SideResult }

/** Runs the Python client (asynchronously: the server lives in this process) with a JSON on stdin. */
function runPythonClient(input: Record<string, unknown>, timeoutMs = 90_000): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [clientScript, '--stdin'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`python client timed out; stderr:\n${stderr}`)); }, timeoutMs);
    child.on('error', (error) => { clearTimeout(timer); reject(error); });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`python client exited ${code}; stderr:\n${stderr}\nstdout:\n${stdout}`));
      try { resolve(JSON.parse(stdout) as ClientResult); } catch { reject(new Error(`python client printed no JSON:\n${stdout}\n${stderr}`)); }
    });
    child.stdin.end(JSON.stringify(input));
  });
}

type PythonUser = { userId: string; address: string; secretKey: string; token: string };

/** The Python app sends DoPayment START_PAY with only state; the POS sends the user's id as the QR code's user_uuid. */
async function pay(user: PythonUser, exchangeAmount: string, corruptSignature = false) {
  return runPythonClient({
    grpc: `127.0.0.1:${p.server.port}`, http: httpBase, tid: store.tid, api_key: store.apiKey,
    jwt: user.token, user_id: user.userId, address: user.address, secret_key: user.secretKey,
    exchange_amount: exchangeAmount, tran_no: `PY${randomUUID().slice(0, 8)}`, stubs, corrupt_signature: corruptSignature,
  });
}

/** A reward claim at the POS: the same app, the POS sends START_REWARD. */
async function claimAtPos(user: PythonUser, rewardId: string, tokenAmount: string) {
  return runPythonClient({
    grpc: `127.0.0.1:${p.server.port}`, http: httpBase, tid: store.tid, api_key: store.apiKey,
    jwt: user.token, user_id: user.userId, address: user.address, secret_key: user.secretKey,
    reward_id: rewardId, token_amount: tokenAmount, tran_no: `PYR${randomUUID().slice(0, 8)}`, stubs,
  });
}

describe('a Python client generated from the spec-only .proto', () => {
  test('runs a whole payment: END_PAY 00 on both streams, approval to the POS only, tokens moved on chain', { skip }, async () => {
    const user = await newUser(p, '100');
    const storeBefore = await balanceOf(p, store.settlementAddress);
    const r = await pay(user, '15000');

    assert.deepEqual(r.app.states, ['REQUEST_TRANSFER', 'END_PAY'], JSON.stringify(r.app));
    assert.deepEqual(r.pos.states, ['REQUEST_TRANSFER', 'END_PAY'], JSON.stringify(r.pos));
    assert.equal(r.app.status, 'OK');
    assert.equal(r.pos.status, 'OK');
    const appRequest = r.app.received[0]!;
    assert.equal(appRequest.res_code, '00');
    assert.equal(appRequest.token_amount, '10');
    assert.equal(appRequest.settlement_address, store.settlementAddress);
    assert.equal(appRequest.exchange_rate, '1500');

    const posEnd = r.pos.end!;
    const appEnd = r.app.end!;
    for (const end of [posEnd, appEnd]) {
      assert.equal(end.state, 'END_PAY');
      assert.equal(end.res_code, '00');
      assert.equal(end.res_message, 'Success');
      assert.equal(end.tran_no, r.tran_no);
      assert.equal(end.token_amount, '10');
    }
    assert.equal(posEnd.target_api, 'startPayment');
    assert.equal(appEnd.target_api, 'doPayment');
    assert.match(posEnd.approval_no!, /^\d{16}$/);
    assert.match(posEnd.approval_date!, /^20\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])([01]\d|2[0-3])[0-5]\d[0-5]\d$/);
    assert.equal(appEnd.approval_no, '');
    assert.equal(appEnd.approval_date, '');
    assert.match(posEnd.transfer_transaction_id!, /^0x[0-9a-f]{64}$/);
    assert.equal(appEnd.transfer_transaction_id, posEnd.transfer_transaction_id);

    assert.equal(await balanceOf(p, user.address), '90');
    assert.equal(Number(await balanceOf(p, store.settlementAddress)) - Number(storeBefore), 10);
    const receipt = await p.t.platform.chains.ethereum.client.getTransactionReceipt({ hash: posEnd.transfer_transaction_id as `0x${string}` });
    assert.equal(receipt.status, 'success');
  });

  test('a wrong transfer signature: END_PAY 04 on both streams, balances unchanged', { skip }, async () => {
    const user = await newUser(p, '100');
    const storeBefore = await balanceOf(p, store.settlementAddress);
    const r = await pay(user, '15000', true);

    assert.deepEqual(r.app.states, ['REQUEST_TRANSFER', 'END_PAY'], JSON.stringify(r.app));
    assert.deepEqual(r.pos.states, ['REQUEST_TRANSFER', 'END_PAY'], JSON.stringify(r.pos));
    for (const end of [r.pos.end!, r.app.end!]) {
      assert.equal(end.res_code, '04', JSON.stringify(end));
      assert.equal(end.res_message, 'Token API error');
      assert.equal(end.tran_no, r.tran_no);
      assert.equal(end.approval_no, '');
      assert.equal(end.transfer_transaction_id, '');
    }
    assert.equal(await balanceOf(p, user.address), '100');
    assert.equal(await balanceOf(p, store.settlementAddress), storeBefore);
  });

  test('a reward claim at the POS: END_REWARD 00 to both; an unknown reward is reward 01 to both', { skip }, async () => {
    const user = await newUser(p);
    await p.t.platform.wallet.mint(p.t.platform.config.paymentNetwork, { to: store.settlementAddress, amount: '10' });
    const issued = await p.t.platform.rewards.issueReward(await p.t.platform.payments.authenticateStore(store.apiKey), { tid: store.tid, rewardReason: `py-${randomUUID()}`, exchangeAmount: '3000' });
    const r = await claimAtPos(user, issued.rewardId, issued.tokenAmount);
    assert.deepEqual(r.app.states, ['END_REWARD'], JSON.stringify(r.app));
    assert.deepEqual(r.pos.states, ['END_REWARD'], JSON.stringify(r.pos));
    for (const end of [r.pos.end!, r.app.end!]) {
      assert.equal(end.res_code, '00', JSON.stringify(end));
      assert.equal(end.token_amount, '2');
    }
    assert.equal(await balanceOf(p, user.address), '2');

    const unknown = await claimAtPos(user, 'NOPE', '1');
    for (const end of [unknown.pos.end!, unknown.app.end!]) {
      assert.equal(end.state, 'END_REWARD');
      assert.equal(end.res_code, '01', JSON.stringify(end));
      assert.equal(end.res_message, 'Reward not issued');
    }
    assert.equal(unknown.pos.end!.target_api, 'startPayment');
    assert.equal(unknown.app.end!.target_api, 'doPayment');
  });
});
