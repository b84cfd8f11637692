import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openStore, type Store } from '../store/db.ts';
import { createKeyVault } from '#shared/key-vault.ts';
import { createJwtService } from './jwt.ts';
import { generateSigningJwk, signingKeyFileName } from './signing-keys.ts';
import { createSigningKeyRepository } from '../store/signing-key-repository.ts';
import { openSigningKeys, retiredKeyGraceMs, rotateSigningKeys } from './signing-key-store.ts';

async function withStore(run: (deps: { store: Store; dir: string; file: string; now: { ms: number } }) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-keys-'));
  const store = await openStore({ dataDir: dir });
  try {
    await run({ store, dir, file: path.join(dir, signingKeyFileName), now: { ms: 1_800_000_000_000 } });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const vault = createKeyVault(randomBytes(32));
const ttlSeconds = 3600;

test('an install\'s key file is imported once: its first key signs, its others verify; the private keys are stored sealed', async () => {
  await withStore(async ({ store, file, now }) => {
    const [signer, older] = [await generateSigningJwk(), await generateSigningJwk()];
    writeFileSync(file, JSON.stringify({ keys: [signer, older] }));
    const deps = { repository: createSigningKeyRepository(store.db), vault, clock: () => now.ms, ttlSeconds, importFile: file };
    const keys = await openSigningKeys(deps);
    keys.close();
    assert.equal(keys.current().active.kid, signer.kid);
    assert.deepEqual([...keys.current().byKid.keys()], [signer.kid, older.kid]);
    const rows = await store.db.selectFrom('jwt_signing_keys').selectAll().execute();
    for (const row of rows) assert.doesNotMatch(row.private_jwk_enc, new RegExp(signer.d as string));
    // A second start reads the database, not the file.
    writeFileSync(file, JSON.stringify({ keys: [older] }));
    const again = await openSigningKeys(deps);
    again.close();
    assert.equal(again.current().active.kid, signer.kid);
  });
});

test('a key file whose signing key is not the fleet\'s is refused, naming the file', async () => {
  await withStore(async ({ store, file, now }) => {
    const deps = { repository: createSigningKeyRepository(store.db), vault, clock: () => now.ms, ttlSeconds, importFile: file };
    (await openSigningKeys(deps)).close();
    writeFileSync(file, JSON.stringify({ keys: [await generateSigningJwk()] }));
    await assert.rejects(openSigningKeys(deps), (error: Error) => error.message.includes(file) && /not one of the fleet's keys/.test(error.message));
  });
});

test('rotation: the new key signs, the old one verifies its tokens until a token lifetime (plus reload slack) has passed', async () => {
  await withStore(async ({ store, file, now }) => {
    const repository = createSigningKeyRepository(store.db);
    const deps = { repository, vault, clock: () => now.ms, ttlSeconds, importFile: file };
    const keys = await openSigningKeys(deps);
    keys.close();
    const jwt = createJwtService({ keys, clock: () => now.ms, ttlSeconds });
    const before = (await jwt.issueAccessToken('alice')).token;
    const oldKid = keys.current().active.kid;
    const rotation = await rotateSigningKeys(deps);
    assert.deepEqual(rotation.retired, [oldKid]);
    assert.equal(rotation.verifyUntil, now.ms + retiredKeyGraceMs(ttlSeconds));
    now.ms += 2000;
    await jwt.reloadKeys();
    assert.equal(keys.current().active.kid, rotation.kid);
    assert.deepEqual(jwt.jwks().keys.map((key) => key.kid), [rotation.kid, oldKid]);
    assert.equal((await jwt.verifyAccessToken(before)).userId, 'alice');
    // Past the grace, the old key is gone from the set (its tokens expired long before).
    now.ms = rotation.verifyUntil + 1;
    await keys.refresh();
    assert.deepEqual(jwt.jwks().keys.map((key) => key.kid), [rotation.kid]);
  });
});

// `vixpay keys rotate` runs in another process: an instance cannot know when. Whatever it loaded a
// moment before (its 30 s reload, a JWKS request, another token) must not stand in for a load after
// the rotation: the JWKS serves the new key at once, and a token the new key signed verifies at once.
test('right after a rotation by another instance, with no time passing, the JWKS lists the new key and a token it signed verifies: a load begun before the rotation does not count', async () => {
  await withStore(async ({ store, file, now }) => {
    const deps = { repository: createSigningKeyRepository(store.db), vault, clock: () => now.ms, ttlSeconds, importFile: file };
    const a = await openSigningKeys(deps);
    const b = await openSigningKeys(deps);
    a.close();
    b.close();
    const verifier = createJwtService({ keys: b, clock: () => now.ms });
    const oldKid = b.current().active.kid;
    // b is loading (its periodic reload) when the rotation commits.
    const loading = b.refresh();
    const rotation = await rotateSigningKeys(deps);
    await loading;
    await verifier.reloadKeys();
    assert.deepEqual(verifier.jwks().keys.map((key) => key.kid), [rotation.kid, oldKid]);
    await a.refresh();
    const token = (await createJwtService({ keys: a, clock: () => now.ms }).issueAccessToken('carol')).token;
    assert.equal((await verifier.verifyAccessToken(token)).userId, 'carol');
    // Calls that arrive while one load runs share the next one: one query each, not one per call.
    const loads: number[] = [];
    const repository = createSigningKeyRepository(store.db);
    const counted = await openSigningKeys({ ...deps, repository: { ...repository, list: () => { loads.push(1); return repository.list(); } } });
    counted.close();
    loads.length = 0;
    await Promise.all(Array.from({ length: 50 }, () => counted.refresh()));
    assert.ok(loads.length <= 2, `${loads.length} loads for 50 concurrent reloads`);
  });
});

// item 6 of issue 19: `JWT_TTL_SECONDS=60 vixpay keys rotate` against a fleet issuing 1-hour tokens
// made every outstanding token 401 after 125 s: the window came from the rotating command's setting.
test('a rotation by a command whose JWT_TTL_SECONDS is 60 keeps the old key verifying for the serving instance\'s own token lifetime (1 hour)', async () => {
  await withStore(async ({ store, file, now }) => {
    const repository = createSigningKeyRepository(store.db);
    // The serving instance: 1-hour tokens.
    const server = await openSigningKeys({ repository, vault, clock: () => now.ms, ttlSeconds: 3600, importFile: file });
    server.close();
    const jwt = createJwtService({ keys: server, clock: () => now.ms, ttlSeconds: 3600 });
    const outstanding = (await jwt.issueAccessToken('alice')).token;
    const oldKid = server.current().active.kid;
    // `vixpay keys rotate` elsewhere, with JWT_TTL_SECONDS=60 in its environment.
    const rotation = await rotateSigningKeys({ repository, vault, clock: () => now.ms, ttlSeconds: 60 });
    // Well past the command's window (60 s + 65 s), well within the token's hour.
    now.ms += 30 * 60_000;
    await jwt.reloadKeys();
    assert.equal(server.current().active.kid, rotation.kid);
    assert.deepEqual(jwt.jwks().keys.map((key) => key.kid), [rotation.kid, oldKid], 'the old key is still published');
    assert.equal((await jwt.verifyAccessToken(outstanding)).userId, 'alice', 'a token issued before the rotation still verifies');
    // Once the instance's own window has passed (its tokens all expired), the old key is dropped.
    now.ms += 30 * 60_000 + retiredKeyGraceMs(0) + 1;
    await server.refresh();
    assert.deepEqual(jwt.jwks().keys.map((key) => key.kid), [rotation.kid]);
  });
});
