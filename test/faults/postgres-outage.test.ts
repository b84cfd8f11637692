import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rpcOver } from '../support/server-process.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, balanceRaw, fundedAccount, maybeLost, serverLog, signedTransfer, startFaultRig, units, type FaultRig } from './rig.ts';

// The platform on a PostgreSQL server of this test's own, which the test cuts under it: every
// connection terminated while idle (what a failover, a pooler or an idle timeout does every day), and
// the whole server restarted in the middle of a burst of transfers. The process never exits, the
// requests a lost database breaks answer the interface's error shape, /readyz says so while the
// database is gone, and the platform takes traffic again by itself once it is back; every transfer
// answered 200 is on chain exactly once.
let postgres: PrivatePostgres;
let rig: FaultRig;
before(async () => {
  postgres = await startPrivatePostgres();
  rig = await startFaultRig({ DATABASE_URL: postgres.url });
});
after(async () => {
  await rig?.stop();
  postgres?.stop();
});

const alive = () => rig.server.child.exitCode === null && rig.server.child.signalCode === null;

async function transfer(from: { address: string; secretKey: string }, to: string, amount: string) {
  return rpcOver(rig.server.baseUrl, '/token', 'transfer', await signedTransfer(rig, from, to, amount));
}

test('every connection of a running platform terminated while idle: the process lives on and the next transfer works', async () => {
  const sender = await fundedAccount(rig, 10);
  const receiver = await fundedAccount(rig, 0);
  assert.equal((await transfer(sender, receiver.address, '1')).resultCode, '200');

  // The server's pool now holds idle connections, and so does the operator's (this process).
  const terminated = await postgres.terminateConnections();
  assert.ok(terminated >= 2, `${terminated} connections terminated`);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.ok(alive(), `the server is still running after its connections were terminated:\n${serverLog(rig)}`);

  const answer = await transfer(sender, receiver.address, '2');
  assert.equal(answer.resultCode, '200', JSON.stringify(answer));
  assert.equal(await balanceRaw(rig, receiver.address), units(3));
  await assertInvariants(rig);
});

test('PostgreSQL restarted in the middle of a burst: no exit, answers in the interface\'s shape, /readyz 503 meanwhile, and every transfer answered 200 on chain once', async (t) => {
  const count = 24;
  const senders = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 10)));
  const receivers = await Promise.all(Array.from({ length: count }, () => fundedAccount(rig, 0)));
  await waitFor(async () => (await balanceRaw(rig, senders.at(-1)!.address)) === units(10), { timeoutMs: 30_000, message: 'the mints are on chain' });
  const signed = await Promise.all(senders.map((s, i) => signedTransfer(rig, s, receivers[i]!.address, '3')));

  // The burst, spread over 1.5 s, with the database stopped for 2 s from its middle.
  const answers = signed.map(async (request, i) => {
    await new Promise((resolve) => setTimeout(resolve, (i * 1500) / count));
    return maybeLost(rpcOver(rig.server.baseUrl, '/token', 'transfer', request).then(
      (result) => ({ code: String(result.resultCode), result }),
      (error: Error) => ({ code: error.message.split(':')[1]?.trim().split(' ')[0] ?? 'none', error: error.message }),
    ));
  });
  await new Promise((resolve) => setTimeout(resolve, 700));
  const restarted = postgres.restart(2000);
  // While it is down: /readyz answers 503 and names the store.
  await waitFor(async () => {
    const readyz = await fetch(`${rig.server.baseUrl}/readyz`);
    return readyz.status === 503 && ((await readyz.json()) as { checks: Record<string, { status: string }> }).checks.store?.status === 'down';
  }, { timeoutMs: 10_000, intervalMs: 100, message: '/readyz answers 503 with the store down' });
  await restarted;
  const settled = await Promise.all(answers);
  assert.ok(alive(), `the server is still running after the restart:\n${serverLog(rig)}`);
  const tally = new Map<string, number>();
  for (const answer of settled) tally.set('lost' in answer ? 'lost' : answer.code, (tally.get('lost' in answer ? 'lost' : answer.code) ?? 0) + 1);
  t.diagnostic(`answers: ${JSON.stringify(Object.fromEntries(tally))}`);

  // Every answer is one the token API documents; none is a lost connection or an internal error.
  const documented = new Set(['200', '202', '503']);
  for (const [i, answer] of settled.entries()) {
    assert.ok(!('lost' in answer), `transfer ${i} answered, its connection not cut: ${JSON.stringify(answer)}`);
    assert.ok(documented.has(answer.code), `transfer ${i} answered a documented code: ${JSON.stringify(answer)}`);
  }

  // Ready again by itself, and a new transfer goes through.
  await waitFor(async () => (await fetch(`${rig.server.baseUrl}/readyz`)).status === 200, { timeoutMs: 30_000, message: '/readyz is ready again' });
  const late = await fundedAccount(rig, 5);
  assert.equal((await transfer(late, receivers[0]!.address, '1')).resultCode, '200');

  // Exactly once: each receiver got its 3 once or nothing, and everything answered 200 arrived.
  await assertInvariants(rig);
  for (const [i, answer] of settled.entries()) {
    const received = await balanceRaw(rig, receivers[i]!.address) - (i === 0 ? units(1) : 0n);
    assert.ok(received === 0n || received === units(3), `receiver ${i} got ${received}`);
    if (!('lost' in answer) && answer.code === '200') assert.equal(received, units(3), `transfer ${i} answered 200 is on chain`);
    assert.equal(await balanceRaw(rig, senders[i]!.address), units(10) - received, `sender ${i} paid what receiver ${i} got`);
  }
});
