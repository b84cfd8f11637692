import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, rpc, startTestPlatform, type TestPlatform } from './support/platform.ts';

let t: TestPlatform;
before(async () => { t = await startTestPlatform(); });
after(async () => { await t?.stop(); });

const specFields = ['totalDifficulty', 'receiptsRoot', 'extraData', 'numberRaw', 'baseFeePerGas', 'sealFields', 'miner', 'number', 'gasLimit',
  'gasUsed', 'uncles', 'sha3Uncles', 'nonceRaw', 'sizeRaw', 'gasUsedRaw', 'timestamp', 'difficultyRaw', 'logsBloom', 'author',
  'totalDifficultyRaw', 'transactions', 'nonce', 'difficulty', 'size', 'transactionsRoot', 'timestampRaw', 'stateRoot', 'mixHash',
  'parentHash', 'gasLimitRaw', 'hash'];

test('getBlock answers the latest block with every contract field, numbers twice', async () => {
  const latest = (await call(t.app, '/block', 'getBlock', [])).resultData;
  assert.deepEqual(Object.keys(latest).sort(), [...specFields].sort());
  const chainBlock = await t.platform.chains.ethereum.client.getBlock();
  assert.equal(latest.hash, chainBlock.hash);
  for (const name of ['number', 'gasLimit', 'gasUsed', 'size', 'timestamp', 'difficulty']) {
    assert.equal(typeof latest[name], 'number', name);
    assert.equal(BigInt(latest[`${name}Raw`]), BigInt(latest[name]), `${name}Raw`);
  }
  assert.equal(latest.nonceRaw, chainBlock.nonce);
  assert.equal(latest.sealFields, null);
  assert.equal(latest.author, null);
  for (const name of ['hash', 'parentHash', 'stateRoot', 'receiptsRoot', 'transactionsRoot', 'sha3Uncles', 'mixHash', 'miner', 'logsBloom']) {
    assert.match(latest[name], /^0x[0-9a-f]*$/, name);
  }
});

test('a block by number, hex number, tag or hash is the same block', async () => {
  const latest = (await call(t.app, '/block', 'getBlock', [])).resultData;
  const ways = [[latest.number], [String(latest.number)], [latest.numberRaw], ['latest'], [latest.hash]];
  for (const params of ways) {
    const block = (await call(t.app, '/block', 'getBlock', params)).resultData;
    assert.equal(block.hash, latest.hash, JSON.stringify(params));
  }
  const genesis = (await call(t.app, '/block', 'getBlock', ['earliest'])).resultData;
  assert.equal(genesis.number, 0);
});

test('an unknown block is 404, a malformed one 400 or -32602, on the network of the Host', async () => {
  assert.equal((await call(t.app, '/block', 'getBlock', [999_999_999])).resultCode, '404');
  assert.equal((await call(t.app, '/block', 'getBlock', [`0x${'ab'.repeat(32)}`])).resultCode, '404');
  assert.equal((await call(t.app, '/block', 'getBlock', ['yesterday'])).resultCode, '400');
  assert.equal((await call(t.app, '/block', 'getBlock', [-1])).resultCode, '400');
  assert.equal((await rpc(t.app, '/block', { jsonrpc: '2.0', id: 1, method: 'getBlock', params: { block: 1 } })).body.error.code, -32602);
  assert.equal((await rpc(t.app, '/block', { jsonrpc: '2.0', id: 1, method: 'getBlock', params: [1, 2] })).body.error.code, -32602);
  const op = (await call(t.app, '/v1/chain', 'getBlock', [], 'api-op.vixpay.example')).resultData;
  const opChain = await t.platform.chains.optimism.client.getBlock();
  assert.equal(op.hash, opChain.hash);
});

test('an old block is answered from memory once it has CONFIRMATIONS blocks on top; the head and tags ask the node', async () => {
  const client = t.platform.chains.ethereum.client;
  const getBlock = client.getBlock.bind(client);
  let asked = 0;
  client.getBlock = (async (args?: Parameters<typeof getBlock>[0]) => { asked++; return getBlock(args); }) as typeof client.getBlock;
  try {
    await client.request({ method: 'evm_mine' } as never);
    await client.request({ method: 'evm_mine' } as never);
    const first = await call(t.app, '/block', 'getBlock', [1]);
    const again = await call(t.app, '/block', 'getBlock', ['0x1']);
    const byHash = await call(t.app, '/block', 'getBlock', [first.resultData.hash]);
    const [batched] = (await rpc(t.app, '/block', [{ jsonrpc: '2.0', id: 7, method: 'getBlock', params: [1] }])).body;
    assert.equal(asked, 1, 'block 1 fetched once');
    assert.deepEqual(again, first);
    assert.deepEqual(byHash, first);
    assert.deepEqual(batched, { jsonrpc: '2.0', id: 7, result: first });
    assert.equal(first.resultData.number, 1);

    const head = (await call(t.app, '/block', 'getBlock', [])).resultData.number;
    await call(t.app, '/block', 'getBlock', [head]);
    await call(t.app, '/block', 'getBlock', [head]);
    await call(t.app, '/block', 'getBlock', ['earliest']);
    await call(t.app, '/block', 'getBlock', ['earliest']);
    assert.equal(asked, 1 + 5, 'the head (no block on top yet) and tags every time');
  } finally {
    client.getBlock = getBlock;
  }
});
