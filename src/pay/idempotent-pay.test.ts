import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import { createFaults, type FailpointName } from '#shared/failpoints.ts';
import { addVixpToken, openPayParts, password, payNetwork, randomHash, receiver, type PayParts } from '../../test/support/pay-parts.ts';
import type { PayParameters } from './pay.ts';
import { createPayService, type IdempotentPayAnswer, type PayOutcome, type PayService, type PayServiceDeps } from './idempotent-pay.ts';

// What a client of POST /v1/ict/pay sees with an Idempotency-Key (docs/pay-api.md): the first
// request with a key pays and its answer is kept; the same key and body answer it again and move
// nothing; another body is refused; while the first runs, in progress; a key whose request never
// reached its transfer, or whose transfer provably moved nothing, runs again. And GET
// /v1/ict/pay/{transactionId}. Real SQLite store and repositories; a stand-in chain.

const minute = 60_000;
const notExecuted = 'the transfer was not executed on chain; its authorization is cancelled';

describe('REST pay with an Idempotency-Key', () => {
  let parts: PayParts;
  let service: PayService;
  const serviceWith = (extra: Partial<PayServiceDeps> = {}) =>
    createPayService({ ...parts.deps, keys: parts.keys, transfers: parts.transfers, clock: parts.clock, ...extra });
  before(async () => {
    parts = await openPayParts();
    service = serviceWith();
  });
  after(async () => { await parts.dispose(); });

  const paramsOf = (user: { id: string; address: string }, overrides: Partial<PayParameters> = {}): PayParameters => ({
    userId: user.id, tokenName: 'VIXP', amount: '3', myAddress: user.address, password, clientIp: '10.0.0.2', ...overrides,
  });
  const okOf = (answer: IdempotentPayAnswer) => {
    assert.equal(answer.kind, 'outcome', JSON.stringify(answer));
    assert.ok(answer.kind === 'outcome' && 'ok' in answer.outcome, JSON.stringify(answer));
    return answer.outcome.ok;
  };
  const codeOf = async (promise: Promise<unknown>) => {
    try { await promise; } catch (error) { return error instanceof DomainError ? error.code : `not a domain error: ${String(error)}`; }
    return 'answered';
  };
  const lastReference = () => parts.chain.calls.at(-1)!.reference!;
  /** A request that reaches its transfer and is never answered (the instance stopped), its authorization `status`. */
  const interrupted = async (params: PayParameters, key: string, status: 'reserved' | 'submitted' | 'used' | 'canceled') => {
    const calls = parts.chain.calls.length;
    parts.chain.script.push({ kind: 'interrupted', status });
    void service.pay(params, key);
    while (parts.chain.calls.length === calls) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
    return lastReference();
  };

  test('the same request twice with one key pays once; the second answer replays the first', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    const calls = parts.chain.calls.length;
    const first = await service.pay(paramsOf(user), key);
    const paid = okOf(first);
    assert.deepEqual(first, { kind: 'outcome', replayed: false, outcome: { ok: {
      transactionId: await parts.chain.txHashOf(lastReference()), status: 'confirmed', tokenName: 'VIXP', amount: '3', fromAddress: user.address, toAddress: receiver, network: payNetwork,
    } } });
    assert.match(lastReference(), /^pay:[0-9a-f-]{36}$/);
    // The password is not the request's body: a retry with another one is the same request.
    assert.deepEqual(await service.pay(paramsOf(user, { password: 'another password' }), key), { kind: 'outcome', replayed: true, outcome: { ok: paid } });
    assert.equal(parts.chain.calls.length, calls + 1);
  });

  test('a confirmed answer is replayed as it was given, whatever its transfer\'s record says later', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    const first = await service.pay(paramsOf(user), key);
    await parts.chain.update(lastReference(), 'submitted', randomHash());
    assert.deepEqual(await service.pay(paramsOf(user), key), { ...first, replayed: true });
  });

  test('without a key every request pays', async () => {
    const user = await parts.newUser();
    const calls = parts.chain.calls.length;
    const first = await service.pay(paramsOf(user));
    assert.deepEqual(first, { kind: 'outcome', replayed: false, outcome: { ok: okOf(first) } });
    await service.pay(paramsOf(user));
    assert.equal(parts.chain.calls.length, calls + 2);
    assert.equal(await codeOf(service.pay(paramsOf(user, { password: 'not the password' }))), 'request.unauthorized');
  });

  test('the same key with another amount, address or token is a mismatch and moves nothing; keys are per user', async () => {
    const user = await parts.newUser();
    const other = await parts.newUser();
    const key = randomUUID();
    okOf(await service.pay(paramsOf(user), key));
    const calls = parts.chain.calls.length;
    for (const changed of [{ amount: '4' }, { myAddress: user.address.toLowerCase() }, { tokenName: 'VIXQ' }]) {
      assert.deepEqual(await service.pay(paramsOf(user, changed), key), { kind: 'mismatch' }, JSON.stringify(changed));
    }
    assert.equal(parts.chain.calls.length, calls);
    const theirs = await service.pay(paramsOf(other, { amount: '4' }), key);
    assert.equal(theirs.kind === 'outcome' && theirs.replayed, false);
    assert.equal(okOf(theirs).fromAddress, other.address);
  });

  test('a request that never reached its transfer frees the key: the retry runs', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    assert.equal(await codeOf(service.pay(paramsOf(user, { password: 'not the password' }), key)), 'request.unauthorized');
    parts.chain.script.push({ kind: 'refused', code: 'wallet.unknown_address' });
    assert.equal(await codeOf(service.pay(paramsOf(user), key)), 'wallet.unknown_address');
    const retry = await service.pay(paramsOf(user), key);
    assert.equal(retry.kind === 'outcome' && retry.replayed, false);
    assert.equal(okOf(retry).status, 'confirmed');
  });

  test('a refused transfer that ran (insufficient balance, reverted) is kept: its retry answers the refusal again', async () => {
    const user = await parts.newUser();
    for (const code of ['wallet.insufficient_balance', 'chain.transaction_failed'] as const) {
      const key = randomUUID();
      parts.chain.script.push({ kind: 'refused', code });
      const refused: PayOutcome = { error: { code, message: `refused: ${code}` } };
      assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'outcome', replayed: false, outcome: refused });
      const calls = parts.chain.calls.length;
      assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'outcome', replayed: true, outcome: refused });
      assert.equal(parts.chain.calls.length, calls);
    }
  });

  test('a pending answer is looked up again on each retry: pending with its transaction, then confirmed, then kept', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    parts.chain.script.push({ kind: 'pending' });
    const first = okOf(await service.pay(paramsOf(user), key));
    const reference = lastReference();
    assert.equal(first.status, 'pending');
    // Sent again in another transaction (re-priced) and still not settled.
    const resent = randomHash();
    await parts.chain.update(reference, 'submitted', resent);
    assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'outcome', replayed: true, outcome: { ok: { ...first, transactionId: resent } } });
    await parts.chain.update(reference, 'used');
    const confirmed = { kind: 'outcome', replayed: true, outcome: { ok: { ...first, transactionId: resent, status: 'confirmed' } } };
    assert.deepEqual(await service.pay(paramsOf(user), key), confirmed);
    await parts.chain.update(reference, 'submitted', randomHash());
    assert.deepEqual(await service.pay(paramsOf(user), key), confirmed, 'once confirmed, answered as confirmed');
    assert.equal(parts.chain.calls.at(-1)!.reference, reference, 'nothing ran again');
  });

  test('a pending transfer that fails is answered not executed, and stays so', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    parts.chain.script.push({ kind: 'pending' });
    okOf(await service.pay(paramsOf(user), key));
    const reference = lastReference();
    await parts.chain.update(reference, 'canceled');
    const failed = { kind: 'outcome', replayed: true, outcome: { error: { code: 'chain.transaction_failed', message: notExecuted } } };
    assert.deepEqual(await service.pay(paramsOf(user), key), failed);
    await parts.chain.update(reference, 'used');
    assert.deepEqual(await service.pay(paramsOf(user), key), failed);
  });

  test('a pending answer without a transaction: its retry shows the transaction once there is one', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    parts.chain.script.push({ kind: 'pending', sent: false });
    const first = okOf(await service.pay(paramsOf(user), key));
    assert.equal(first.transactionId, '');
    assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'outcome', replayed: true, outcome: { ok: first } }, 'no record of it yet');
    const keyRecord = await parts.keys.find(`pay:${user.id}`, key);
    await parts.store.db.insertInto('authorizations').values({
      nonce: randomHash(), network: payNetwork, reference: keyRecord!.reference!, contract_address: '0x00000000000000000000000000000000000000aa',
      from_address: user.address, to_address: receiver, value: '3000000000000000000', valid_before: 1, from_block: 0, status: 'reserved', tx_hash: null,
      cancel_tx_hash: null, created_at: 1, updated_at: 1, chain_nonce: null,
    }).execute();
    assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'outcome', replayed: true, outcome: { ok: first } }, 'reserved, not sent');
    const sent = randomHash();
    await parts.chain.update(keyRecord!.reference!, 'submitted', sent);
    assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'outcome', replayed: true, outcome: { ok: { ...first, transactionId: sent } } });
  });

  test('while the first request runs, the same key is in flight, until it is stale (5 minutes)', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    // The first request stops before its transfer is recorded anywhere.
    await interrupted(paramsOf(user), key, 'reserved');
    await parts.store.db.deleteFrom('authorizations').where('reference', '=', lastReference()).execute();
    const calls = parts.chain.calls.length;
    assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'in_flight' });
    parts.now += 5 * minute - 1;
    assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'in_flight' });
    assert.equal(parts.chain.calls.length, calls);
    parts.now += 1;
    // Its transfer never started: the retry runs it, under a reference of its own.
    const firstReference = lastReference();
    const rerun = await service.pay(paramsOf(user), key);
    assert.equal(rerun.kind === 'outcome' && rerun.replayed, false);
    assert.equal(okOf(rerun).status, 'confirmed');
    assert.equal(parts.chain.calls.length, calls + 1);
    assert.match(lastReference(), /^pay:[0-9a-f-]{36}$/);
    assert.notEqual(lastReference(), firstReference);
    assert.deepEqual(await service.pay(paramsOf(user), key), { ...rerun, replayed: true });
  });

  test('a stale request whose transfer executed is answered confirmed, and stays so; a pending one is still in flight', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    const params = paramsOf(user, { myAddress: user.address.toLowerCase() });
    const reference = await interrupted(params, key, 'submitted');
    parts.now += 5 * minute;
    assert.deepEqual(await service.pay(params, key), { kind: 'in_flight' }, 'sent, not settled: it may still execute');
    await parts.chain.update(reference, 'used');
    const confirmed = { kind: 'outcome', replayed: true, outcome: { ok: {
      tokenName: 'VIXP', amount: '3', fromAddress: user.address, toAddress: receiver, network: payNetwork,
      transactionId: await parts.chain.txHashOf(reference), status: 'confirmed',
    } } };
    assert.deepEqual(await service.pay(params, key), confirmed);
    await parts.chain.update(reference, 'submitted', randomHash());
    assert.deepEqual(await service.pay(params, key), confirmed);
    assert.equal(lastReference(), reference, 'nothing ran again');
  });

  test('a stale request whose transfer provably moved nothing runs again under a new reference', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    const reference = await interrupted(paramsOf(user), key, 'canceled');
    parts.now += 5 * minute;
    const rerun = await service.pay(paramsOf(user), key);
    assert.equal(rerun.kind === 'outcome' && rerun.replayed, false);
    assert.equal(okOf(rerun).status, 'confirmed');
    assert.notEqual(lastReference(), reference);
  });

  test('two retries of a stale request at once: one runs it, the other is in flight', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    await interrupted(paramsOf(user), key, 'canceled');
    parts.now += 5 * minute;
    const calls = parts.chain.calls.length;
    const answers = await Promise.all([service.pay(paramsOf(user), key), service.pay(paramsOf(user), key)]);
    assert.deepEqual(answers.map((a) => a.kind).sort(), ['in_flight', 'outcome']);
    assert.equal(parts.chain.calls.length, calls + 1);
  });

  test('the stale window and the keys\' lifetime can be set', async () => {
    const user = await parts.newUser();
    const quick = serviceWith({ staleAfterMs: minute, keyTtlMs: 10 * minute });
    const key = randomUUID();
    const calls = parts.chain.calls.length;
    parts.chain.script.push({ kind: 'interrupted', status: 'canceled' });
    void quick.pay(paramsOf(user), key);
    while (parts.chain.calls.length === calls) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
    parts.now += minute - 1;
    assert.deepEqual(await quick.pay(paramsOf(user), key), { kind: 'in_flight' });
    parts.now += 1;
    const paid = await quick.pay(paramsOf(user), key);
    assert.equal(okOf(paid).status, 'confirmed');
    parts.now += 10 * minute - minute - 1;
    assert.deepEqual(await quick.pay(paramsOf(user), key), { ...paid, replayed: true });
    parts.now += 1;
    const again = await quick.pay(paramsOf(user), key);
    assert.equal(again.kind === 'outcome' && again.replayed, false, 'past its lifetime the key is new');
  });

  test('a key answers its first outcome for 24 hours; after that the same key pays again', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    const first = await service.pay(paramsOf(user), key);
    parts.now += 24 * 60 * minute - 1;
    assert.deepEqual(await service.pay(paramsOf(user), key), { ...first, replayed: true });
    parts.now += 1;
    const again = await service.pay(paramsOf(user), key);
    assert.equal(again.kind === 'outcome' && again.replayed, false);
    assert.notEqual(okOf(again).transactionId, okOf(first).transactionId);
  });

  test('expired keys are deleted, at most once a minute', async () => {
    const user = await parts.newUser();
    const fresh = createPayService({ ...parts.deps, keys: parts.keys, transfers: parts.transfers, clock: parts.clock });
    await fresh.pay(paramsOf(user), randomUUID());
    const scope = `test:${randomUUID()}`;
    await parts.keys.claim({ scope, key: 'k', fingerprint: 'f', reference: null, createdAt: parts.now, expiresAt: parts.now + 1 });
    parts.now += minute;
    await fresh.pay(paramsOf(user), randomUUID());
    assert.notEqual(await parts.keys.find(scope, 'k'), undefined, 'swept a minute ago: not yet');
    parts.now += 1;
    await fresh.pay(paramsOf(user), randomUUID());
    assert.equal(await parts.keys.find(scope, 'k'), undefined);
  });

  const faulty = (name: FailpointName) => serviceWith({ faults: createFaults(new Map([[name, 'error']])) });

  test('stopped after the key is claimed, before the transfer: the key is free again', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    const calls = parts.chain.calls.length;
    await assert.rejects(faulty('rest-pay.after-key-claimed').pay(paramsOf(user), key), /rest-pay.after-key-claimed/);
    assert.equal(parts.chain.calls.length, calls);
    const retry = await service.pay(paramsOf(user), key);
    assert.equal(retry.kind === 'outcome' && retry.replayed, false);
  });

  test('stopped after the transfer, before its outcome is kept: in flight, then its transfer\'s outcome', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    await assert.rejects(faulty('rest-pay.after-transfer').pay(paramsOf(user), key), /rest-pay.after-transfer/);
    const reference = lastReference();
    assert.deepEqual(await service.pay(paramsOf(user), key), { kind: 'in_flight' });
    parts.now += 5 * minute;
    assert.equal(okOf(await service.pay(paramsOf(user), key)).transactionId, await parts.chain.txHashOf(reference));
    assert.equal(lastReference(), reference);
  });

  test('stopped after its outcome is kept, before the answer: the retry answers it', async () => {
    const user = await parts.newUser();
    const key = randomUUID();
    await assert.rejects(faulty('rest-pay.before-answer').pay(paramsOf(user), key), /rest-pay.before-answer/);
    const reference = lastReference();
    const retry = await service.pay(paramsOf(user), key);
    assert.equal(retry.kind === 'outcome' && retry.replayed, true);
    assert.equal(okOf(retry).transactionId, await parts.chain.txHashOf(reference));
  });
});

