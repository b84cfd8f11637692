import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { AnvilProcess } from '../../src/chain/anvil-process.ts';
import { addUser } from '../../src/identity/add-user.ts';
import { startExternalNode } from '../support/external-node.ts';
import { startDelayingProxy, type DelayingProxy } from '../support/delaying-proxy.ts';
import { call, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { freshPostgresSchema, type FreshSchema } from '../support/stores.ts';
import { prepareTransfer } from '../support/transfer-scheme.ts';
import { waitFor } from '../support/wait-for.ts';

// A provider's bad minute: the payment network's node (RPC_URL_ETHEREUM, not run by the platform)
// answers every call 3 s late while 24 transfers wait on it, on PostgreSQL (a pool of 10). Requests
// that never touch the node (a password login, the store's own probe) answer as usual: no database
// connection is held in a transaction and no account row is locked while a node call is under way,
// and /readyz names the chain, not the store.
let node: AnvilProcess;
let proxy: DelayingProxy;
let schema: FreshSchema;
let t: TestPlatform;
const password = 'slow node password';

before(async () => {
  let relayerKey: string;
  ({ node, relayerKey } = await startExternalNode());
  proxy = await startDelayingProxy(node.url);
  schema = await freshPostgresSchema('vixpay_slow');
  t = await startTestPlatform({
    env: { RPC_URL_ETHEREUM: proxy.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, DATABASE_URL: schema.databaseUrl, CHAIN_CALL_TIMEOUT_SECONDS: '5', RECEIPT_TIMEOUT_SECONDS: '20' },
  });
});
after(async () => {
  await t?.stop();
  await proxy?.close();
  await node?.stop();
  await schema?.drop();
});

test('a node answering each call 3 s late: logins, the store and /readyz answer as usual while 24 transfers wait on it, no transaction or row lock held meanwhile', async () => {
  const deps = { users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() };
  await addUser(deps, { id: 'slow-login', password, name: 'Login' });
  const senders = await Promise.all(Array.from({ length: 24 }, async (_, i) => addUser(deps, { id: `slow-${i}`, password, name: 'Sender' })));
  for (const sender of senders) await t.platform.wallet.mint('ethereum', { to: sender.address, amount: '10' });
  const receiver = (await call(t.app, '/token', 'createAddress', {})).resultData.address as string;
  // Signed while the node is quick: only the transfers themselves meet the slow node.
  const prepared = await Promise.all(senders.map(async (sender) => {
    const { data: _data, ...params } = await prepareTransfer(t.app, sender, receiver, '1');
    return params;
  }));

  proxy.delayMs = 3_000;
  const slowSince = performance.now();
  let transfersAnswered = 0;
  const transfers = prepared.map((params) => call(t.app, '/token', 'transfer', params).finally(() => { transfersAnswered++; }));
  await waitFor(() => proxy.inFlight > 0, { timeoutMs: 10_000, message: 'the transfers are waiting on the node' });

  const loginMs: number[] = [];
  const heldInTransaction: number[] = [];
  const waitingOnLocks: number[] = [];
  // For the slow minute's first 9 s: logins one after another, and what PostgreSQL's connections do.
  while (performance.now() - slowSince < 9_000) {
    const started = performance.now();
    const login = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: 'slow-login', password } });
    loginMs.push(Math.round(performance.now() - started));
    assert.equal(login.statusCode, 200, login.body);
    const { rows } = await sql<{ idle: number; locked: number }>`select
        count(*) filter (where state like 'idle in transaction%' and now() - state_change > interval '1 second')::int as idle,
        count(*) filter (where wait_event_type = 'Lock')::int as locked
      from pg_stat_activity where application_name = current_setting('application_name') and pid <> pg_backend_pid()`.execute(t.platform.store.db);
    heldInTransaction.push(rows[0]!.idle);
    waitingOnLocks.push(rows[0]!.locked);
    await sleep(250);
  }
  const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
  const stillWaiting = prepared.length - transfersAnswered;
  console.log(`logins during the slow node: ${loginMs.join(', ')} ms; transfers still waiting: ${stillWaiting}`);

  assert.ok(stillWaiting > 0, 'the node was still slow for the transfers while the logins were made');
  assert.ok(loginMs.length >= 5, `logins went on while the node was slow (${loginMs.length})`);
  assert.deepEqual(heldInTransaction.filter((n) => n > 0), [], 'no connection sat in a transaction across a node call');
  assert.deepEqual(waitingOnLocks.filter((n) => n > 0), [], 'no connection waited on a row lock');
  assert.equal(ready.statusCode, 503);
  const body = ready.json() as { down: string[]; checks: Record<string, { status: string }> };
  assert.ok(body.down.includes('chain:ethereum'), `the chain is named: ${ready.body}`);
  assert.equal(body.checks.store?.status, 'up', `the store is up: ${ready.body}`);

  // The node is quick again: every transfer gets an answer of the interface (settled, pending or unavailable), none an error.
  proxy.delayMs = 0;
  const answers = await Promise.all(transfers);
  const codes = answers.map((answer) => answer.resultCode as string);
  console.log(`transfer answers: ${[...new Set(codes)].map((code) => `${code}×${codes.filter((c) => c === code).length}`).join(' ')}`);
  assert.deepEqual(codes.filter((code) => !['200', '202', '503'].includes(code)), [], JSON.stringify(answers.find((a) => !['200', '202', '503'].includes(a.resultCode))));
});
