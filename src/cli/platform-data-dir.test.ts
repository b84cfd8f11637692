import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertExistingPlatform } from './platform-data-dir.ts';

test('a platform directory needs its master and relayer key files with file custody, and neither with the keys in an HSM', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-data-dir-'));
  try {
    for (const file of ['vixpay.sqlite', 'master.key']) writeFileSync(path.join(dataDir, file), '');
    const base = { dataDir, databaseUrl: undefined, masterKey: undefined, relayerPrivateKey: undefined };
    assert.throws(() => assertExistingPlatform({ ...base, keyCustody: 'file' }), /no relayer\.key/);
    assert.doesNotThrow(() => assertExistingPlatform({ ...base, keyCustody: 'pkcs11' }));
    rmSync(path.join(dataDir, 'master.key'));
    assert.throws(() => assertExistingPlatform({ ...base, keyCustody: 'file', relayerPrivateKey: `0x${'11'.repeat(32)}` }), /no master\.key\)/);
    assert.doesNotThrow(() => assertExistingPlatform({ ...base, keyCustody: 'pkcs11' }), 'the key-encryption key is in the token');
    rmSync(path.join(dataDir, 'vixpay.sqlite'));
    assert.throws(() => assertExistingPlatform({ ...base, keyCustody: 'pkcs11' }), /no vixpay\.sqlite\)/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