describe('GET /v1/ict/pay/{transactionId}', () => {
  let parts: PayParts;
  let service: PayService;
  before(async () => {
    parts = await openPayParts();
    service = createPayService({ ...parts.deps, keys: parts.keys, transfers: parts.transfers, clock: parts.clock });
  });
  after(async () => { await parts.dispose(); });

  const paramsOf = (user: { id: string; address: string }): PayParameters => ({
    userId: user.id, tokenName: 'VIXP', amount: '2.5', myAddress: user.address, password, clientIp: '10.0.0.3',
  });
  const codeOf = async (promise: Promise<unknown>) => {
    try { await promise; } catch (error) { return error instanceof DomainError ? error.code : `not a domain error: ${String(error)}`; }
    return 'answered';
  };
  const paid = async (user: { id: string; address: string }) => {
    const answer = await service.pay(paramsOf(user));
    assert.ok(answer.kind === 'outcome' && 'ok' in answer.outcome);
    return answer.outcome.ok;
  };

  test('the user\'s own payment: the pay answer\'s fields, its status as the transfer\'s; VIXP when the token has no row', async () => {
    const user = await parts.newUser();
    const payment = await paid(user);
    const { reference } = parts.chain.calls.at(-1)!;
    assert.deepEqual(await service.status(user.id, payment.transactionId.toUpperCase().replace('0X', '0x')), payment);
    await parts.chain.update(reference!, 'submitted');
    assert.deepEqual(await service.status(user.id, payment.transactionId), { ...payment, status: 'pending' });
    await parts.chain.update(reference!, 'expired');
    assert.deepEqual(await service.status(user.id, payment.transactionId), {
      ...payment, status: 'failed', failureCode: '502', failureMessage: 'the transfer was not executed on chain and can no longer be',
    });
  });

  test('a payment in an allowed token (USDC, not deployed through the platform): its symbol and its 6 decimals, from the allow-list', async () => {
    const user = await parts.newUser();
    const answer = await service.pay({ ...paramsOf(user), tokenName: 'USDC', amount: '1.234567' });
    assert.ok(answer.kind === 'outcome' && 'ok' in answer.outcome);
    const status = await service.status(user.id, answer.outcome.ok.transactionId);
    assert.deepEqual([status.tokenName, status.amount, status.status], ['USDC', '1.234567', 'confirmed']);
  });

  test('another user\'s payment, a token-API transfer of the user, an unknown or malformed transaction: not found', async () => {
    const user = await parts.newUser();
    const other = await parts.newUser();
    const walletless = await parts.newUser({ wallet: false });
    const payment = await paid(user);
    assert.equal(await codeOf(service.status(other.id, payment.transactionId)), 'request.not_found');
    assert.equal(await codeOf(service.status(walletless.id, payment.transactionId)), 'request.not_found');
    assert.equal(await codeOf(service.status('nobody', payment.transactionId)), 'request.not_found');
    assert.equal(await codeOf(service.status(user.id, randomHash())), 'request.not_found');
    assert.equal(await codeOf(service.status(user.id, 'nonsense')), 'request.not_found');
    const transferTx = randomHash();
    await parts.store.db.insertInto('authorizations').values({
      nonce: randomHash(), network: payNetwork, reference: `transfer:${randomUUID()}`, contract_address: '0x00000000000000000000000000000000000000aa',
      from_address: user.address, to_address: receiver, value: '1', valid_before: 1, from_block: 0, status: 'used', tx_hash: transferTx,
      cancel_tx_hash: null, created_at: 1, updated_at: 1, chain_nonce: null,
    }).execute();
    assert.equal(await codeOf(service.status(user.id, transferTx)), 'request.not_found');
    await assert.rejects(service.status(user.id, transferTx), { message: 'no payment of the signed-in user with this transactionId' });
  });

  test('in a settlement batch with others\' transfers, the user\'s own payment', async () => {
    const user = await parts.newUser();
    const payment = await paid(user);
    await parts.store.db.insertInto('authorizations').values({
      nonce: randomHash(), network: payNetwork, reference: `pay:${randomUUID()}`, contract_address: '0x00000000000000000000000000000000000000aa',
      from_address: (await parts.newUser()).address, to_address: receiver, value: '1', valid_before: 1, from_block: 0, status: 'used',
      tx_hash: payment.transactionId, cancel_tx_hash: null, created_at: 0, updated_at: 1, chain_nonce: null,
    }).execute();
    assert.deepEqual(await service.status(user.id, payment.transactionId), payment);
  });

  test('with the token\'s row: its symbol and decimals', async () => {
    await addVixpToken(parts, 6);
    const user = await parts.newUser();
    const payment = await paid(user);
    const status = await service.status(user.id, payment.transactionId);
    assert.deepEqual([status.tokenName, status.amount], ['VIXP', '2500000000000']);
  });
});
