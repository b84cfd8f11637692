import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError, type DomainErrorCode } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import { loadConfig } from '../config/config.ts';
import { addWallet, openWalletStore, type StoredWallet, type WalletStore } from '../../test/support/wallet-store.ts';
import { checkTempKey, consumeTempKey, issueTempKey, type KeyType } from './temp-key.ts';

// docs/interfaces.md#key-scheme's temp keys on a real SQLite store: issued for an account and a key
// type, single use, live for TEMP_KEY_TTL_SECONDS, spent with hashKey = sha256hex(tempKey + "|" + secretKey).
// The clock is the test's: it is set to the millisecond of a key's expiry instead of waited for.
let w: WalletStore;
let alice: StoredWallet;
let bob: StoredWallet;
before(async () => {
  w = await openWalletStore({ tempKeyTtlMs: loadConfig({ TEMP_KEY_TTL_SECONDS: '60' }).tempKeyTtlMs });
  alice = await addWallet(w);
  bob = await addWallet(w);
});
after(async () => { await w?.dispose(); });

const hashKey = (tempKey: string, secretKey: string) => sha256Hex(`${tempKey}|${secretKey}`);
const issue = (address: string, keyType: KeyType = 'transfer') => issueTempKey(w, { address, keyType });
const check = (params: { address: string; tempKey: string; hashKey: string; keyType?: KeyType | readonly KeyType[] }) =>
  checkTempKey(w, { keyType: 'transfer', ...params });

/** The refusal `code` with exactly `message` (what the token API answers, as 440 and the like). */
async function assertRefused(promise: Promise<unknown>, code: DomainErrorCode, message: string, details?: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof DomainError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.message, message);
    assert.equal(error.details, details);
    return true;
  });
}

describe('issueTempKey', () => {
  test('issues a random 32-byte hex key, live for TEMP_KEY_TTL_SECONDS; only its sha256 is stored, with the checksummed address and key type', async () => {
    const { tempKey, expiresAt } = await issue(alice.address.toLowerCase(), 'createToken');
    assert.match(tempKey, /^[0-9a-f]{64}$/);
    assert.equal(expiresAt, w.now + 60_000);
    assert.deepEqual(await w.repo.findTempKey(sha256Hex(tempKey)),
      { keyHash: sha256Hex(tempKey), address: alice.address, keyType: 'createToken', expiresAt, usedAt: null });
    assert.equal(await w.repo.findTempKey(tempKey), undefined, 'the key itself is not what is stored');
    const again = await issue(alice.address, 'createToken');
    assert.notEqual(again.tempKey, tempKey);
  });

  test('refuses an address without an account (wallet.unknown_address), storing nothing', async () => {
    const stored = await w.store.db.selectFrom('temp_keys').select('key_hash').execute();
    await assertRefused(issue('0x00000000000000000000000000000000000000aa'), 'wallet.unknown_address', 'no wallet account with this address');
    assert.deepEqual(await w.store.db.selectFrom('temp_keys').select('key_hash').execute(), stored);
  });

  test('refuses what is not an address as the field `address`', async () => {
    await assertRefused(issue('0x1234'), 'request.invalid', 'address is not a valid address', 'address');
  });
});

