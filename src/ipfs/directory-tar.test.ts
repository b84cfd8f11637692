import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createEmbeddedBackend } from './embedded-backend.ts';
import { defaultAddOptions } from './ipfs-backend.ts';
import { bytes, entries, file } from '../../test/support/ipfs-backend-contract.ts';
import { directoryTar } from './directory-tar.ts';

const hasTar = spawnSync('tar', ['--version']).status === 0;

test('directoryTar writes an archive tar extracts, long and non-ASCII names included', { skip: hasTar ? false : 'no tar command on this machine' }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'vixpay-tar-'));
  try {
    const ipfs = await createEmbeddedBackend({ dataDir: path.join(dir, 'data') });
    const deep = `${'long-directory-name-'.repeat(6)}/${'x'.repeat(120)}.txt`;
    const odd = `${'n'.repeat(100)}.json`; // exactly over ustar's 100-byte name, no '/' to split at
    const tree = [file('nft/1.json', '{"name":"Token #1"}\n'), file(`nft/${deep}`, 'deep'), file(`nft/${odd}`, 'odd'), file('nft/사진.png', 'png'), file('nft/empty', ''), { kind: 'directory' as const, path: 'nft/none' }];
    const { cid } = await ipfs.addEntries(entries(...tree), defaultAddOptions());
    const archive = path.join(dir, 'nft.tar');
    await writeFile(archive, await bytes(directoryTar(ipfs, cid, 'nft')));
    const out = path.join(dir, 'out');
    assert.equal(spawnSync('mkdir', [out]).status, 0);
    const extracted = spawnSync('tar', ['-xf', archive, '-C', out]);
    assert.equal(extracted.status, 0, extracted.stderr.toString());
    assert.equal(await readFile(path.join(out, 'nft', '1.json'), 'utf8'), '{"name":"Token #1"}\n');
    assert.equal(await readFile(path.join(out, 'nft', deep), 'utf8'), 'deep');
    assert.equal(await readFile(path.join(out, 'nft', odd), 'utf8'), 'odd');
    assert.equal(await readFile(path.join(out, 'nft', '사진.png'), 'utf8'), 'png');
    assert.equal(await readFile(path.join(out, 'nft', 'empty'), 'utf8'), '');
    assert.equal(spawnSync('test', ['-d', path.join(out, 'nft', 'none')]).status, 0);
    await ipfs.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
