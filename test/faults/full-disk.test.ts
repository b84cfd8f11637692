import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { rpcOver } from '../support/server-process.ts';
import { openSession, testStore } from '../support/payments.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, balanceRaw, fundedAccount, grpcClient, rigUser, serverLog, signedTransfer, startFaultRig, units, type FaultRig, type RigUser } from './rig.ts';

// The platform's DATA_DIR (its SQLite file) on a small tmpfs of this test's own, filled to the last
// byte by a ballast file in the middle of a burst of token-API transfers and gRPC payments, then
// freed. A full disk never answers 500: a transfer that did not run answers 507 and its temp key
// stays usable, so its retry with the same request executes it once; a payment's retry gets a
// definite answer once there is room again; /readyz answers 503 naming the disk while it is full and
// 200 after; the process never exits; every transfer answered 200 is on chain exactly once.
const onSqlite = testStore() === 'sqlite';
const mount = mkdtempSync(path.join(tmpdir(), 'vixpay-full-disk-'));
let mounted = false;
let refused = '';
try {
  if (onSqlite) execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,mode=0700', 'tmpfs', mount], { stdio: 'pipe' });
  mounted = onSqlite;
} catch (error) {
  refused = (error as Error).message.split('\n')[0] ?? '';
}
if (!mounted) rmSync(mount, { recursive: true, force: true });
const skip = !onSqlite ? 'SQLite only: the full disk is SQLite\'s DATA_DIR'
  : mounted ? false : `mounting a tmpfs is refused here (needs root or CAP_SYS_ADMIN): ${refused}`;

let rig: FaultRig;
let store: { tid: string; apiKey: string; settlementAddress: string };
const ballast = path.join(mount, 'ballast');

