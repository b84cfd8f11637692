import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEventLog, parseUnits, verifyMessage, type Hex } from 'viem';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { call, rpc, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, sha256Hex, type Wallet } from './support/transfer-scheme.ts';

let t: TestPlatform;
before(async () => { t = await startTestPlatform(); });
after(async () => { await t?.stop(); });

async function newWallet(): Promise<Wallet> {
  return (await call(t.app, '/token', 'createAddress', {})).resultData;
}
async function balance(address: string): Promise<string> {
  return (await call(t.app, '/token', 'getBalance', { address })).resultData.balance;
}

describe('wallet accounts', () => {
  test('createAddress then importAddress with its mnemonic gives the same address and secretKey', async () => {
    const created = await newWallet();
    assert.match(created.address, /^0x[0-9a-fA-F]{40}$/);
    assert.equal(created.mnemonic!.split(' ').length, 12);
    assert.match(created.secretKey, /^[0-9a-f]{64}$/);
    const imported = await call(t.app, '/token', 'importAddress', { mnemonic: created.mnemonic });
    assert.deepEqual(imported.resultData, { address: created.address, secretKey: created.secretKey });
  });

  test('the BIP-39 test mnemonic derives the address every Ethereum wallet derives', async () => {
    const imported = await call(t.app, '/token', 'importAddress', { mnemonic: 'test test test test test test test test test test test junk' });
    assert.equal(imported.resultData.address, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  });

  test('an invalid mnemonic is a service error', async () => {
    const result = await call(t.app, '/token', 'importAddress', { mnemonic: 'test test test test test test test test test test test test' });
    assert.equal(result.resultCode, '400');
    assert.equal(result.resultData, '');
  });

  test('nothing secret is stored in the clear', async () => {
    const created = await newWallet();
    const row = await t.platform.store.db.selectFrom('accounts').selectAll().where('address', '=', created.address).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(created.secretKey));
    assert.match(row.private_key_enc, /^v1:/);
  });
});

describe('the transfer key scheme', () => {
  let alice: Wallet;
  let bob: Wallet;
  before(async () => {
    alice = await newWallet();
    bob = await newWallet();
    await t.platform.wallet.mint('ethereum', { to: alice.address, amount: '100' });
  });

  test('a transfer moves exactly the amount, with a real transaction carrying the Transfer event', async () => {
    const request = await prepareTransfer(t.app, alice, bob.address, '12.5');
    assert.ok(await verifyMessage({ address: alice.address as Hex, message: request.data, signature: request.signature as Hex }));
    const { data: _data, ...params } = request;
    const result = await call(t.app, '/token', 'transfer', params);
    assert.equal(result.resultCode, '200');
    assert.match(result.TransactionID, /^0x[0-9a-f]{64}$/);
    const receipt = await t.platform.chains.ethereum.client.getTransactionReceipt({ hash: result.TransactionID });
    assert.equal(receipt.status, 'success');
    const transfers = receipt.logs
      .map((log) => { try { return decodeEventLog({ abi: vixpTokenAbi, ...log }); } catch { return undefined; } })
      .filter((e) => e?.eventName === 'Transfer');
    assert.equal(transfers.length, 1);
    assert.deepEqual(transfers[0]!.args, { from: alice.address, to: bob.address, value: parseUnits('12.5', 18) });
    assert.equal(await balance(alice.address), '87.5');
    assert.equal(await balance(bob.address), '12.5');
  });

  test('each bad request is a clear service error and moves nothing', async () => {
    const before = [await balance(alice.address), await balance(bob.address)];
    const expectError = async (params: object, resultCode: string) => {
      const result = await call(t.app, '/token', 'transfer', params);
      assert.equal(result.resultCode, resultCode, JSON.stringify(result));
      assert.equal(result.resultData, '');
      assert.equal(result.TransactionID, undefined);
      assert.ok(result.resultMessage.length > 0);
    };
    const strip = ({ data: _d, ...p }: Awaited<ReturnType<typeof prepareTransfer>>) => p;

    const used = strip(await prepareTransfer(t.app, alice, bob.address, '1'));
    assert.equal((await call(t.app, '/token', 'transfer', used)).resultCode, '200');
    await expectError(used, '440'); // the same temp key again

    const wrongHash = strip(await prepareTransfer(t.app, alice, bob.address, '1'));
    await expectError({ ...wrongHash, hashKey: sha256Hex('not the secret') }, '441');

    const wrongSignature = strip(await prepareTransfer(t.app, alice, bob.address, '1'));
    const other = strip(await prepareTransfer(t.app, bob, alice.address, '1'));
    await expectError({ ...wrongSignature, signature: other.signature }, '442');

    const wrongAmount = strip(await prepareTransfer(t.app, alice, bob.address, '1'));
    await expectError({ ...wrongAmount, amount: '2' }, '442');

    const tooMuch = strip(await prepareTransfer(t.app, alice, bob.address, '1000'));
    await expectError(tooMuch, '402');

    await expectError({ ...strip(await prepareTransfer(t.app, alice, bob.address, '1')), tempKey: 'f'.repeat(64) }, '440');
    assert.deepEqual([await balance(alice.address), await balance(bob.address)], [String(Number(before[0]) - 1), String(Number(before[1]) + 1)]);
  });

  test('an amount with more decimals than the token has is refused', async () => {
    const request = await prepareTransfer(t.app, alice, bob.address, '0.0000000000000000001');
    const { data: _d, ...params } = request;
    assert.equal((await call(t.app, '/token', 'transfer', params)).resultCode, '400');
  });
});

