import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Pkcs11js from 'pkcs11js';
import { openPkcs11Token, type Pkcs11Token } from './pkcs11-token.ts';
import { secretsKeyLabel, tokenKeyVault, type TokenKeyVault } from './token-key-vault.ts';
import { createKeyVault } from '#shared/key-vault.ts';
import { DomainError } from '#shared/errors.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from '../../test/support/softhsm.ts';
import { skipWithout } from '../../test/support/parts.ts';

// The platform's secrets sealed by a key-encryption key generated in a SoftHSM2 token (KEY_CUSTODY=pkcs11).
const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let token: Pkcs11Token;
let vault: TokenKeyVault;
before(async () => {
  if (skip) return;
  soft = makeSoftToken();
  token = openPkcs11Token(soft);
  vault = tokenKeyVault(token);
  await vault.ready();
});
after(() => {
  token?.close();
  soft?.close();
});

const lib = () => createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
const unavailable = (error: unknown) => error instanceof DomainError && error.code === 'custody.unavailable';

test('a secret sealed in the token opens there to the same text; its sealed form holds none of it and differs at each seal', { skip }, () => {
  for (const secret of ['', 'whsec_0123456789abcdef', JSON.stringify({ kty: 'EC', d: randomBytes(32).toString('base64url') }), 'ünïcødé ✓']) {
    const sealed = vault.encrypt(secret);
    assert.match(sealed, new RegExp(`^hsm:v1:${secretsKeyLabel}:[A-Za-z0-9+/]+=*:[A-Za-z0-9+/]+=*$`));
    assert.ok(vault.holds(sealed));
    assert.equal(vault.decrypt(sealed), secret);
    assert.notEqual(vault.encrypt(secret), sealed, 'a random IV per seal');
    if (secret.length > 4) assert.equal(Buffer.from(sealed.split(':').at(-1)!, 'base64').includes(Buffer.from(secret)), false);
  }
});

test('a changed sealed form, or one sealed by the master key of file custody, does not open', { skip }, () => {
  const sealed = vault.encrypt('the webhook secret');
  const body = Buffer.from(sealed.split(':').at(-1)!, 'base64');
  body[0]! ^= 1;
  assert.throws(() => vault.decrypt(`${sealed.split(':').slice(0, -1).join(':')}:${body.toString('base64')}`), /CKR_(GENERAL_ERROR|ENCRYPTED_DATA_INVALID)/);
  assert.equal(vault.decrypt(sealed), 'the webhook secret', 'the refusal left the token usable');
  const fileSealed = createKeyVault(randomBytes(32)).encrypt('the webhook secret');
  assert.equal(vault.holds(fileSealed), false);
  assert.throws(() => vault.decrypt(fileSealed), /not sealed by the token/);
});

test('the key-encryption key is the token\'s: one, sensitive, not extractable, found again by a second vault (same fingerprint)', { skip }, async () => {
  await token.run(async ({ p11, handle }) => {
    const p = lib();
    p11.C_FindObjectsInit(handle, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_LABEL, value: secretsKeyLabel }]);
    const found = p11.C_FindObjects(handle, 4);
    p11.C_FindObjectsFinal(handle);
    assert.equal(found.length, 1);
    const [sensitive, extractable, isToken, wrap] = p11.C_GetAttributeValue(handle, found[0]!, [
      { type: p.CKA_SENSITIVE }, { type: p.CKA_EXTRACTABLE }, { type: p.CKA_TOKEN }, { type: p.CKA_WRAP },
    ]);
    assert.deepEqual([sensitive!.value, extractable!.value, isToken!.value, wrap!.value], [Buffer.from([1]), Buffer.from([0]), Buffer.from([1]), Buffer.from([0])]);
    assert.throws(() => p11.C_GetAttributeValue(handle, found[0]!, [{ type: p.CKA_VALUE }]), /CKR_ATTRIBUTE_SENSITIVE/);
  });
  const again = tokenKeyVault(token);
  await again.ready();
  assert.equal(again.decrypt(vault.encrypt('shared')), 'shared');
  assert.equal(await again.fingerprint(), await vault.fingerprint());
  assert.match(await vault.fingerprint(), /^[0-9a-f]{64}$/);
});

test('with the token removed sealing and opening are custody.unavailable; back, they work again without reopening', { skip }, async () => {
  const sealed = vault.encrypt('kept');
  const [tokenDir] = readdirSync(soft.tokensDir);
  const away = `${soft.dir}/away`;
  renameSync(`${soft.tokensDir}/${tokenDir!}`, away);
  const p = lib();
  const p11 = new p.PKCS11();
  p11.load(soft.module);
  try { p11.C_Initialize(); } catch (error) { if ((error as Error).message !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw error; }
  for (const slot of p11.C_GetSlotList(false)) { try { p11.C_CloseAllSessions(slot); } catch { /* empty slot */ } }
  try {
    assert.throws(() => vault.decrypt(sealed), unavailable);
    assert.throws(() => vault.encrypt('x'), unavailable);
  } finally {
    renameSync(away, `${soft.tokensDir}/${tokenDir!}`);
  }
  // A later call (after the background reconnection, or one made by any other use of the token) works.
  await token.probe();
  assert.equal(vault.decrypt(sealed), 'kept');
  assert.equal(vault.decrypt(vault.encrypt('again')), 'again');
});
