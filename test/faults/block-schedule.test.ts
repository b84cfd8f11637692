import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { addUser } from '../../src/identity/add-user.ts';
import { startExternalNode } from '../support/external-node.ts';
import { call, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { prepareTransfer } from '../support/transfer-scheme.ts';

// The settlement batcher's block schedule (src/chain/block-schedule.ts) on real external anvils
// (RPC_URL_ETHEREUM): it holds a batch for a predicted block only on a node that mines at intervals,
// checks every prediction against the node, and learns a node's interval within a few blocks.

/** A user with a custodial wallet holding `tokens` VIXP on the payment network. */
async function funded(t: TestPlatform, id: string, tokens: string) {
  const user = await addUser({ users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() },
    { id, password: 'schedule password', name: id });
  await t.platform.wallet.mint('ethereum', { to: user.address, amount: tokens });
  return user;
}

async function transfer(t: TestPlatform, from: { address: string; secretKey: string }, to: string): Promise<string> {
  const { data: _data, ...params } = await prepareTransfer(t.app, from, to, '1');
  const answer = await call(t.app, '/token', 'transfer', params);
  assert.equal(answer.resultCode, '200', JSON.stringify(answer));
  return answer.TransactionID as string;
}

/** Settlement transactions journaled on the payment network, per block. */
async function settlementsPerBlock(t: TestPlatform): Promise<Map<number, number>> {
  const rows = await t.platform.store.db.selectFrom('chain_txs').select('block_number')
    .where('network', '=', 'ethereum').where('kind', '=', 'settlement').where('block_number', 'is not', null).execute();
  const perBlock = new Map<number, number>();
  for (const row of rows) perBlock.set(Number(row.block_number), (perBlock.get(Number(row.block_number)) ?? 0) + 1);
  return perBlock;
}

test('a node that mines on demand: transfers at a regular 1 s rhythm, then at random gaps, are never held for a predicted block', async () => {
  const { node, relayerKey } = await startExternalNode();
  const t = await startTestPlatform({ env: { RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey } });
  try {
    const { blocks } = t.platform.chains.ethereum;
    const from = await funded(t, 'automine-sender', '100');
    const to = (await call(t.app, '/token', 'createAddress', {})).resultData.address as string;
    const decisions: string[] = [];
    // Regularly spaced: each transfer makes a block at once, 1 s after the last one (the rhythm a
    // schedule learnt from heads alone would take for the node's).
    const started = Date.now();
    for (let i = 0; i < 12; i++) {
      await sleep(Math.max(0, started + i * 1_000 - Date.now()));
      decisions.push(blocks.decision().mining);
      await transfer(t, from, to);
    }
    // Then at random gaps.
    for (const gap of [300, 1_100, 80, 700, 1_600]) {
      await sleep(gap);
      decisions.push(blocks.decision().mining);
      await transfer(t, from, to);
    }
    assert.ok(!decisions.includes('interval'), `no transfer was held for a predicted block: ${decisions.join(', ')}`);
    assert.equal(blocks.nextBlockAt(Date.now()), undefined);
    // Each settlement had a block of its own, mined at its send (automine).
    const perBlock = await settlementsPerBlock(t);
    assert.equal([...perBlock.values()].reduce((a, b) => a + b, 0), 17);
    assert.ok([...perBlock.values()].every((count) => count === 1));
  } finally {
    await t.stop();
    await node.stop();
  }
});

test('a platform started right after a node mining every 2 s, with load from its first second: one settlement transaction per block from the third block on', async () => {
  const { node, relayerKey } = await startExternalNode({ blockSeconds: 2 });
  const t = await startTestPlatform({ env: { RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey } });
  try {
    const { blocks, client } = t.platform.chains.ethereum;
    const from = await funded(t, 'interval-sender', '1000');
    const to = (await call(t.app, '/token', 'createAddress', {})).resultData.address as string;
    const firstBlock = await client.getBlockNumber();
    // About 10 transfers a second for 10 s, at exponential gaps (a Poisson arrival), from the start.
    let seed = 7;
    const random = () => ((seed = (seed * 16_807) % 2_147_483_647) / 2_147_483_647);
    const sent: Array<Promise<string>> = [];
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      sent.push(transfer(t, from, to));
      await sleep(-Math.log(1 - random()) * 100);
    }
    await Promise.all(sent);
    const perBlock = await settlementsPerBlock(t);
    const loaded = [...perBlock].filter(([block]) => block > Number(firstBlock)).sort(([a], [b]) => a - b);
    console.log(`${sent.length} transfers; settlement transactions per block from block ${firstBlock}: ${loaded.map(([b, n]) => `${b}:${n}`).join(' ')}; schedule ${JSON.stringify(blocks.decision())}`);
    assert.equal(blocks.decision().mining, 'interval');
    const fromThird = loaded.filter(([block]) => block >= Number(firstBlock) + 3);
    assert.deepEqual(fromThird.filter(([, count]) => count > 1), [], 'one settlement transaction per block from the third block on');
  } finally {
    await t.stop();
    await node.stop();
  }
});
