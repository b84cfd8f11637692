import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { readThenWrite } from '../../test/support/read-then-write.ts';
import { sql } from 'kysely';
import { isDomainError } from '#shared/errors.ts';
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

// A full disk: SQLite's file on a 4 MiB tmpfs filled to the last byte by another file. A write is then
// the typed `store.full` (nothing of it written), also inside a transaction, whose error stays the
// disk's (Kysely's rollback after SQLite's own rolled it back had reported "no transaction is
// active"); once the other file is gone, writes work again on the same connection.
test('a write on a full disk is store.full, nothing of it written, and writes work again once there is room', async (t) => {
  const mount = mkdtempSync(path.join(tmpdir(), 'vixpay-sqlite-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', mount], { stdio: 'pipe' });
  } catch (error) {
    rmSync(mount, { recursive: true, force: true });
    t.skip(`mounting a tmpfs is refused here (needs root or CAP_SYS_ADMIN): ${(error as Error).message.split('\n')[0]}`);
    return;
  }
  const store = await openStore({ dataDir: mount }).catch(async (error: unknown) => {
    execFileSync('umount', ['-l', mount]);
    throw error;
  });
  const ballast = path.join(mount, 'ballast');
  const nonces = () => store.db.selectFrom('relayer_nonces').select('address').execute();
  const insert = (db: Pick<typeof store.db, 'insertInto'>, address: string) =>
    db.insertInto('relayer_nonces').values({ network: 'ethereum', address, next_nonce: 0 }).execute();
  try {
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(store.db);
    const fd = openSync(ballast, 'w');
    try {
      for (let chunk = 1 << 20; chunk >= 512; chunk >>= 1) {
        for (;;) {
          try { writeSync(fd, Buffer.alloc(chunk, 1)); } catch { break; }
        }
      }
    } finally {
      closeSync(fd);
    }
    const big = 'x'.repeat(64 * 1024);
    await assert.rejects(insert(store.db, big), (error: unknown) => isDomainError(error) && error.code === 'store.full');
    await assert.rejects(store.db.transaction().execute(async (trx) => {
      await insert(trx, `a-${big}`);
      await insert(trx, `b-${big}`);
    }), (error: unknown) => isDomainError(error) && error.code === 'store.full', 'the transaction fails with the disk\'s error');
    assert.deepEqual(await nonces(), [], 'nothing of either was written');

    rmSync(ballast);
    await store.db.transaction().execute(async (trx) => { await insert(trx, big); });
    assert.equal((await nonces()).length, 1, 'writes work again');
  } finally {
    await store.close();
    rmSync(ballast, { force: true });
    execFileSync('umount', ['-l', mount]);
    rmSync(mount, { recursive: true, force: true });
  }
});
