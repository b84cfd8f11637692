import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import type { AnvilProcess } from '../src/chain/anvil-process.ts';
import { startExternalNode } from './support/external-node.ts';
import { startRpcProxy, type RpcProxy } from './support/rpc-proxy.ts';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { waitFor } from './support/wait-for.ts';

// One provider URL over two nodes of the chain, every other request answered by one three blocks
// behind (a load balancer over replicas that lag): the platform must not take "not seen yet" for
// "not there" (a receipt, a nonce, a block), nor let the head go backwards.
let node: AnvilProcess;
let provider: RpcProxy;
let t: TestPlatform;

before(async () => {
  let relayerKey: string;
  ({ node, relayerKey } = await startExternalNode({ blockSeconds: 1 }));
  provider = await startRpcProxy(node.url, { behind: { blocks: 3 } });
  t = await startTestPlatform({ env: { RPC_URL_ETHEREUM: provider.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey } });
});
after(async () => {
  await t?.stop();
  await provider?.close();
  await node?.stop();
});

interface Account { address: string; secretKey: string }

test('one URL over two nodes three blocks apart: every transfer answered settled is on chain once, none answered failed, nothing sent twice, the lanes go on', async () => {
  const { platform } = t;
  const count = 16;
  const senders: Account[] = [];
  for (let i = 0; i < count; i++) senders.push((await call(t.app, '/token', 'createAddress', {})).resultData as Account);
  const receiver = (await call(t.app, '/token', 'createAddress', {})).resultData as Account;
  await Promise.all(senders.map((sender) => platform.wallet.mint('ethereum', { to: sender.address, amount: '5' })));
  const prepared = await Promise.all(senders.map(async (sender) => {
    const { data: _data, ...params } = await prepareTransfer(t.app, sender, receiver.address, '1');
    return params;
  }));
  const answers = await Promise.all(prepared.map(async (params, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 150));
    return call(t.app, '/token', 'transfer', params);
  }));
  assert.ok(provider.answeredBehind > 0, 'the node behind did answer');

  for (const answer of answers) assert.notEqual(answer.resultCode, '500', JSON.stringify(answer));
  const settled = answers.filter((a) => a.resultCode === '200');
  assert.equal(settled.length, count, `every transfer settled: ${JSON.stringify(answers.filter((a) => a.resultCode !== '200'))}`);

  // On the node itself: each settled transfer's transaction mined, and the receiver holds exactly one unit per transfer.
  const direct = createPublicClient({ chain: foundry, transport: http(node.url) });
  for (const hash of new Set(settled.map((a) => a.TransactionID as Hex))) {
    assert.equal((await direct.getTransactionReceipt({ hash })).status, 'success');
  }
  const { db } = platform.store;
  await waitFor(async () => (await db.selectFrom('chain_txs').select('id').where('status', '=', 'signed').execute()).length === 0,
    { timeoutMs: 30_000, message: 'every journaled transaction finished' });
  // Nothing sent twice: each lane's nonce on the node follows its last journaled one, every journaled transaction as the node has it.
  const journaled = await db.selectFrom('chain_txs').select(['tx_hash', 'status', 'relayer', 'nonce']).where('network', '=', 'ethereum').execute();
  for (const tx of journaled) {
    const receipt = await direct.getTransactionReceipt({ hash: tx.tx_hash as Hex });
    assert.equal(receipt.status === 'success' ? 'confirmed' : 'failed', tx.status, `${tx.tx_hash} recorded as mined`);
  }
  for (const lane of new Set(journaled.map((tx) => tx.relayer))) {
    const last = Math.max(...journaled.filter((tx) => tx.relayer === lane).map((tx) => Number(tx.nonce)));
    assert.equal(await direct.getTransactionCount({ address: lane as Hex }), last + 1, `no nonce gap or doubled nonce on lane ${lane}`);
  }
  assert.equal((await call(t.app, '/token', 'getBalance', { address: receiver.address })).resultData.balance, String(count));

  // The lanes go on: a transfer after the burst settles too.
  const more = (await call(t.app, '/token', 'createAddress', {})).resultData as Account;
  await platform.wallet.mint('ethereum', { to: more.address, amount: '2' });
  const { data: _data, ...params } = await prepareTransfer(t.app, more, receiver.address, '1');
  assert.equal((await call(t.app, '/token', 'transfer', params)).resultCode, '200');
});
