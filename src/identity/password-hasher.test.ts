import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPasswordHasher } from './password-hasher.ts';

const hasher = createPasswordHasher();

test('hashes with argon2id, m=19456 KiB, t=2, p=1, and a fresh salt each time', async () => {
  const a = await hasher.hash('correct horse battery');
  const b = await hasher.hash('correct horse battery');
  assert.match(a, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  assert.notEqual(a, b);
  assert.equal(hasher.needsRehash(a), false);
});

test('verifies the right password only', async () => {
  const stored = await hasher.hash('correct horse battery');
  assert.equal(await hasher.verify(stored, 'correct horse battery'), true);
  assert.equal(await hasher.verify(stored, 'correct horse batterY'), false);
  assert.equal(await hasher.verify('garbage', 'correct horse battery'), false);
});

test('compares passwords after NFKC normalisation', async () => {
  const stored = await hasher.hash('caf\u00e9 au lait');
  assert.equal(await hasher.verify(stored, 'cafe\u0301 au lait'), true);
});

test('flags hashes made with other parameters for rehashing', async () => {
  const weak = createPasswordHasher({ algorithm: 2 as never, memoryCost: 1024, timeCost: 1, parallelism: 1 });
  assert.equal(hasher.needsRehash(await weak.hash('whatever password')), true);
  assert.equal(hasher.needsRehash('not a phc string'), true);
});

test('an unknown user costs the same argon2 work as a wrong password', async () => {
  const stored = await hasher.hash('correct horse battery');
  await hasher.verify(undefined, 'warm up the dummy hash');
  // Work, not speed: the CPU time argon2 spends in this process (libuv pool threads included),
  // which the load of the machine does not change the way it changes wall-clock time.
  const work = async (run: () => Promise<boolean>) => {
    const start = process.cpuUsage();
    for (let i = 0; i < 3; i += 1) assert.equal(await run(), false);
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  const known = await work(() => hasher.verify(stored, 'wrong password'));
  const unknown = await work(() => hasher.verify(undefined, 'wrong password'));
  // Without the dummy hash the unknown case would cost microseconds of CPU, not tens of milliseconds.
  assert.ok(unknown > known / 4, `unknown id cost ${unknown.toFixed(1)} ms of CPU, known id ${known.toFixed(1)} ms`);
});
