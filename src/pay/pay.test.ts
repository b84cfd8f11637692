import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getAddress } from 'viem';
import { DomainError } from '#shared/errors.ts';
import { openPayParts, password, payNetwork, receiver, usdcContract, usdtContract, type PayParts } from '../../test/support/pay-parts.ts';
import { pay, type PayParameters } from './pay.ts';

// What a REST pay request (POST /v1/ict/pay, docs/pay-api.md) answers without an Idempotency-Key: a
// VIXP transfer from the signed-in user's own wallet to the platform's receiving account, after the
// password and the failed-password throttle. Real store, users and throttle; a stand-in chain.

describe('REST pay', () => {
  let parts: PayParts;
  before(async () => { parts = await openPayParts({ maxFailuresPerId: 2 }); });
  after(async () => { await parts.dispose(); });

  const paramsOf = (user: { id: string; address: string }, overrides: Partial<PayParameters> = {}): PayParameters => ({
    userId: user.id, tokenName: 'VIXP', amount: '2.5', myAddress: user.address, password, clientIp: '10.0.0.1', ...overrides,
  });
  const refusalOf = async (promise: Promise<unknown>) => {
    try { await promise; } catch (error) { if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details }; throw error; }
    return undefined;
  };

  test('a confirmed payment: its transaction and the transfer from the user\'s wallet to the receiving account', async () => {
    const user = await parts.newUser();
    const answer = await pay(parts.deps, paramsOf(user));
    const sent = parts.chain.calls.at(-1)!;
    assert.deepEqual(answer, {
      transactionId: await parts.chain.txHashOf(sent.reference!), status: 'confirmed', tokenName: 'VIXP', amount: '2.5',
      fromAddress: user.address, toAddress: receiver, network: payNetwork,
    });
    assert.deepEqual({ ...sent, reference: undefined }, { fromAddress: user.address, toAddress: receiver, amount: '2.5', reference: undefined });
    assert.match(sent.reference!, /^pay:[0-9a-f-]{36}$/, 'a fresh reference of its own');
  });

  test('each request without a reference is a transfer of its own; a given reference is the transfer\'s', async () => {
    const user = await parts.newUser();
    await pay(parts.deps, paramsOf(user));
    await pay(parts.deps, paramsOf(user));
    const [first, second] = parts.chain.calls.slice(-2);
    assert.notEqual(first!.reference, second!.reference);
    await pay(parts.deps, paramsOf(user, { reference: 'pay:given' }));
    assert.equal(parts.chain.calls.at(-1)!.reference, 'pay:given');
  });

  test('myAddress in lower case is the same wallet: the answer names it checksummed', async () => {
    const user = await parts.newUser();
    const answer = await pay(parts.deps, paramsOf(user, { myAddress: user.address.toLowerCase() }));
    assert.equal(answer.fromAddress, user.address);
    assert.equal(parts.chain.calls.at(-1)!.fromAddress, user.address);
  });

  test('a transfer sent and not settled is pending with its transaction; one not sent yet is pending without', async () => {
    const user = await parts.newUser();
    parts.chain.script.push({ kind: 'pending' }, { kind: 'pending', sent: false });
    const sent = await pay(parts.deps, paramsOf(user));
    assert.equal(sent.status, 'pending');
    assert.equal(sent.transactionId, await parts.chain.txHashOf(parts.chain.calls.at(-1)!.reference!));
    assert.match(sent.transactionId, /^0x[0-9a-f]{64}$/);
    const notSent = await pay(parts.deps, paramsOf(user));
    assert.deepEqual(notSent, { transactionId: '', status: 'pending', tokenName: 'VIXP', amount: '2.5', fromAddress: user.address, toAddress: receiver, network: payNetwork });
  });

  test('a refused transfer is answered with its refusal', async () => {
    const user = await parts.newUser();
    parts.chain.script.push({ kind: 'refused', code: 'wallet.insufficient_balance' });
    assert.deepEqual(await refusalOf(pay(parts.deps, paramsOf(user))), { code: 'wallet.insufficient_balance', message: 'refused: wallet.insufficient_balance', details: undefined });
  });

  test('VIXP or an allowed token by its symbol: another is refused before anything else, its name cut to 20 characters', async () => {
    const user = await parts.newUser();
    const calls = parts.chain.calls.length;
    const unknown = (name: string) => `tokenName "${name}" is not available on ethereum; use VIXP or the symbol of a token the operator allowed`;
    assert.deepEqual(await refusalOf(pay(parts.deps, paramsOf(user, { tokenName: 'MINE' }))), { code: 'wallet.unknown_token', message: unknown('MINE'), details: undefined });
    assert.deepEqual(await refusalOf(pay(parts.deps, paramsOf(user, { tokenName: 'A'.repeat(25), password: 'wrong password' }))),
      { code: 'wallet.unknown_token', message: unknown('A'.repeat(20)), details: undefined });
    assert.equal(parts.chain.calls.length, calls);
  });

  test('in an allowed token (USDC by EIP-3009, USDT on the account path): the transfer names its contract, the answer its symbol; VIXP\'s names none, as before', async () => {
    const user = await parts.newUser();
    const answer = await pay(parts.deps, paramsOf(user, { tokenName: 'USDC', amount: '1.234567' }));
    assert.deepEqual([answer.tokenName, answer.amount, answer.status], ['USDC', '1.234567', 'confirmed']);
    const sent = parts.chain.calls.at(-1)!;
    assert.deepEqual([sent.contractAddress, sent.amount], [usdcContract, '1.234567']);
    assert.equal((await pay(parts.deps, paramsOf(user, { tokenName: 'USDT', amount: '3' }))).tokenName, 'USDT');
    assert.equal(parts.chain.calls.at(-1)!.contractAddress, usdtContract);
    await pay(parts.deps, paramsOf(user));
    assert.equal(parts.chain.calls.at(-1)!.contractAddress, undefined);
  });

  test('myAddress that is not an address, or has a wrong checksum, is refused', async () => {
    const user = await parts.newUser();
    const invalid = { code: 'request.invalid', message: 'myAddress is not a valid address', details: 'myAddress' };
    assert.deepEqual(await refusalOf(pay(parts.deps, paramsOf(user, { myAddress: 'nonsense' }))), invalid);
    // The checksum's case of one letter flipped.
    const hex = user.address.slice(2);
    const at = [...hex].findIndex((c) => /[a-f]/i.test(c));
    const c = hex[at]!;
    const flipped = `0x${hex.slice(0, at)}${c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()}${hex.slice(at + 1)}`;
    assert.notEqual(flipped, user.address);
    assert.equal(getAddress(flipped.toLowerCase()), user.address);
    assert.deepEqual(await refusalOf(pay(parts.deps, paramsOf(user, { myAddress: flipped }))), invalid);
  });

  test('a wrong password is refused; another user\'s wallet, or none, is unauthorized; nothing is transferred', async () => {
    const user = await parts.newUser();
    const other = await parts.newUser();
    const walletless = await parts.newUser({ wallet: false });
    const calls = parts.chain.calls.length;
    assert.equal((await refusalOf(pay(parts.deps, paramsOf(user, { password: 'not the password' }))))?.code, 'request.unauthorized');
    const notYours = { code: 'request.unauthorized', message: 'myAddress is not the wallet address of the signed-in user', details: undefined };
    assert.deepEqual(await refusalOf(pay(parts.deps, paramsOf(user, { myAddress: other.address }))), notYours);
    assert.deepEqual(await refusalOf(pay(parts.deps, paramsOf(walletless, { myAddress: other.address }))), notYours);
    assert.equal(parts.chain.calls.length, calls);
  });

  test('failed passwords are throttled per user: then even the right one is refused; right ones never count', async () => {
    const user = await parts.newUser();
    // More successful payments than the throttle allows failures: each one clears its attempt.
    for (let i = 0; i < 3; i++) assert.equal((await pay(parts.deps, paramsOf(user))).status, 'confirmed');
    const calls = parts.chain.calls.length;
    for (let i = 0; i < 2; i++) assert.equal((await refusalOf(pay(parts.deps, paramsOf(user, { password: 'not the password' }))))?.code, 'request.unauthorized');
    assert.equal((await refusalOf(pay(parts.deps, paramsOf(user))))?.code, 'auth.rate_limited');
    assert.equal(parts.chain.calls.length, calls);
  });
});
