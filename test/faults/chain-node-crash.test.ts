import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEventLogs, type Hex } from 'viem';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { rpcOver, stopServerProcess } from '../support/server-process.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, balanceRaw, fundedAccount, signedTransfer, startFaultRig, units, type FaultRig, type Funded } from './rig.ts';

// The embedded chain node itself crashes (kill -9 of its anvil) and comes back from its last
// checkpoint, without the blocks mined since: transfers the platform answered 200 are gone from the
// chain. The restart must mine them again from the relayer's journal (src/chain/anvil-rebuild-lost-blocks.ts)
// so that each happens exactly once, as it did, even though every one's authorization has expired by
// then (`validBefore`, 10 s here) and half of them spend what the other half brought.
let rig: FaultRig;
// No periodic checkpoint within the test: the only one is the clean stop's, before the transfers.
before(async () => { rig = await startFaultRig({ CHAIN_CHECKPOINT_SECONDS: '3600', SETTLEMENT_BATCH_MAX_ITEMS: '3' }); });
after(async () => { await rig?.stop(); });

const anvilFile = (name: string) => path.join(rig.dataDir, 'chains', 'ethereum', name);

async function transfer(from: Funded, to: string, amount: string): Promise<string> {
  const answer = await rpcOver(rig.server.baseUrl, '/token', 'transfer', await signedTransfer(rig, from, to, amount));
  assert.equal(answer.resultCode, '200', `transfer ${from.address} → ${to}: ${JSON.stringify(answer)}`);
  return answer.TransactionID as string;
}

test('a chain node killed after transfers answered 200 is rebuilt from the journal at their original times: each happens exactly once, after their authorizations expired', async () => {
  const count = 12;
  const senders = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 10)));
  const middles = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 0)));
  const finals = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 0)));
  await waitFor(async () => (await Promise.all(senders.map((s) => balanceRaw(rig, s.address)))).every((b) => b === units(10)),
    { timeoutMs: 60_000, message: 'the senders\' mints are on chain' });

  // A clean stop checkpoints the chain: the node will come back to this state.
  await stopServerProcess(rig.server);
  await rig.start();
  const checkpointBlock = Number(BigInt(JSON.parse(readFileSync(anvilFile('state.json'), 'utf8')).best_block_number));

  // Two rounds, each concurrent (spread over settlement batches and relayer lanes): the second moves
  // what the first brought, so mined again in another order it would find nothing to move.
  const first = await Promise.all(senders.map((s, i) => transfer(s, middles[i]!.address, '4')));
  const second = await Promise.all(middles.map((m, i) => transfer(m, finals[i]!.address, '4')));
  const { client } = rig.operator.chains.ethereum;
  const minedIn = await Promise.all([...first, ...second].map(async (hash) => (await client.getTransactionReceipt({ hash: hash as Hex })).blockNumber));
  assert.ok(minedIn.every((block) => Number(block) > checkpointBlock), 'every transfer was mined after the checkpoint');
  const lanes = new Set(await Promise.all([...new Set([...first, ...second])].map(async (hash) => (await client.getTransaction({ hash: hash as Hex })).from)));
  assert.ok(lanes.size >= 2, `the transfers went over ${lanes.size} relayer lanes`);

  // The node is killed: it will come back without any of those blocks.
  const pid = Number(readFileSync(anvilFile('anvil.pid'), 'utf8'));
  process.kill(pid, 'SIGKILL');
  // Every authorization of the burst expires before the node comes back.
  const validBefore = await rig.operator.store.db.selectFrom('authorizations').select('valid_before')
    .where('tx_hash', 'in', [...first, ...second]).execute();
  const expiry = Math.max(...validBefore.map((a) => Number(a.valid_before)));
  await waitFor(() => Date.now() / 1000 > expiry + 1, { timeoutMs: 30_000, intervalMs: 200, message: 'every authorization of the burst has expired' });

  await rig.start();
  const chain = rig.operator.chains.ethereum;
  for (let i = 0; i < count; i++) {
    assert.equal(await balanceRaw(rig, senders[i]!.address), units(6), `sender ${i} sent once`);
    assert.equal(await balanceRaw(rig, middles[i]!.address), 0n, `middle ${i} received and sent once`);
    assert.equal(await balanceRaw(rig, finals[i]!.address), units(4), `final ${i} received once`);
  }
  // Each TransactionID answered is on chain again and its receipt carries that transfer.
  const pairs = [...senders.map((s, i) => [s, middles[i]!, first[i]!] as const), ...middles.map((m, i) => [m, finals[i]!, second[i]!] as const)];
  for (const [from, to, hash] of pairs) {
    const receipt = await chain.client.getTransactionReceipt({ hash: hash as Hex });
    assert.equal(receipt.status, 'success');
    const moved = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs })
      .filter((log) => log.args.from.toLowerCase() === from.address.toLowerCase() && log.args.to.toLowerCase() === to.address.toLowerCase());
    assert.equal(moved.length, 1, `${hash} carries the transfer ${from.address} → ${to.address} once`);
    assert.equal(moved[0]!.args.value, units(4));
  }
  // The node's clock is back to now: a new block is not stamped with the rebuilt blocks' past times.
  await rig.operator.wallet.mint('ethereum', { to: senders[0]!.address, amount: '1' });
  const head = await chain.client.getBlock({ blockTag: 'latest' });
  assert.ok(Math.abs(Number(head.timestamp) - Date.now() / 1000) < 30, `a block after the rebuild is stamped now (${head.timestamp})`);
  await assertInvariants(rig);
});
