import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import type { AnvilProcess } from '../src/chain/anvil-process.ts';
import { startExternalNode } from './support/external-node.ts';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';

// The payment network on a node that mines a block every 2 s (anvil's interval mining, as a real
// network does), by RPC URL. Transfers arriving between two blocks share one settlement transaction:
// one per block (a batch that missed its block lands beside the next one's), and none lands in a
// later block than the one after its request (the next block it could reach, given the margin).
let node: AnvilProcess;
let t: TestPlatform;
const blockSeconds = 2;

before(async () => {
  let relayerKey: string;
  ({ node, relayerKey } = await startExternalNode({ blockSeconds }));
  t = await startTestPlatform({ env: { RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, SETTLEMENT_BLOCK_MARGIN_MS: '300' } });
});
after(async () => {
  await t?.stop();
  await node?.stop();
});

interface Account { address: string; secretKey: string }

async function transferOnce(from: Account, to: string) {
  const { data: _data, ...params } = await prepareTransfer(t.app, from, to, '1');
  const head = await t.platform.chains.ethereum.client.getBlockNumber({ cacheTime: 0 });
  const answer = await call(t.app, '/token', 'transfer', params);
  assert.equal(answer.resultCode, '200', JSON.stringify(answer));
  return { head, hash: answer.TransactionID as Hex };
}

test('on a chain mining every 2 s, transfers spread over several blocks share one settlement transaction per block, each in the next block it could reach', async () => {
  const { platform } = t;
  const { client } = platform.chains.ethereum;
  const count = 36;
  const senders: Account[] = [];
  const warmUp = 8;
  for (let i = 0; i < count + warmUp; i++) senders.push((await call(t.app, '/token', 'createAddress', {})).resultData as Account);
  const receiver = (await call(t.app, '/token', 'createAddress', {})).resultData as Account;
  await Promise.all(senders.map((sender) => platform.wallet.mint('ethereum', { to: sender.address, amount: '5' })));

  // A few transfers first: the platform learns the chain's interval from the heads it reads meanwhile
  // (four in a row on an idle machine; on a busy one, late sightings take a few more).
  const learnt = () => Math.abs((platform.chains.ethereum.blocks.intervalMs() ?? 0) - blockSeconds * 1000) < 200;
  let warmed = 0;
  for (const sender of senders.slice(count)) {
    await transferOnce(sender, receiver.address);
    if (++warmed >= 4 && learnt()) break;
  }
  assert.ok(learnt(), `the interval learnt: ${platform.chains.ethereum.blocks.intervalMs()} ms`);

  // 36 transfers, one every 150 ms: about 5 s, three blocks or so.
  const sent = await Promise.all(senders.slice(0, count).map(async (sender, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 150));
    return transferOnce(sender, receiver.address);
  }));

  const receipts = await Promise.all([...new Set(sent.map((s) => s.hash))].map((hash) => client.getTransactionReceipt({ hash })));
  const perBlock = new Map<bigint, number>();
  for (const receipt of receipts) perBlock.set(receipt.blockNumber, (perBlock.get(receipt.blockNumber) ?? 0) + 1);
  // One per block; a batch whose preparation overran the margin (a busy machine) lands beside the next
  // block's, once at most in this run. Sent each on its own (the 3 ms window), they would be ~12 per block.
  for (const [block, transactions] of perBlock) assert.ok(transactions <= 2, `block ${block} holds ${transactions} settlement transactions`);
  assert.ok(receipts.length <= perBlock.size + 1 && receipts.length < count / 4, `${count} transfers in ${receipts.length} settlement transactions over ${perBlock.size} blocks`);
  const blockOf = new Map(receipts.map((r) => [r.transactionHash, r.blockNumber]));
  // Asked after block `head`: block head+1 if it was sent before its margin, else head+2 (one block
  // more for the transfers of a batch that missed its block).
  const late = sent.filter(({ head, hash }) => blockOf.get(hash)! > head + 2n);
  for (const { head, hash } of sent) assert.ok(blockOf.get(hash)! <= head + 3n, `a transfer asked after block ${head} landed in block ${blockOf.get(hash)}`);
  assert.ok(late.length <= count / 4, `${late.length} transfers landed later than the block after the next`);
  assert.equal((await call(t.app, '/token', 'getBalance', { address: receiver.address })).resultData.balance, String(count + warmed));

  // What each settlement transaction cost is recorded from its receipt, and the metrics add it up.
  const recorded = await platform.store.db.selectFrom('chain_txs').select(['tx_hash', 'gas_used', 'fee_wei'])
    .where('tx_hash', 'in', receipts.map((r) => r.transactionHash)).execute();
  for (const receipt of receipts) {
    const row = recorded.find((r) => r.tx_hash === receipt.transactionHash);
    assert.equal(row?.gas_used, Number(receipt.gasUsed), `${receipt.transactionHash}: gas used recorded`);
    assert.equal(row?.fee_wei, String(receipt.gasUsed * receipt.effectiveGasPrice), `${receipt.transactionHash}: fee recorded`);
  }
  const metric = async (name: string) => (await platform.metrics.registry.getSingleMetric(name)!.get()).values;
  const gasMetric = (await metric('vixpay_relayer_gas_used_total')).find((v) => v.labels.network === 'ethereum')?.value ?? 0;
  assert.ok(gasMetric >= receipts.reduce((sum, r) => sum + Number(r.gasUsed), 0), `gas used metric ${gasMetric}`);
  const perBlockMetric = await metric('vixpay_settlement_transactions_per_block');
  const bucketOne = perBlockMetric.find((v) => v.labels.network === 'ethereum' && v.labels.le === 1)?.value;
  const observed = perBlockMetric.find((v) => v.labels.network === 'ethereum' && (v as { metricName?: string }).metricName?.endsWith('_count'))?.value;
  assert.ok(observed !== undefined && observed >= perBlock.size - 1, `blocks observed: ${observed}`);
  assert.ok(bucketOne !== undefined && bucketOne >= observed - 1, `blocks with one settlement transaction: ${bucketOne} of ${observed}`);
});
