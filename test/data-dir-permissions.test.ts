import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestPlatform } from './support/platform.ts';
import { releaseDataDirSchema, testStore } from './support/stores.ts';
import { defaultAddOptions } from '../src/ipfs/ipfs-backend.ts';

// DATA_DIR holds password hashes, the transfer journal, unclaimed reward ids, keys and users' IPFS
// files: the directory and everything the platform creates in it are its owner's alone.

interface Entry { path: string; mode: number; directory: boolean }

function walk(root: string): Entry[] {
  const out: Entry[] = [{ path: '.', mode: lstatSync(root).mode & 0o777, directory: true }];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      const stat = lstatSync(full);
      out.push({ path: path.relative(root, full), mode: stat.mode & 0o777, directory: stat.isDirectory() });
      if (stat.isDirectory()) visit(full);
    }
  };
  visit(root);
  return out;
}

function assertPrivate(entries: Entry[], when: string): void {
  const open = entries.filter((e) => e.mode !== (e.directory ? 0o700 : 0o600));
  assert.deepEqual(open.map((e) => `${e.path} ${e.mode.toString(8)}`), [], `${when}: directories 0700, files 0600`);
}

async function* chunks(text: string): AsyncGenerator<Uint8Array> {
  yield new TextEncoder().encode(text);
}

test('DATA_DIR is 0700 and every file the platform writes in it 0600: SQLite with -wal/-shm (on SQLite), keys, IPFS blocks, anvil state', async () => {
  // As an operator's shell would leave things: umask 022, a DATA_DIR others may enter.
  process.umask(0o022);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-perm-'));
  chmodSync(dataDir, 0o755);
  const t = await startTestPlatform({ dataDir });
  try {
    await t.platform.wallet.createAddress();
    await t.platform.identity.users.createUser({ id: 'perm-user', password: 'correct horse battery', name: 'Perm' });
    const added = await t.platform.ipfs.addEntries(
      (async function* () {
        yield { kind: 'directory' as const, path: 'docs' };
        yield { kind: 'file' as const, path: 'docs/receipt.txt', content: chunks('a receipt\n'.repeat(50_000)) };
      })(),
      { ...defaultAddOptions(), pin: true },
    );
    assert.match(added.cid, /^Qm/);

    const running = walk(dataDir);
    const names = running.map((e) => e.path);
    // On PostgreSQL (VIXPAY_TEST_STORE=postgres) the database is not in DATA_DIR; everything else is.
    const database = testStore() === 'sqlite' ? ['vixpay.sqlite', 'vixpay.sqlite-wal', 'vixpay.sqlite-shm'] : [];
    // The JWT signing keys are in the database (sealed with the master key); DATA_DIR/jwt-signing-key.json
    // is only read, once, from an install older than that.
    for (const expected of [...database, 'master.key', 'relayer.key', 'ipfs/identity.pem', `ipfs/pins/${added.cid}`]) {
      assert.ok(names.includes(expected), `${expected} exists (${names.filter((n) => !n.startsWith('ipfs/blocks/')).join(', ')})`);
    }
    assert.ok(running.filter((e) => e.path.startsWith('ipfs/blocks/') && !e.directory).length >= 2, 'IPFS blocks were written');
    assertPrivate(running, 'while running');
  } finally {
    await t.stop({ keepData: true });
  }
  try {
    const stopped = walk(dataDir);
    const states = stopped.filter((e) => /^chains\/[a-z]+\/state\.json$/.test(e.path));
    assert.equal(states.length, 4, `each anvil dumped its state into DATA_DIR (${stopped.map((e) => e.path).filter((p) => p.startsWith('chains')).join(', ')})`);
    assertPrivate(stopped, 'after stop');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await releaseDataDirSchema(dataDir);
  }
});