before(async () => {
  if (!mounted) return;
  // No chain checkpoint within the test: the anvil's state file shares DATA_DIR (a checkpoint that
  // failed on the full disk would be retried later and is not what this test is about).
  rig = await startFaultRig({ DATA_DIR: mount, CHAIN_CHECKPOINT_SECONDS: '86400' });
  store = await rig.operator.payments.addStore({ tid: `T-${randomUUID().slice(0, 8)}`, name: 'Full Disk Cafe' });
  await rig.operator.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => {
  try {
    rmSync(ballast, { force: true });
    await rig?.stop();
  } finally {
    if (mounted) {
      execFileSync('umount', ['-l', mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  }
});

/** Fills the tmpfs to its last byte: 1 MiB chunks, then smaller ones, until each is refused. */
function fillDisk(): void {
  const fd = openSync(ballast, 'w');
  try {
    for (let chunk = 1 << 20; chunk >= 512; chunk >>= 1) {
      const bytes = Buffer.alloc(chunk, 1);
      for (;;) {
        try {
          writeSync(fd, bytes);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

async function readyz(): Promise<{ status: number; checks: Record<string, { status: string; error?: string }> }> {
  const response = await fetch(`${rig.server.baseUrl}/readyz`);
  return { status: response.status, checks: ((await response.json()) as { checks: Record<string, { status: string; error?: string }> }).checks };
}

/** A JSON-RPC transfer's answer: its resultCode, or the protocol error's code, or `lost`. */
async function transferAnswer(request: Awaited<ReturnType<typeof signedTransfer>>): Promise<{ code: string; body: unknown }> {
  try {
    const result = await rpcOver(rig.server.baseUrl, '/token', 'transfer', request);
    return { code: String(result.resultCode), body: result };
  } catch (error) {
    const message = (error as Error).message;
    return { code: /: (-?\d+) /.exec(message)?.[1] ?? 'lost', body: message };
  }
}

function nextOrEnd(session: ReturnType<typeof openSession>, timeoutMs: number): Promise<any> {
  return Promise.race([
    session.next(timeoutMs),
    session.closed.then((status) => { throw new Error(`the stream ended ${status.code} ${status.details}`); }),
  ]);
}

/**
 * A gRPC payment of 5 VIXP (5000 KRW) under `tranNo`, the app signing its transfer with a temp key
 * taken beforehand (`transfer`, made while there was room); answers the POS's final res_code. A retry of
 * an approved tran_no answers END_PAY at once, without asking the app.
 */
async function payment(user: RigUser, tranNo: string, transfer?: Awaited<ReturnType<typeof signedTransfer>>): Promise<string> {
  const client = grpcClient(rig);
  try {
    const uuid = randomUUID();
    const app = openSession(client, 'DoPayment', user.token);
    const pos = openSession(client, 'StartPayment', store.apiKey);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    pos.send({
      state: 'START_PAY', tid: store.tid, tran_no: tranNo, exchange_amount: '5000', user_uuid: uuid, token_symbol: 'VIXP',
      user_address: user.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
    });
    const posOutcome = async () => {
      for (;;) {
        const message = await nextOrEnd(pos, 60_000);
        if (message.content.state !== 'REQUEST_TRANSFER') return String(message.common.res_code);
      }
    };
    // The POS hears REQUEST_TRANSFER too (the app was asked), then END_PAY or a failure. The app hears REQUEST_TRANSFER, or the outcome (a failure, a retried tran_no's approval), or its stream ends.
    const request = await app.next(30_000).catch(() => undefined);
    if (request?.content.state !== 'REQUEST_TRANSFER') return await posOutcome();
    const signed = transfer ?? await signedTransfer(rig, user, request.content.settlement_address, request.content.token_amount);
    assert.equal(signed.toAddress, request.content.settlement_address);
    app.send({ state: 'TRANSFER', tran_no: tranNo, transfer_key: signed.tempKey, hash_key: signed.hashKey, transfer_signature: signed.signature });
    return await posOutcome();
  } finally {
    client.close();
  }
}

test('a full disk mid-burst: no 500, temp keys of transfers that did not run stay usable, /readyz 503 naming the disk, every retry definite once freed', { skip, timeout: 180_000 }, async (t) => {
  const count = 32;
  const payers = 6;
  const senders = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 10)));
  const receivers = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 0)));
  const users = await Promise.all(Array.from({ length: payers }, () => rigUser(rig, 20)));
  await waitFor(async () => (await balanceRaw(rig, users.at(-1)!.address)) === units(20), { timeoutMs: 30_000, message: 'the mints are on chain' });
  const signed = await Promise.all(senders.map((s, i) => signedTransfer(rig, s, receivers[i]!.address, '3')));
  const paySigned = await Promise.all(users.map((u) => signedTransfer(rig, u, store.settlementAddress, '5')));
  const storeBefore = await balanceRaw(rig, store.settlementAddress);
  assert.equal((await readyz()).status, 200, 'ready before the disk fills');
  // The WAL emptied into the database file (as a checkpoint leaves it): the burst's writes must grow it.
  await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(rig.operator.store.db);

  // The burst over 2 s; the disk is filled 0.8 s into it and stays full until /readyz has said so.
  const tranNos = users.map(() => `D${randomUUID().slice(0, 8)}`);
  const transfers = signed.map(async (request, i) => {
    await sleep((i * 2000) / count);
    return transferAnswer(request);
  });
  const payments = users.map(async (user, i) => {
    await sleep((i * 2000) / payers);
    return payment(user, tranNos[i]!, paySigned[i]);
  });
  await sleep(800);
  fillDisk();
  const whileFull = await waitFor(async () => {
    const ready = await readyz();
    return ready.status === 503 && ready.checks.disk?.status === 'down' ? ready : undefined;
  }, { timeoutMs: 10_000, intervalMs: 100, message: '/readyz answers 503 with the disk down while it is full' });
  assert.match(whileFull.checks.disk?.error ?? '', /full|space/i, JSON.stringify(whileFull.checks));
  // Keep it full until the whole burst has been answered.
  const answered = await Promise.all(transfers);
  const paid = await Promise.all(payments);
  rmSync(ballast);
  await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 15_000, intervalMs: 100, message: '/readyz is ready again once the disk has room' });
  assert.ok(rig.server.child.exitCode === null && rig.server.child.signalCode === null, `the server never exited:\n${serverLog(rig)}`);

  // Every answer is one the documents list: 200, 202 (sent, not settled yet) or 507 (nothing done).
  const documented = new Set(['200', '202', '507']);
  for (const [i, answer] of answered.entries()) {
    assert.ok(documented.has(answer.code), `transfer ${i} answered a documented code, never 500 (${answer.code}): ${JSON.stringify(answer.body)}\n${serverLog(rig)}`);
  }
  for (const [i, code] of paid.entries()) {
    assert.ok(['00', '10', '23'].includes(code), `payment ${i} answered a documented res_code (${code})`);
  }
  const tally = (codes: string[]) => Object.entries(Object.groupBy(codes, (c) => c)).map(([c, list]) => `${c}×${list?.length}`).join(' ');
  t.diagnostic(`transfers: ${tally(answered.map((a) => a.code))}; payments: ${tally(paid)}`);
  const full = answered.filter((a) => a.code === '507').length + paid.filter((c) => c === '23').length;
  assert.ok(full > 0, `the full disk refused something (transfers ${answered.map((a) => a.code).join(',')}, payments ${paid.join(',')})`);

  // With room again: a transfer answered 507 runs with the same request (its temp key unspent) and
  // executes once; one answered 202 has its transaction settled by the chain.
  for (const [i, answer] of answered.entries()) {
    if (answer.code !== '507') continue;
    const retry = await transferAnswer(signed[i]!);
    assert.equal(retry.code, '200', `transfer ${i}'s retry with the same temp key executes: ${JSON.stringify(retry.body)}`);
  }
  // A payment not approved: its retry under the same tran_no answers a definite outcome (approved,
  // or a new run that is approved) within the authorization window, never 13 for minutes.
  for (const [i, code] of paid.entries()) {
    if (code === '00') continue;
    const outcome = await waitFor(async () => {
      const retry = await payment(users[i]!, tranNos[i]!);
      return retry === '13' ? undefined : retry;
    }, { timeoutMs: 40_000, intervalMs: 1000, message: `payment ${i}'s retry answers something else than in progress` });
    assert.equal(outcome, '00', `payment ${i}'s retry is approved`);
  }

  await assertInvariants(rig);
  for (const [i, answer] of answered.entries()) {
    const received = await balanceRaw(rig, receivers[i]!.address);
    if (answer.code === '202') assert.ok(received === 0n || received === units(3), `receiver ${i} got ${received}`);
    else assert.equal(received, units(3), `transfer ${i} (answered ${answer.code}, then retried) is on chain exactly once`);
    assert.equal(await balanceRaw(rig, senders[i]!.address), units(10) - received, `sender ${i} paid what receiver ${i} got`);
  }
  for (const [i, user] of users.entries()) {
    assert.equal(await balanceRaw(rig, user.address), units(15), `payer ${i} paid once`);
  }
  assert.equal(await balanceRaw(rig, store.settlementAddress) - storeBefore, units(5 * payers), 'the store received each payment once');
});
