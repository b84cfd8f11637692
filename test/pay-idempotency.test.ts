import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { createIdempotencyRepository } from '../src/store/idempotency-repository.ts';
import { waitFor } from './support/wait-for.ts';

let t: TestPlatform;
const password = 'correct horse battery';

const balance = async (address: string) => (await t.platform.wallet.getBalance('ethereum', { address })).balance;

/** A user with a custodial wallet holding `tokens` VIXP, and a JWT. */
async function newUser(tokens: string) {
  const wallet = await t.platform.wallet.createAddress();
  const userId = `user-${randomUUID()}`;
  await t.platform.identity.users.createUser({ id: userId, password, name: 'Payer', walletAddress: wallet.address });
  if (tokens !== '0') await t.platform.wallet.mint('ethereum', { to: wallet.address, amount: tokens });
  const { token } = await t.platform.identity.jwt.issueAccessToken(userId);
  return { ...wallet, userId, token };
}

async function post(token: string, body: object, key?: string) {
  const response = await t.app.inject({
    method: 'POST', url: '/v1/ict/pay', payload: body,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(key !== undefined && { 'idempotency-key': key }) },
  });
  return { status: response.statusCode, body: response.json() as any, replayed: response.headers['idempotent-replayed'] === 'true' };
}

async function lookup(token: string, transactionId: string) {
  const response = await t.app.inject({ method: 'GET', url: `/v1/ict/pay/${transactionId}`, headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, body: response.json() as any };
}

/** How many transfers the receiving account got from `from` on chain. */
async function transfersOnChain(from: string): Promise<number> {
  const { client } = t.platform.chains.ethereum;
  const logs = await client.getContractEvents({
    address: t.platform.contracts.ethereum.vixpToken,
    abi: [{ type: 'event', name: 'Transfer', inputs: [{ name: 'from', type: 'address', indexed: true }, { name: 'to', type: 'address', indexed: true }, { name: 'value', type: 'uint256', indexed: false }] }],
    eventName: 'Transfer', args: { from: from as `0x${string}` }, fromBlock: 0n,
  });
  return logs.length;
}

before(async () => { t = await startTestPlatform(); });
after(async () => { await t?.stop(); });

describe('POST /v1/ict/pay with Idempotency-Key', () => {
  test('the same request sent twice with one key pays once; the second answer replays the first', async () => {
    const user = await newUser('20');
    const body = { tokenName: 'VIXP', amount: '3', myAddress: user.address, password };
    const key = randomUUID();
    const first = await post(user.token, body, key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.replayed, false);
    const second = await post(user.token, body, key);
    assert.equal(second.status, 200);
    assert.equal(second.replayed, true);
    assert.deepEqual(second.body, first.body);
    assert.equal(await balance(user.address), '17');
    assert.equal(await transfersOnChain(user.address), 1);
    // Without a key, each request is a payment of its own (as before).
    await post(user.token, body);
    assert.equal(await balance(user.address), '14');
  });

  test('the same key with another body is 422 and moves nothing; keys are per user', async () => {
    const user = await newUser('20');
    const other = await newUser('20');
    const key = randomUUID();
    assert.equal((await post(user.token, { tokenName: 'VIXP', amount: '1', myAddress: user.address, password }, key)).status, 200);
    const changed = await post(user.token, { tokenName: 'VIXP', amount: '2', myAddress: user.address, password }, key);
    assert.equal(changed.status, 422);
    assert.equal(changed.body.resultCode, '422');
    assert.equal(changed.body.resultData, '');
    assert.equal(await balance(user.address), '19');
    // Another user's key space is their own.
    assert.equal((await post(other.token, { tokenName: 'VIXP', amount: '2', myAddress: other.address, password }, key)).status, 200);
    assert.equal(await balance(other.address), '18');
  });

  test('fifty identical requests at once with one key: one transfer on chain; each answer is the payment or 409 in progress', async () => {
    const user = await newUser('100');
    const body = { tokenName: 'VIXP', amount: '1.5', myAddress: user.address, password };
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(user.token, body, key)));
    const paid = answers.filter((a) => a.status === 200);
    assert.ok(paid.length >= 1, JSON.stringify(answers.map((a) => a.status)));
    for (const a of answers) assert.ok(a.status === 200 || a.status === 409, `${a.status} ${JSON.stringify(a.body)}`);
    assert.equal(new Set(paid.map((a) => a.body.resultData.transactionId)).size, 1);
    for (const a of answers.filter((x) => x.status === 409)) assert.equal(a.body.resultCode, '409');
    assert.equal(await balance(user.address), '98.5');
    assert.equal(await transfersOnChain(user.address), 1);
    // Once it is done, every retry replays it.
    const later = await post(user.token, body, key);
    assert.equal(later.status, 200);
    assert.equal(later.body.resultData.transactionId, paid[0]!.body.resultData.transactionId);
  });

  test('a request that never reached its transfer (wrong password) frees the key; a refused transfer (402) is replayed', async () => {
    const user = await newUser('5');
    const key = randomUUID();
    const wrong = await post(user.token, { tokenName: 'VIXP', amount: '1', myAddress: user.address, password: 'not the password' }, key);
    assert.equal(wrong.status, 401);
    const right = await post(user.token, { tokenName: 'VIXP', amount: '1', myAddress: user.address, password }, key);
    assert.equal(right.status, 200, JSON.stringify(right.body));
    assert.equal(right.replayed, false);

    const poorKey = randomUUID();
    const tooMuch = { tokenName: 'VIXP', amount: '50', myAddress: user.address, password };
    assert.equal((await post(user.token, tooMuch, poorKey)).status, 402);
    await t.platform.wallet.mint('ethereum', { to: user.address, amount: '100' });
    const again = await post(user.token, tooMuch, poorKey);
    assert.equal(again.status, 402, 'the first outcome, not a new payment');
    assert.equal(again.replayed, true);
    assert.equal(await balance(user.address), '104');
  });

  test('a malformed Idempotency-Key is 400', async () => {
    const user = await newUser('0');
    const bad = await post(user.token, { tokenName: 'VIXP', amount: '1', myAddress: user.address, password }, 'has spaces in it');
    assert.equal(bad.status, 400);
  });

  test('keys expire: an expired key is swept and may be used again', async () => {
    const keys = createIdempotencyRepository(t.platform.store.db);
    const scope = `test:${randomUUID()}`;
    assert.deepEqual(await keys.claim({ scope, key: 'k', fingerprint: 'a', reference: null, createdAt: 1000, expiresAt: 2000 }), { claimed: true });
    const held = await keys.claim({ scope, key: 'k', fingerprint: 'b', reference: null, createdAt: 1500, expiresAt: 2500 });
    assert.equal(held.claimed, false);
    assert.deepEqual(await keys.claim({ scope, key: 'k', fingerprint: 'b', reference: null, createdAt: 3000, expiresAt: 4000 }), { claimed: true });
    assert.ok((await keys.sweepExpired(5000)) >= 1);
    assert.deepEqual(await keys.claim({ scope, key: 'k', fingerprint: 'c', reference: null, createdAt: 5000, expiresAt: 6000 }), { claimed: true });
  });
});

