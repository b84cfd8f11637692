import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { readThenWrite } from '../../test/support/read-then-write.ts';
import { openStore } from './db.ts';

// Two processes on one SQLite file: the server and an operator's `vixpay` command (the fault rig's
// operator too). A transaction that reads before it writes must wait for the other's write lock, as
// busy_timeout promises. Begun deferred, it holds a read snapshot, and SQLite fails its upgrade to a
// write at once ("database is locked", SQLITE_BUSY_SNAPSHOT) when the other side committed after it.
// The other side here is a worker thread: its own event loop and connection, as another process has.
test('a transaction that reads, then writes, waits for another process\'s commit instead of failing "database is locked"', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-sqlite-'));
  const rounds = 40;
  const server = await openStore({ dataDir });
  try {
    const other = new Worker(`
      const { workerData } = require('node:worker_threads');
      (async () => {
        const { openStore } = await import(workerData.db);
        const { readThenWrite } = await import(workerData.readThenWrite);
        const store = await openStore({ dataDir: workerData.dataDir });
        try { await readThenWrite(store, 'operator', workerData.rounds); } finally { await store.close(); }
      })();`,
    { eval: true, workerData: { db: new URL('./db.ts', import.meta.url).href, readThenWrite: new URL('../../test/support/read-then-write.ts', import.meta.url).href, dataDir, rounds } });
    const otherDone = new Promise<void>((resolve, reject) => {
      other.once('error', reject);
      other.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the other process exited ${code}`))));
    });
    await Promise.all([readThenWrite(server, 'server', rounds), otherDone]);
    const rows = await server.db.selectFrom('relayer_nonces').select('address').execute();
    assert.equal(rows.length, 2 * rounds, 'every transaction of both sides committed');
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
