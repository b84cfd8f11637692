import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Hex } from 'viem';
import type { AnvilProcess } from '../../src/chain/anvil-process.ts';
import { startExternalNode } from '../support/external-node.ts';
import { rpcOver } from '../support/server-process.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, balanceRaw, fundedAccount, maybeLost, signedTransfer, startFaultRig, units, type FaultRig } from './rig.ts';

// The payment network on a node that mines every 2 s (as real networks do, by RPC URL), where the
// relayer holds each batch open until shortly before the next block. The server is killed (-9) in the
// middle of a stream of transfers: some answered 200, some journaled and sent but unanswered, some
// still waiting in an open batch. After the restart every transfer answered 200 is on chain exactly
// once, nothing is on chain twice, the journal has no gap, and the ones cut off either happened once
// or not at all (their senders keep their funds).
let node: AnvilProcess;
let rig: FaultRig;

before(async () => {
  let relayerKey: string;
  ({ node, relayerKey } = await startExternalNode({ blockSeconds: 2 }));
  rig = await startFaultRig({ RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, AUTHORIZATION_TTL_SECONDS: '20', RECEIPT_TIMEOUT_SECONDS: '15' });
});
after(async () => {
  await rig?.stop();
  await node?.stop();
});

test('kill -9 of the server in the middle of transfers batched per 2 s block: each answered 200 is on chain once, none twice', async (t) => {
  const count = 30;
  const senders = await Promise.all(Array.from({ length: count + 4 }, () => fundedAccount(rig, 10)));
  const receivers = await Promise.all(Array.from({ length: count + 4 }, () => fundedAccount(rig, 0)));
  await waitFor(async () => (await balanceRaw(rig, senders.at(-1)!.address)) === units(10), { timeoutMs: 60_000, message: 'the mints are on chain' });
  // A few first: the server learns the chain's interval.
  for (let i = count; i < count + 4; i++) {
    assert.equal((await rpcOver(rig.server.baseUrl, '/token', 'transfer', await signedTransfer(rig, senders[i]!, receivers[i]!.address, '1'))).resultCode, '200');
  }
  const signed = await Promise.all(senders.slice(0, count).map((s, i) => signedTransfer(rig, s, receivers[i]!.address, '3')));

  // One every 150 ms (about 4.5 s, two or three blocks); the server dies 2.5 s in.
  const answers = signed.map(async (request, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 150));
    return maybeLost(rpcOver(rig.server.baseUrl, '/token', 'transfer', request));
  });
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  rig.server.child.kill('SIGKILL');
  const settled = await Promise.all(answers);
  const ok = settled.filter((a) => !('lost' in a) && a.resultCode === '200').length;
  t.diagnostic(`${ok} answered 200, ${settled.length - ok} cut off`);
  assert.ok(ok > 0 && ok < count, `the kill fell in the middle of the stream (${ok} of ${count} answered 200)`);

  await rig.start();
  await assertInvariants(rig);
  const { client } = rig.operator.chains.ethereum;
  for (const [i, answer] of settled.entries()) {
    const received = await balanceRaw(rig, receivers[i]!.address);
    assert.ok(received === 0n || received === units(3), `receiver ${i} got ${received}: once or not at all`);
    assert.equal(await balanceRaw(rig, senders[i]!.address), units(10) - received, `sender ${i} paid what receiver ${i} got`);
    if (!('lost' in answer) && answer.resultCode === '200') {
      assert.equal(received, units(3), `transfer ${i} answered 200 is on chain`);
      assert.equal((await client.getTransactionReceipt({ hash: answer.TransactionID as Hex })).status, 'success');
    }
  }
});