describe('transfer status', () => {
  test('GET /v1/ict/pay/{transactionId}: the user\'s own payment, confirmed with its fields; another\'s is 404', async () => {
    const user = await newUser('10');
    const other = await newUser('0');
    const paid = await post(user.token, { tokenName: 'VIXP', amount: '2.5', myAddress: user.address, password });
    const id = paid.body.resultData.transactionId;
    const found = await lookup(user.token, id);
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.deepEqual(found.body.resultData, { ...paid.body.resultData, status: 'confirmed' });
    assert.equal((await lookup(other.token, id)).status, 404);
    assert.equal((await lookup(user.token, `0x${'12'.repeat(32)}`)).status, 404);
    assert.equal((await lookup(user.token, 'nonsense')).status, 404);
  });

  test('getTransferStatus (token API): confirmed with its fields, failed for a transfer that moved nothing, 404 unknown', async () => {
    const user = await newUser('10');
    const receiver = await t.platform.wallet.createAddress();
    const prepared = await prepareTransfer(t.app, user, receiver.address, '4');
    const { data: _data, ...params } = prepared;
    const sent = await call(t.app, '/token', 'transfer', params);
    assert.equal(sent.resultCode, '200');
    const status = await call(t.app, '/token', 'getTransferStatus', { transactionId: sent.TransactionID });
    assert.equal(status.resultCode, '200');
    assert.deepEqual(status.resultData, {
      transactionId: sent.TransactionID, status: 'confirmed', authorization: 'used', kind: 'transfer', network: 'ethereum',
      contractAddress: t.platform.contracts.ethereum.vixpToken, tokenSymbol: 'VIXP', fromAddress: user.address, toAddress: receiver.address, amount: '4',
    });
    const unknown = await call(t.app, '/token', 'getTransferStatus', { transactionId: `0x${'ab'.repeat(32)}` });
    assert.equal(unknown.resultCode, '404');
    const bad = await call(t.app, '/token', 'getTransferStatus', { transactionId: 'x' });
    assert.equal(bad.resultCode, '400');

    // A transfer sent and then cancelled on chain (what a revert ends in) is failed with 502.
    const nonce = `0x${'00'.repeat(31)}01`;
    await t.platform.store.db.insertInto('authorizations').values({
      nonce, network: 'ethereum', reference: `transfer:${randomUUID()}`, contract_address: t.platform.contracts.ethereum.vixpToken,
      from_address: user.address, to_address: receiver.address, value: '1000000000000000000', valid_before: 1, from_block: 0,
      status: 'canceled', tx_hash: `0x${'cd'.repeat(32)}`, cancel_tx_hash: null, created_at: 1, updated_at: 1,
    }).execute();
    const failed = await call(t.app, '/token', 'getTransferStatus', { transactionId: `0x${'cd'.repeat(32)}` });
    assert.equal(failed.resultData.status, 'failed');
    assert.equal(failed.resultData.failureCode, '502');
    assert.equal(failed.resultData.amount, '1');
  });
});

