import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { startTcpProxy, type TcpProxy } from './chaos/tcp-proxy.ts';
import { testDatabaseUrl } from './support/stores.ts';

// The chaos fleet's link between an instance and a part (test/chaos/tcp-proxy.ts), in front of the
// test PostgreSQL as an instance uses it: passing, a query answers; delayed, it answers after the
// delay; cut, the open connection is reset and a new one refused; partitioned, a query waits and
// the connection is reset at the heal; healed, a new connection answers.
let proxy: TcpProxy;
const target = new URL(testDatabaseUrl);
const through = () => {
  const url = new URL(testDatabaseUrl);
  url.host = `127.0.0.1:${proxy.port}`;
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  return client;
};

before(async () => { proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) }); });
after(async () => { await proxy?.close(); });

test('a link passes, delays in order, cuts (reset, new connections refused), partitions (silence, reset at the heal) and heals', async () => {
  const client = through();
  await client.connect();
  assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);

  proxy.set({ kind: 'delay', delayMs: 300 });
  const started = Date.now();
  const answers = await Promise.all([client.query('SELECT 1 AS n'), client.query('SELECT 2 AS n')]);
  assert.deepEqual(answers.map((a) => a.rows[0].n), [1, 2]);
  assert.ok(Date.now() - started >= 300, 'held for the delay');

  proxy.set({ kind: 'cut' });
  await assert.rejects(client.query('SELECT 1'));
  const refused = through();
  await assert.rejects(refused.connect());

  proxy.set({ kind: 'pass' });
  const partitioned = through();
  await partitioned.connect();
  proxy.set({ kind: 'partition' });
  const waiting = partitioned.query('SELECT 1').then(() => 'answered', () => 'reset');
  const early = await Promise.race([waiting, new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))]);
  assert.equal(early, 'waiting', 'a partitioned query hears nothing');
  proxy.set({ kind: 'pass' });
  assert.equal(await waiting, 'reset', 'the heal resets what the partition held');

  const healed = through();
  await healed.connect();
  assert.equal((await healed.query('SELECT 3 AS n')).rows[0].n, 3);
  await healed.end();
});

test('an echo through the proxy keeps byte order across a delay change', async () => {
  const echo = net.createServer((socket) => socket.pipe(socket));
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  const link = await startTcpProxy({ host: '127.0.0.1', port: (echo.address() as AddressInfo).port });
  try {
    const socket = net.connect({ host: '127.0.0.1', port: link.port });
    await once(socket, 'connect');
    let heard = '';
    socket.on('data', (d: Buffer) => { heard += d.toString(); });
    link.set({ kind: 'delay', delayMs: 200 });
    socket.write('a');
    await new Promise((resolve) => setTimeout(resolve, 20));
    link.set({ kind: 'pass' });
    socket.write('b');
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(heard, 'ab');
    socket.destroy();
  } finally {
    await link.close();
    echo.close();
  }
});
