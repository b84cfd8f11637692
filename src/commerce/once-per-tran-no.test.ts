import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DomainError, type DomainErrorCode } from '#shared/errors.ts';
import { openStore, type Store } from '../store/db.ts';
import { createIdempotencyRepository } from '../store/idempotency-repository.ts';
import { oncePerTranNo, type PosCallKey, type TranNoDeps } from './once-per-tran-no.ts';

// What a POS sees of a tran_no (docs/payments.md): a call runs once per tran_no; a refusal frees it
// for another try; an outcome nobody knows yet keeps it taken, so a retry never moves tokens twice.
// On a real SQLite store (the repository's claim is what makes it hold across instances).

describe('a POS call runs once per tran_no', () => {
  let store: Store;
  let dataDir: string;
  let now = 1_800_000_000_000;
  let deps: TranNoDeps;
  let sequence = 0;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-tran-no-'));
    store = await openStore({ dataDir });
    deps = { idempotency: createIdempotencyRepository(store.db), clock: () => now, staleOperationMs: 60_000 };
  });
  after(async () => { await store.close(); rmSync(dataDir, { recursive: true, force: true }); });

  const keyOf = (overrides: Partial<PosCallKey<string>> = {}): PosCallKey<string> => ({
    tid: 'T1', call: 'cancelPayment', tranNo: `C${++sequence}`, request: { amount: '100', payment: 'P1' }, ...overrides,
  });
  /** Runs the call, counting how often its body runs. */
  const counted = () => {
    let runs = 0;
    return { get runs() { return runs; }, body: (result: () => Promise<string>) => () => { runs += 1; return result(); } };
  };
  const codeOf = async (promise: Promise<unknown>) => {
    try { await promise; } catch (error) { return error instanceof DomainError ? error.code : `not a domain error: ${String(error)}`; }
    return 'answered';
  };
  /** The refusal as a POS reads it: its code, message and the field it names. */
  const refusalOf = async (promise: Promise<unknown>) => {
    try { await promise; } catch (error) { if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details }; throw error; }
    return undefined;
  };

  test('a retry after success answers the first result and does not run again; other parameters are 11', async () => {
    const key = keyOf();
    const calls = counted();
    assert.equal(await oncePerTranNo(deps, key, calls.body(async () => 'refund-1')), 'refund-1');
    assert.equal(await oncePerTranNo(deps, key, calls.body(async () => 'refund-2')), 'refund-1');
    assert.equal(calls.runs, 1);
    assert.deepEqual(await refusalOf(oncePerTranNo(deps, { ...key, request: { amount: '101', payment: 'P1' } }, calls.body(async () => 'x'))),
      { code: 'request.invalid', message: `tran_no ${key.tranNo} was already used for another cancelPayment request`, details: 'tran_no' });
    assert.equal(calls.runs, 1);
  });

  test('the same request in another key order, or a parameter absent instead of empty, is the same request', async () => {
    const key = keyOf({ request: { payment: 'P1', amount: '100', note: undefined } });
    const calls = counted();
    assert.equal(await oncePerTranNo(deps, key, calls.body(async () => 'first')), 'first');
    assert.equal(await oncePerTranNo(deps, { ...key, request: { note: '', amount: '100', payment: 'P1' } }, calls.body(async () => 'second')), 'first');
    assert.equal(calls.runs, 1);
  });

  test('a tran_no is its store\'s and its call\'s: the same one under another tid or another call runs', async () => {
    const key = keyOf();
    const calls = counted();
    await oncePerTranNo(deps, key, calls.body(async () => 'cancel at T1'));
    assert.equal(await oncePerTranNo(deps, { ...key, tid: 'T2' }, calls.body(async () => 'cancel at T2')), 'cancel at T2');
    assert.equal(await oncePerTranNo(deps, { ...key, call: 'cancelReward' }, calls.body(async () => 'reward cancel at T1')), 'reward cancel at T1');
    assert.equal(calls.runs, 3);
  });

  test('a refusal frees the tran_no: the retry runs', async () => {
    const key = keyOf();
    const calls = counted();
    assert.equal(await codeOf(oncePerTranNo(deps, key, calls.body(async () => { throw new DomainError('wallet.insufficient_balance', 'no'); }))), 'wallet.insufficient_balance');
    assert.equal(await oncePerTranNo(deps, key, calls.body(async () => 'refund')), 'refund');
    assert.equal(calls.runs, 2);
  });

  const open: Array<[string, () => unknown]> = [
    ['the database lost mid-way (store.unavailable)', () => new DomainError('store.unavailable', 'the database does not answer')],
    ['a transfer sent and not settled (chain.outcome_pending)', () => new DomainError('chain.outcome_pending', 'sent')],
    ['an internal failure', () => new DomainError('internal', 'boom')],
    ['an error that is no domain error', () => new TypeError('boom')],
  ];
  for (const [what, error] of open) {
    test(`${what} keeps the tran_no taken: a retry answers 13 and moves nothing, also after the stale window`, async () => {
      const key = keyOf();
      const calls = counted();
      await assert.rejects(oncePerTranNo(deps, key, calls.body(async () => { throw error(); })));
      assert.deepEqual(await refusalOf(oncePerTranNo(deps, key, calls.body(async () => 'second'))),
        { code: 'payment.in_progress', message: `tran_no ${key.tranNo} is being processed`, details: 'tran_no' });
      now += 61_000;
      // Past the stale window, a call that moves tokens is settled from its record, never run again.
      assert.equal(await codeOf(oncePerTranNo(deps, key, calls.body(async () => 'third'))), 'payment.in_progress');
      assert.equal(calls.runs, 1);
    });
  }

  test('an interrupted call: within the stale window 13; after it, its settled outcome, or a rerun only if it moves no tokens', async () => {
    const settledKey = keyOf({ reference: 'R1', settleStale: async (reference) => ({ outcome: `settled ${reference}` }) });
    const rerunKey = keyOf({ call: 'issueReward', rerunWhenStale: true });
    const calls = counted();
    const interrupted = (key: PosCallKey<string>) => new Promise<void>((running) => {
      void oncePerTranNo(deps, key, calls.body(() => { running(); return new Promise<string>(() => {}); }));
    });
    await Promise.all([interrupted(settledKey), interrupted(rerunKey)]);
    now += 60_000;
    assert.equal(await codeOf(oncePerTranNo(deps, settledKey, calls.body(async () => 'again'))), 'payment.in_progress', 'at the window\'s edge it still runs');
    assert.equal(await codeOf(oncePerTranNo(deps, rerunKey, calls.body(async () => 'again'))), 'payment.in_progress');
    now += 1;
    assert.equal(await oncePerTranNo(deps, settledKey, calls.body(async () => 'again')), 'settled R1');
    assert.equal(await oncePerTranNo(deps, settledKey, calls.body(async () => 'again')), 'settled R1', 'the settled outcome is kept');
    assert.equal(await oncePerTranNo(deps, rerunKey, calls.body(async () => 'rerun')), 'rerun');
    assert.equal(calls.runs, 3);
  });

  test('no tran_no: the call is not keyed; a tran_no over 128 characters is 11', async () => {
    const calls = counted();
    for (const tranNo of [undefined, '']) {
      await oncePerTranNo(deps, keyOf({ tranNo }), calls.body(async () => 'a'));
      await oncePerTranNo(deps, keyOf({ tranNo }), calls.body(async () => 'a'));
    }
    assert.equal(calls.runs, 4);
    assert.equal(await oncePerTranNo(deps, keyOf({ tranNo: 'x'.repeat(128) }), calls.body(async () => 'b')), 'b');
    assert.deepEqual(await refusalOf(oncePerTranNo(deps, keyOf({ tranNo: 'x'.repeat(129) }), calls.body(async () => 'c'))),
      { code: 'request.invalid' satisfies DomainErrorCode, message: 'tran_no is at most 128 characters', details: 'tran_no' });
    assert.equal(calls.runs, 5);
  });

  test('a tran_no answers its first outcome for 30 days, then runs again', async () => {
    const key = keyOf();
    const calls = counted();
    await oncePerTranNo(deps, key, calls.body(async () => 'first'));
    now += 30 * 86_400_000 - 1;
    assert.equal(await oncePerTranNo(deps, key, calls.body(async () => 'second')), 'first');
    now += 1;
    assert.equal(await oncePerTranNo(deps, key, calls.body(async () => 'second')), 'second');
    assert.equal(calls.runs, 2);
  });

  test('a call that names no record of its attempt is rerun when stale, never settled by a record of nothing', async () => {
    const settledWith: string[] = [];
    const key = keyOf({ call: 'issueReward', rerunWhenStale: true, settleStale: async (reference) => { settledWith.push(reference); return 'pending'; } });
    const calls = counted();
    /** Starts an attempt that is interrupted mid-run (it never ends); resolves once it runs. */
    const interrupted = () => new Promise<void>((running) => {
      void oncePerTranNo(deps, key, calls.body(() => { running(); return new Promise<string>(() => {}); }));
    });
    await interrupted();
    now += 60_001;
    await interrupted();
    now += 60_001;
    assert.equal(await oncePerTranNo(deps, key, calls.body(async () => 'issued')), 'issued');
    assert.deepEqual(settledWith, []);
    assert.equal(calls.runs, 3);
  });
});