describe('createToken', () => {
  const zeroAddress = '0x0000000000000000000000000000000000000000';
  let owner: Wallet;
  let other: Wallet;
  before(async () => {
    owner = await newWallet();
    other = await newWallet();
  });

  /** A temp key and hashKey as docs/interfaces.md#key-scheme makes them; `keyType` "transfer" is the contract's value. */
  async function tempKeyOf(wallet: Wallet, keyType = 'transfer') {
    const tempKey: string = (await call(t.app, '/token', 'net_getTempKey', { address: wallet.address, keyType })).resultData.tempKey;
    return { tempKey, hashKey: sha256Hex(`${tempKey}|${wallet.secretKey}`) };
  }
  /** signData as a contract-only client calls it: no keyType. */
  async function sign(wallet: Wallet, key: { tempKey: string; hashKey: string }, fields: string[], keyType?: string) {
    const data = sha256Hex(fields.join('|'));
    return (await call(t.app, '/token', 'signData', { address: wallet.address, ...key, data, ...(keyType && { keyType }) })).resultData.signature as string;
  }
  const create = (params: object) => call(t.app, '/token', 'createToken', params);
  async function supplyOf(address: string, contractAddress: string) {
    return (await call(t.app, '/token', 'getBalance', { address, contractAddress })).resultData;
  }

  test('docs/interfaces.md#key-scheme form: keyType "transfer", signed sha256hex(fromAddress|toAddress|amount|tempKey|hashKey) with the owner, the zero address and initialSupply', async () => {
    const key = await tempKeyOf(owner);
    const signature = await sign(owner, key, [owner.address, zeroAddress, '5000', key.tempKey, key.hashKey]);
    const created = await create({ address: owner.address, name: 'Spec Points', symbol: 'SPC', initialSupply: '5000', ...key, signature });
    assert.equal(created.resultCode, '200', JSON.stringify(created));
    assert.match(created.TransactionID, /^0x[0-9a-f]{64}$/);
    assert.deepEqual(await supplyOf(owner.address, created.resultData.contractAddress).then((b) => [b.balance, b.tokenSymbol]), ['5000', 'SPC']);
    assert.equal((await create({ address: owner.address, name: 'Spec Points', symbol: 'SPC', initialSupply: '5000', ...key, signature })).resultCode, '440');
  });

  test('our own form still works: keyType "createToken", signed address|name|symbol|initialSupply|tempKey|hashKey', async () => {
    const key = await tempKeyOf(owner, 'createToken');
    const signature = await sign(owner, key, [owner.address, 'Own Points', 'OWN', '10', key.tempKey, key.hashKey], 'createToken');
    const created = await create({ address: owner.address, name: 'Own Points', symbol: 'OWN', initialSupply: '10', ...key, signature });
    assert.equal(created.resultCode, '200', JSON.stringify(created));
  });

  test('any other signature is refused (442), deploys nothing and leaves the temp key usable', async () => {
    const key = await tempKeyOf(owner);
    const params = { address: owner.address, name: 'Refused Points', symbol: 'REF', initialSupply: '700', ...key };
    const otherKey = await tempKeyOf(other);
    const wrong: Record<string, string> = {
      'toAddress = the owner': await sign(owner, key, [owner.address, owner.address, '700', key.tempKey, key.hashKey]),
      'a transfer to another account': await sign(owner, key, [owner.address, other.address, '700', key.tempKey, key.hashKey]),
      'another amount': await sign(owner, key, [owner.address, zeroAddress, '7000', key.tempKey, key.hashKey]),
      'amount written otherwise': await sign(owner, key, [owner.address, zeroAddress, '700.0', key.tempKey, key.hashKey]),
      'another temp key': await sign(owner, key, [owner.address, zeroAddress, '700', otherKey.tempKey, key.hashKey]),
      'our form with another name': await sign(owner, key, [owner.address, 'Other', 'REF', '700', key.tempKey, key.hashKey]),
      'signed by another account': await sign(other, otherKey, [owner.address, zeroAddress, '700', key.tempKey, key.hashKey]),
      'not a signature': '0x1234',
    };
    for (const [why, signature] of Object.entries(wrong)) {
      const refused = await create({ ...params, signature });
      assert.deepEqual([refused.resultCode, refused.resultData, refused.TransactionID], ['442', '', undefined], why);
    }
    assert.equal((await call(t.app, '/token', 'getTokenInfo', { tokenSymbol: 'REF' })).resultCode, '404', 'nothing deployed');
    const signature = await sign(owner, key, [owner.address, zeroAddress, '700', key.tempKey, key.hashKey]);
    assert.equal((await create({ ...params, signature })).resultCode, '200');
  });

  test('a createToken temp key still cannot move tokens', async () => {
    await t.platform.wallet.mint('ethereum', { to: owner.address, amount: '3' });
    const key = await tempKeyOf(owner, 'createToken');
    const signature = await sign(owner, key, [owner.address, other.address, '1', key.tempKey, key.hashKey], 'createToken');
    const refused = await call(t.app, '/token', 'transfer', { fromAddress: owner.address, toAddress: other.address, amount: '1', ...key, signature });
    assert.equal(refused.resultCode, '440');
  });
});

