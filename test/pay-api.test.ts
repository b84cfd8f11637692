import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addUser } from '../src/identity/add-user.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { assertSameShape, readDocExamples } from './support/doc-examples.ts';

let t: TestPlatform;
let alice: { userId: string; address: string };
let bob: { userId: string; address: string };
let token: string;

const balance = async (address: string) => (await t.platform.wallet.getBalance('ethereum', { address })).balance;

async function payRequest(body: unknown, bearer: string | null = token) {
  const response = await t.app.inject({
    method: 'POST', url: '/v1/ict/pay', payload: body as object,
    headers: { 'content-type': 'application/json', ...(bearer && { authorization: `Bearer ${bearer}` }) },
  });
  return { status: response.statusCode, body: response.json() as any };
}

before(async () => {
  t = await startTestPlatform();
  const deps = { users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() };
  alice = await addUser(deps, { id: 'alice', password: 'alice password', name: 'Alice' });
  bob = await addUser(deps, { id: 'bob', password: 'bob password 1', name: 'Bob' });
  await t.platform.wallet.mint('ethereum', { to: alice.address, amount: '50' });
  const login = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: 'alice', password: 'alice password' } });
  token = login.json().token;
});
after(async () => { await t?.stop(); });

test('REST pay moves exactly the amount of VIXP to the receiving account, on chain', async () => {
  const receiver = t.platform.relayer.address;
  const before = await balance(receiver);
  const { status, body } = await payRequest({ tokenName: 'VIXP', amount: '7.25', myAddress: alice.address, password: 'alice password' });
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.resultCode, '200');
  assert.equal(body.resultMessage, 'Success');
  assert.match(body.resultData.transactionId, /^0x[0-9a-f]{64}$/);
  assert.deepEqual([body.resultData.fromAddress, body.resultData.toAddress, body.resultData.amount], [alice.address, receiver, '7.25']);
  const receipt = await t.platform.chains.ethereum.client.getTransactionReceipt({ hash: body.resultData.transactionId });
  assert.equal(receipt.status, 'success');
  assert.equal(await balance(alice.address), '42.75');
  assert.equal(Number(await balance(receiver)) - Number(before), 7.25);
});

test('a wrong password, another user\'s address, a missing or bad JWT, another token or a bad amount moves nothing', async () => {
  const start = await balance(alice.address);
  const cases: Array<[unknown, string | null, number, string]> = [
    [{ tokenName: 'VIXP', amount: '1', myAddress: alice.address, password: 'wrong password' }, token, 401, '401'],
    [{ tokenName: 'VIXP', amount: '1', myAddress: bob.address, password: 'alice password' }, token, 401, '401'],
    [{ tokenName: 'VIXP', amount: '1', myAddress: alice.address, password: 'alice password' }, null, 401, '401'],
    [{ tokenName: 'VIXP', amount: '1', myAddress: alice.address, password: 'alice password' }, `${token}x`, 401, '401'],
    [{ tokenName: 'ETH', amount: '1', myAddress: alice.address, password: 'alice password' }, token, 400, '404'],
    [{ tokenName: 'VIXP', amount: '1e3', myAddress: alice.address, password: 'alice password' }, token, 400, '400'],
    [{ tokenName: 'VIXP', amount: '1000', myAddress: alice.address, password: 'alice password' }, token, 402, '402'],
    [{ tokenName: 'VIXP', amount: '1', myAddress: alice.address }, token, 400, '400'],
  ];
  for (const [body, bearer, status, resultCode] of cases) {
    const response = await payRequest(body, bearer);
    assert.equal(response.status, status, JSON.stringify(body));
    assert.equal(response.body.resultCode, resultCode, JSON.stringify(response.body));
    assert.equal(response.body.resultData, '');
    assert.ok(!JSON.stringify(response.body).includes('alice password'), 'no secret echoed');
  }
  assert.equal(await balance(alice.address), start);
});

test('failed passwords on pay are throttled like logins: the sixth is 429 even when right', async () => {
  const deps = { users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() };
  const carol = await addUser(deps, { id: 'carol', password: 'carol password', name: 'Carol' });
  const carolToken = (await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: 'carol', password: 'carol password' } })).json().token;
  const attempt = (password: string) => payRequest({ tokenName: 'VIXP', amount: '1', myAddress: carol.address, password }, carolToken);
  for (let i = 0; i < 5; i++) assert.equal((await attempt('not carol password')).status, 401);
  const throttled = await attempt('carol password');
  assert.equal(throttled.status, 429);
  assert.equal(throttled.body.resultCode, '429');
});

test('docs/pay-api.md examples hold', async () => {
  const examples = readDocExamples('docs/pay-api.md');
  const fixed = new Set(['resultCode', 'resultMessage', 'resultData', 'status', 'tokenName', 'amount', 'network']);
  const ok = await payRequest({ ...(examples.get('pay')!.request as object), myAddress: alice.address });
  assertSameShape(examples.get('pay')!.response, ok.body, fixed);
  const wrong = await payRequest({ ...(examples.get('pay-wrong-password')!.request as object), myAddress: alice.address });
  assert.equal(wrong.status, 401);
  assertSameShape(examples.get('pay-wrong-password')!.response, wrong.body, fixed);
});