test('expired tran_nos are swept at most once a minute per store', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-tran-no-sweep-'));
  const store = await openStore({ dataDir });
  try {
    const repository = createIdempotencyRepository(store.db);
    const sweeps: number[] = [];
    let now = 1_800_000_000_000;
    const idempotency = { ...repository, sweepExpired: async (at: number) => { sweeps.push(at - 1_800_000_000_000); return repository.sweepExpired(at); } };
    const deps: TranNoDeps = { idempotency, clock: () => now, staleOperationMs: 60_000 };
    const call = (tranNo: string) => oncePerTranNo(deps, { tid: 'T1', call: 'cancelPayment', tranNo, request: {} }, async () => tranNo);
    await call('A');
    for (const step of [1, 59_998]) { now += step; await call(`B${step}`); }
    assert.deepEqual(sweeps, [0], 'within the minute: no second sweep');
    now += 1;
    await call('C');
    assert.deepEqual(sweeps, [0], 'a minute to the millisecond: not yet');
    now += 1;
    await call('D');
    assert.deepEqual(sweeps, [0, 60_001]);
    now = 1_800_000_000_000 + 30 * 86_400_000 + 30_000;
    await call('E');
    assert.equal(await repository.find('pos:T1:cancelPayment', 'A'), undefined, 'A expired 30 days after its call: swept');
    assert.ok(await repository.find('pos:T1:cancelPayment', 'D'), 'D is not expired yet');
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