describe('the JSON-RPC envelope', () => {
  test('protocol errors carry the contract codes and a msg, never a stack', async () => {
    const cases: Array<[unknown, number]> = [
      ['{"jsonrpc":"2.0", "id":1, "method":', -32700],
      [{ jsonrpc: '1.0', id: 1, method: 'getBalance', params: {} }, -32600],
      [{ jsonrpc: '2.0', id: 1 }, -32600],
      [{ jsonrpc: '2.0', id: { nested: true }, method: 'createAddress' }, -32600],
      [{ jsonrpc: '2.0', id: 1, method: 'createAddress', params: 'text' }, -32600],
      [{ jsonrpc: '2.0', id: 1, method: 'noSuchMethod' }, -32601],
      [{ jsonrpc: '2.0', id: 1, method: 'rpc.discover' }, -32601],
      [{ jsonrpc: '2.0', id: 1, method: 'getBalance', params: { addr: 1 } }, -32602],
      [[], -32600],
      [Array.from({ length: 51 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getTokenInfo' })), -32600],
    ];
    for (const [body, code] of cases) {
      const response = await rpc(t.app, '/token', body);
      assert.equal(response.body.error?.code, code, JSON.stringify(body).slice(0, 80));
      assert.equal(typeof response.body.error.msg, 'string');
      assert.equal(response.body.jsonrpc, '2.0');
      assert.ok(!response.body.error.msg.includes('    at '), 'no stack trace');
    }
  });

  test('a notification gets no reply; a batch answers each request with an id', async () => {
    const notification = await rpc(t.app, '/token', { jsonrpc: '2.0', method: 'getTokenInfo' });
    assert.equal(notification.status, 204);
    const batch = await rpc(t.app, '/token', [
      { jsonrpc: '2.0', id: 'a', method: 'getTokenInfo' },
      { jsonrpc: '2.0', method: 'getTokenInfo' },
      { jsonrpc: '2.0', id: 7, method: 'nope' },
    ]);
    assert.deepEqual(batch.body.map((r: any) => r.id), ['a', 7]);
    assert.equal(batch.body[0].result.resultData.tokenSymbol, 'VIXP');
    assert.equal(batch.body[1].error.code, -32601);
  });

  test('a body over the size limit keeps the JSON-RPC shape', async () => {
    const response = await rpc(t.app, '/token', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'importAddress', params: { mnemonic: 'x'.repeat(2_000_000) } }));
    assert.equal(response.status, 413);
    assert.equal(response.body.error.code, -32600);
  });
});

describe('networks by Host label', () => {
  test('each contract label selects its network; an unknown label is an error, not a default', async () => {
    const chainIds: Record<string, number> = {
      'api.vixpay.example': 31337, 'api-op.vixpay.example': 31338, 'api-bsc.vixpay.example': 31339, 'api-op-bnb.vixpay.example': 31340,
      'test-api-op-sepolia.vixpay.example': 31338, 'test-api-bsc.vixpay.example': 31339, 'test-api-op-bnb.vixpay.example': 31340,
    };
    for (const [host, chainId] of Object.entries(chainIds)) {
      const info = await call(t.app, '/v1/chain/erc20', 'getTokenInfo', {}, host);
      assert.equal(info.resultData.chainId, chainId, host);
    }
    const unknown = await call(t.app, '/v1/chain', 'getTokenInfo', {}, 'api-zk.vixpay.example');
    assert.equal(unknown.resultCode, '421');
    assert.match(unknown.resultMessage, /api-zk/);
  });
});