// Item 6 of issue 28: `confirmed` was read from the platform's record alone, so a node that came
// back without the block (a provider failing over to a lagging node, a deep reorg) still showed it
// confirmed until the relayer noticed. Confirmed means the node has the receipt now, at the depth.
describe('getTransferStatus asks the node', () => {
  test('a transfer whose block the node no longer has is pending, not confirmed; confirmed again once it is mined again', async () => {
    const user = await newUser('10');
    const receiver = await t.platform.wallet.createAddress();
    const { client } = t.platform.chains.ethereum;
    const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as string;
    const { data: _data, ...params } = await prepareTransfer(t.app, user, receiver.address, '4');
    const sent = await call(t.app, '/token', 'transfer', params);
    assert.equal(sent.resultCode, '200', JSON.stringify(sent));
    const statusOf = async () => (await call(t.app, '/token', 'getTransferStatus', { transactionId: sent.TransactionID })).resultData.status as string;
    assert.equal(await statusOf(), 'confirmed');
    const raw = await client.request({ method: 'eth_getRawTransactionByHash' as never, params: [sent.TransactionID] as never }) as unknown as string;

    // The node loses the block and mines nothing for now: what the relayer sends again waits in its pool.
    await client.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    try {
      assert.equal(await client.request({ method: 'evm_revert' as never, params: [snapshot] as never }), true);
      assert.equal(await client.getTransactionReceipt({ hash: sent.TransactionID }).catch(() => null), null, 'the node has no receipt');
      assert.equal(await statusOf(), 'pending', 'no receipt on the node: not confirmed');
    } finally {
      await client.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    }
    // The same signed transaction mined again (the relayer's recovery may have sent it already).
    await client.request({ method: 'eth_sendRawTransaction', params: [raw as `0x${string}`] }).catch(() => undefined);
    await client.request({ method: 'evm_mine' as never });
    await waitFor(async () => (await statusOf()) === 'confirmed', { timeoutMs: 60_000, intervalMs: 200, message: 'confirmed once the node has it again' });
    assert.equal((await t.platform.wallet.getBalance('ethereum', { address: receiver.address })).balance, '4', 'paid once');
  });
});
