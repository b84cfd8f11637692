import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { backup, DatabaseSync } from 'node:sqlite';
import { createKeyVault, loadMasterKey } from '../src/shared/key-vault.ts';
import { call, startTestPlatform } from './support/platform.ts';
import { testStore } from './support/stores.ts';

// docs/operations.md "Backup and restore": an online backup of a running platform's SQLite file with
// node:sqlite's backup API is a complete, consistent database whose secrets open with the master key.
test('an online backup of a running platform opens and holds its wallets, decryptable with DATA_DIR/master.key', {
  // The backup of the SQLite file; a PostgreSQL deployment is backed up with PostgreSQL's own tools.
  skip: testStore() === 'postgres' && 'SQLite only: the backup of DATA_DIR/vixpay.sqlite (VIXPAY_TEST_STORE=postgres)',
}, async () => {
  const running = await startTestPlatform();
  const backupDir = mkdtempSync(path.join(tmpdir(), 'vixpay-backup-'));
  try {
    const created = await call(running.app, '/token', 'createAddress', {});
    const address: string = created.resultData.address;
    const live = new DatabaseSync(path.join(running.dataDir, 'vixpay.sqlite'));
    const copyFile = path.join(backupDir, 'vixpay.sqlite');
    try {
      await backup(live, copyFile);
    } finally {
      live.close();
    }
    // The platform keeps answering while and after the backup is taken.
    await call(running.app, '/token', 'createAddress', {});

    const copy = new DatabaseSync(copyFile, { readOnly: true });
    try {
      assert.deepEqual({ ...copy.prepare('PRAGMA integrity_check').get() }, { integrity_check: 'ok' });
      const row = copy.prepare('SELECT private_key_enc FROM accounts WHERE address = ?').get(address) as { private_key_enc: string } | undefined;
      assert.ok(row, `account ${address} is in the backup`);
      const vault = createKeyVault(loadMasterKey({ dataDir: running.dataDir }));
      assert.match(vault.decrypt(row.private_key_enc), /^0x[0-9a-f]{64}$/);
    } finally {
      copy.close();
    }
  } finally {
    rmSync(backupDir, { recursive: true, force: true });
    await running.stop();
  }
});
