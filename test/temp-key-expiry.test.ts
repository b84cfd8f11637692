import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, rpc, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, type Wallet } from './support/transfer-scheme.ts';

// The platform's clock is injected: the test moves it past TEMP_KEY_TTL_SECONDS instead of waiting.
let skewMs = 0;
let t: TestPlatform;
before(async () => { t = await startTestPlatform({ env: { TEMP_KEY_TTL_SECONDS: '60' }, clock: () => Date.now() + skewMs }); });
after(async () => { await t?.stop(); });

const newWallet = async (): Promise<Wallet> => (await call(t.app, '/token', 'createAddress', {})).resultData;
const balance = async (address: string): Promise<string> => (await call(t.app, '/token', 'getBalance', { address })).resultData.balance;

test('a temp key past TEMP_KEY_TTL_SECONDS is refused as expired: the transfer signed with it moves nothing, and a fresh key works', async () => {
  const alice = await newWallet();
  const bob = await newWallet();
  await t.platform.wallet.mint('ethereum', { to: alice.address, amount: '10' });
  const { data: _data, ...prepared } = await prepareTransfer(t.app, alice, bob.address, '4');
  skewMs = 61_000;
  try {
    const { body } = await rpc(t.app, '/token', { jsonrpc: '2.0', id: 1, method: 'transfer', params: prepared });
    assert.equal(body.result?.resultCode ?? body.error?.code, '440', JSON.stringify(body));
    assert.match(JSON.stringify(body), /expired/, 'the client is told the key expired (not that it was used)');
    assert.equal(await balance(alice.address), '10');
    assert.equal(await balance(bob.address), '0');
    const { data: _fresh, ...again } = await prepareTransfer(t.app, alice, bob.address, '4');
    assert.equal((await call(t.app, '/token', 'transfer', again)).resultCode, '200');
    assert.equal(await balance(bob.address), '4');
  } finally {
    skewMs = 0;
  }
});
