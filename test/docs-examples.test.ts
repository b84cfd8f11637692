import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rpc, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, sha256Hex } from './support/transfer-scheme.ts';
import { assertSameShape, readDocExamples, type DocExample } from './support/doc-examples.ts';

// The JSON-RPC guides' examples, repeated live: same method and params names, and a response of
// exactly the documented shape with the documented codes and messages.
const fixed = new Set(['jsonrpc', 'id', 'resultCode', 'resultMessage', 'code', 'msg', 'tokenSymbol', 'decimals', 'network', 'chainId', 'status', 'amount', 'balance', 'sealFields', 'author']);

let t: TestPlatform;
before(async () => { t = await startTestPlatform(); });
after(async () => { await t?.stop(); });

async function check(example: DocExample | undefined, url: string, live: unknown) {
  assert.ok(example, 'example is documented');
  const documented = example.request as any;
  const sent = live as any;
  if (typeof documented === 'object' && !Array.isArray(documented)) {
    assert.equal(sent.method, documented.method);
    assert.deepEqual(Object.keys(sent.params ?? {}).sort(), Object.keys(documented.params ?? {}).sort(), 'params names');
  }
  const { body } = await rpc(t.app, url, live, example.host);
  assertSameShape(example.response, body, fixed);
  return body;
}

test('docs/token-api.md examples hold', async () => {
  const ex = readDocExamples('docs/token-api.md');
  const req = (id: number, method: string, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
  const a = (await check(ex.get('createAddress'), '/token', req(1, 'createAddress', {}))).result.resultData;
  await check(ex.get('importAddress'), '/token', req(2, 'importAddress', { mnemonic: a.mnemonic }));
  const b = (await rpc(t.app, '/token', req(0, 'createAddress', {}))).body.result.resultData;
  await t.platform.wallet.mint('ethereum', { to: a.address, amount: '100' });
  await check(ex.get('net_getTempKey'), '/token', req(3, 'net_getTempKey', { address: a.address, keyType: 'transfer' }));
  const p = await prepareTransfer(t.app, a, b.address, '12.5');
  await check(ex.get('signData'), '/token', req(4, 'signData', { address: a.address, tempKey: p.tempKey, hashKey: p.hashKey, data: p.data }));
  const { data: _d, ...params } = p;
  await check(ex.get('transfer'), '/token', req(5, 'transfer', params));
  await check(ex.get('transfer-replay'), '/token', req(6, 'transfer', params));
  await check(ex.get('getBalance'), '/token', req(7, 'getBalance', { address: b.address }));
  await check(ex.get('getTokenInfo'), '/token', req(8, 'getTokenInfo', {}));

  // createToken as docs/token-api.md tells a contract-only client: keyType "transfer", and docs/interfaces.md#key-scheme's
  // string with fromAddress = the owner, toAddress = the zero address, amount = initialSupply.
  const tempKey = (await rpc(t.app, '/token', req(0, 'net_getTempKey', { address: a.address, keyType: 'transfer' }))).body.result.resultData.tempKey;
  const hashKey = sha256Hex(`${tempKey}|${a.secretKey}`);
  const data = sha256Hex(`${a.address}|0x0000000000000000000000000000000000000000|1000000|${tempKey}|${hashKey}`);
  const signature = (await rpc(t.app, '/token', req(0, 'signData', { address: a.address, tempKey, hashKey, data }))).body.result.resultData.signature;
  const created = await check(ex.get('createToken'), '/token', req(9, 'createToken', { address: a.address, name: 'Store Points', symbol: 'PTS', initialSupply: '1000000', tempKey, hashKey, signature }));
  const pts = (await rpc(t.app, '/token', req(0, 'getBalance', { address: a.address, contractAddress: created.result.resultData.contractAddress }))).body.result.resultData;
  assert.deepEqual([pts.balance, pts.tokenSymbol], ['1000000', 'PTS']);

  await check(ex.get('parse-error'), '/token', '{"jsonrpc":"2.0",');
  await check(ex.get('unknown-method'), '/token', req(13, 'eth_sendTransaction', {}));
  await check(ex.get('bad-params'), '/token', req(14, 'getBalance', { addr: '0x1' }));
  await check(ex.get('batch'), '/token', [req(15, 'getTokenInfo'), { jsonrpc: '2.0', method: 'getTokenInfo' }]);
});

test('docs/block-api.md and docs/chain-api.md examples hold', async () => {
  const block = readDocExamples('docs/block-api.md');
  await check(block.get('getBlock'), '/block', { jsonrpc: '2.0', id: 10, method: 'getBlock', params: [] });
  const chain = readDocExamples('docs/chain-api.md');
  await check(chain.get('chain-getTokenInfo-op'), '/v1/chain/erc20', { jsonrpc: '2.0', id: 11, method: 'getTokenInfo', params: {} });
  await check(chain.get('chain-unknown-label'), '/v1/chain', { jsonrpc: '2.0', id: 12, method: 'getTokenInfo', params: {} });
});
