import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createTestClient, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from '../../src/chain/anvil-process.ts';
import { startExternalNode } from '../support/external-node.ts';
import { freePort, rpcOver } from '../support/server-process.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, balanceRaw, fundedAccount, serverLog, signedTransfer, startFaultRig, units, type FaultRig, type Funded } from './rig.ts';

// The payment network on a node the platform does not run (RPC_URL_ETHEREUM), which loses its latest
// blocks under the running platform: killed, and back from a state saved before a burst of transfers
// the platform answered 200 (what a provider failing over to a lagging node, or a reorg deeper than
// CONFIRMATIONS, does too). The platform sees each lane's nonce on chain fall below its journal's,
// sends the lost transactions again from their journaled bytes, in nonce order, and takes new
// transfers meanwhile: every transfer answered 200 ends on chain exactly once, no lane stays behind
// a nonce gap, a status lookup says `pending` until they are mined again, and /readyz reports the
// backlog while it is stuck.
let node: AnvilProcess;
let rig: FaultRig;
let port: number;
const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-rollback-'));
const saved = path.join(dir, 'state.json');

before(async () => {
  port = await freePort();
  let relayerKey: string;
  ({ node, relayerKey } = await startExternalNode({ port }));
  rig = await startFaultRig({ RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, AUTHORIZATION_TTL_SECONDS: '120' });
});
after(async () => {
  await rig?.stop();
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function transfer(from: Funded, to: string, amount: string): Promise<string> {
  const answer = await rpcOver(rig.server.baseUrl, '/token', 'transfer', await signedTransfer(rig, from, to, amount));
  assert.equal(answer.resultCode, '200', `transfer ${from.address} → ${to}: ${JSON.stringify(answer)}`);
  return answer.TransactionID as string;
}

test('an external node that lost the blocks of transfers answered 200: they are sent again from the journal, each lands once, no lane stays stuck', async () => {
  const count = 12;
  const senders = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 10)));
  const receivers = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 0)));
  await waitFor(async () => (await Promise.all(senders.map((s) => balanceRaw(rig, s.address)))).every((b) => b === units(10)),
    { timeoutMs: 60_000, message: 'the senders\' mints are on chain' });

  // The node's state now: it will come back to this.
  const { client } = rig.operator.chains.ethereum;
  const dump = await client.request({ method: 'anvil_dumpState' as never }) as unknown as Hex;
  writeFileSync(saved, gunzipSync(Buffer.from(dump.slice(2), 'hex')));
  const savedBlock = BigInt(await client.request({ method: 'eth_blockNumber' }));

  const sent = await Promise.all(senders.map((s, i) => transfer(s, receivers[i]!.address, '4')));
  const minedIn = await Promise.all(sent.map(async (hash) => (await client.getTransactionReceipt({ hash: hash as Hex })).blockNumber));
  assert.ok(minedIn.every((block) => block > savedBlock), 'every transfer was mined after the saved state');

  // The node loses those blocks: killed, and back on the same URL from the saved state.
  process.kill(node.pid, 'SIGKILL');
  await node.exited;
  node = await startAnvil({ chainId: foundry.id, port, loadStatePath: saved });
  // Asked of the node itself: the operator's client never reads a head below one it has seen (src/chain/monotonic-reads.ts).
  const controls = createTestClient({ mode: 'anvil', chain: foundry, transport: http(node.url) });
  assert.ok(BigInt(await controls.request({ method: 'eth_blockNumber' } as never) as Hex) <= savedBlock, 'the node came back without the burst\'s blocks');

  // It does not mine for now: what the platform sends again waits in its pool.
  await controls.setAutomine(false);
  const statusOf = async (i: number) => (await rpcOver(rig.server.baseUrl, '/token', 'getTransferStatus',
    { transactionId: sent[i]!, fromAddress: senders[i]!.address })).resultData.status as string;
  // The platform notices the lanes' nonces fell below its journal's: the lost transfers are pending
  // again (no longer `confirmed`), and sent again.
  await waitFor(async () => (await Promise.all(sent.map((_, i) => statusOf(i)))).every((status) => status === 'pending'),
    { timeoutMs: 30_000, intervalMs: 200, message: `every lost transfer's status says pending:\n${serverLog(rig)}` });
  assert.deepEqual(await Promise.all(receivers.map((r) => balanceRaw(rig, r.address))), receivers.map(() => 0n), 'the chain holds none of them yet');
  await waitFor(async () => (await client.request({ method: 'txpool_status' as never }) as unknown as { pending: Hex }).pending !== '0x0',
    { timeoutMs: 30_000, intervalMs: 200, message: 'the lost transactions are sent again' });

  // While they cannot be mined, /readyz says the relayer's backlog is stuck (here after 2 × 10 s).
  await waitFor(async () => {
    const readyz = await fetch(`${rig.server.baseUrl}/readyz`);
    const checks = ((await readyz.json()) as { checks: Record<string, { status: string; error?: string }> }).checks;
    return readyz.status === 503 && checks.relayer?.status === 'down' && /unmined for over 20 s/.test(checks.relayer.error ?? '');
  }, { timeoutMs: 40_000, intervalMs: 500, message: '/readyz reports the stuck backlog' });

  // Mining again: each lands, from its journaled bytes (the same TransactionID), and is confirmed.
  await controls.setAutomine(true);
  await controls.mine({ blocks: 1 });
  await waitFor(async () => (await Promise.all(sent.map((_, i) => statusOf(i)))).every((status) => status === 'confirmed'),
    { timeoutMs: 60_000, intervalMs: 300, message: `every transfer answered 200 is confirmed again:\n${serverLog(rig)}` });
  for (const hash of sent) assert.equal((await client.getTransactionReceipt({ hash: hash as Hex })).status, 'success', `${hash} is on chain again`);
  await waitFor(async () => (await fetch(`${rig.server.baseUrl}/readyz`)).status === 200, { timeoutMs: 30_000, message: '/readyz is ready again' });

  // Exactly once: each sender paid 4 once, each receiver got 4 once.
  for (let i = 0; i < count; i++) {
    assert.equal(await balanceRaw(rig, senders[i]!.address), units(6), `sender ${i} paid once`);
    assert.equal(await balanceRaw(rig, receivers[i]!.address), units(4), `receiver ${i} got it once`);
  }
  // No lane stuck: a new transfer goes through at once, and the journal agrees with the chain.
  const late = await fundedAccount(rig, 3);
  await waitFor(async () => (await balanceRaw(rig, late.address)) === units(3), { timeoutMs: 30_000, message: 'the late mint is on chain' });
  await transfer(late, receivers[0]!.address, '1');
  await assertInvariants(rig);
});