describe('checkTempKey', () => {
  test('a live key with its hashKey answers the account, the key hash (the authorization nonce) and the sealed key; it stays unused', async () => {
    const { tempKey } = await issue(alice.address);
    const account = await w.repo.findAccount(alice.address);
    const expected = { address: alice.address, keyHash: sha256Hex(tempKey), privateKeyEnc: account?.privateKeyEnc };
    assert.deepEqual(await check({ address: alice.address, tempKey, hashKey: hashKey(tempKey, alice.secretKey) }), expected);
    // The address in lower case and the hashKey in upper case are the same ones.
    assert.deepEqual(await check({ address: alice.address.toLowerCase(), tempKey, hashKey: hashKey(tempKey, alice.secretKey).toUpperCase() }), expected);
    assert.equal((await w.repo.findTempKey(sha256Hex(tempKey)))?.usedAt, null, 'checking does not use the key up');
  });

  test('a hashKey of another form, or of another secretKey, is refused as wallet.hash_key_invalid', async () => {
    const { tempKey } = await issue(alice.address);
    for (const wrong of [
      sha256Hex(`${alice.secretKey}|${tempKey}`), // the parts swapped
      sha256Hex(`${tempKey}${alice.secretKey}`), // no separator
      sha256Hex(`${tempKey}|${alice.secretKey}\n`),
      hashKey(tempKey, bob.secretKey), // bob's secretKey
      hashKey(tempKey, alice.secretKey).slice(0, 63),
      '',
    ]) {
      await assertRefused(check({ address: alice.address, tempKey, hashKey: wrong }), 'wallet.hash_key_invalid', 'hashKey does not match');
    }
  });

  test('a key is bound to the address and key type it was issued for; an unknown key is refused the same way', async () => {
    const invalid = 'tempKey is unknown or not issued for this address and keyType';
    const { tempKey } = await issue(alice.address);
    // Bob, with his own hashKey over alice's key: not his key.
    await assertRefused(check({ address: bob.address, tempKey, hashKey: hashKey(tempKey, bob.secretKey) }), 'wallet.temp_key_invalid', invalid);
    await assertRefused(check({ address: alice.address, tempKey: 'f'.repeat(64), hashKey: hashKey('f'.repeat(64), alice.secretKey) }), 'wallet.temp_key_invalid', invalid);

    // A createToken key is for a createToken only; a transfer key is for either (docs/interfaces.md#key-scheme).
    const createToken = await issue(alice.address, 'createToken');
    const ownHash = hashKey(createToken.tempKey, alice.secretKey);
    await assertRefused(check({ address: alice.address, tempKey: createToken.tempKey, hashKey: ownHash, keyType: 'transfer' }), 'wallet.temp_key_invalid', invalid);
    assert.equal((await check({ address: alice.address, tempKey: createToken.tempKey, hashKey: ownHash, keyType: ['transfer', 'createToken'] })).address, alice.address);
    assert.equal((await check({ address: alice.address, tempKey, hashKey: hashKey(tempKey, alice.secretKey), keyType: ['transfer', 'createToken'] })).address, alice.address);
  });

  test('a key is refused from the millisecond of its expiry (expiresAt is the first instant it is dead), used or not', async () => {
    const { tempKey, expiresAt } = await issue(alice.address);
    const params = { address: alice.address, tempKey, hashKey: hashKey(tempKey, alice.secretKey) };
    const issuedAt = w.now;
    try {
      w.now = expiresAt - 1;
      assert.equal((await check(params)).address, alice.address, 'live until the millisecond before');
      w.now = expiresAt;
      await assertRefused(check(params), 'wallet.temp_key_invalid', 'tempKey has expired');
      await assertRefused(consumeTempKey(w, sha256Hex(tempKey)), 'wallet.temp_key_invalid', 'tempKey was already used');
      w.now = expiresAt + 3_600_000;
      await assertRefused(check(params), 'wallet.temp_key_invalid', 'tempKey has expired');
    } finally {
      w.now = issuedAt;
    }
  });

  test('refuses what is not an address as the field `address`', async () => {
    const { tempKey } = await issue(alice.address);
    await assertRefused(check({ address: 'alice', tempKey, hashKey: hashKey(tempKey, alice.secretKey) }), 'request.invalid', 'address is not a valid address', 'address');
  });

  test('a key whose account is no longer stored is refused as wallet.unknown_address', async () => {
    const carol = await addWallet(w);
    const { tempKey } = await issue(carol.address);
    await w.store.db.deleteFrom('accounts').where('address', '=', carol.address).execute();
    await assertRefused(check({ address: carol.address, tempKey, hashKey: hashKey(tempKey, carol.secretKey) }), 'wallet.unknown_address', 'no wallet account with this address');
  });
});

describe('consumeTempKey', () => {
  test('uses a key up once: a second use, and any check after it, is refused as already used', async () => {
    const { tempKey } = await issue(alice.address, 'createToken');
    const params = { address: alice.address, tempKey, hashKey: hashKey(tempKey, alice.secretKey), keyType: 'createToken' } as const;
    const { keyHash } = await check(params);
    w.now += 1_000;
    await consumeTempKey(w, keyHash);
    assert.equal((await w.repo.findTempKey(keyHash))?.usedAt, w.now);
    await assertRefused(consumeTempKey(w, keyHash), 'wallet.temp_key_invalid', 'tempKey was already used');
    await assertRefused(check(params), 'wallet.temp_key_invalid', 'tempKey was already used');
  });

  test('two uses racing: one wins, the other is refused', async () => {
    const { tempKey } = await issue(alice.address);
    const outcomes = await Promise.allSettled([consumeTempKey(w, sha256Hex(tempKey)), consumeTempKey(w, sha256Hex(tempKey))]);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
  });
});
