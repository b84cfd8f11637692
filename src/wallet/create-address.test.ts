import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { recoverMessageAddress } from 'viem';
import { openPkcs11Token, type Pkcs11Token } from '../chain/pkcs11-token.ts';
import { tokenWrappedKeys } from '../chain/token-wrapped-keys.ts';
import { openWalletStore, type WalletStore } from '../../test/support/wallet-store.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from '../../test/support/softhsm.ts';
import { skipWithout } from '../../test/support/parts.ts';
import { createAddress } from './create-address.ts';
import { importAddress } from './import-address.ts';
import { walletKeys } from './wallet-keys.ts';

// createAddress on a real SQLite store: a 12-word mnemonic whose m/44'/60'/0'/0/0 account is the
// address answered, the key stored sealed (file custody: the master key; pkcs11: wrapped by the
// token), the secretKey encrypted, the mnemonic nowhere.
let w: WalletStore;
before(async () => { w = await openWalletStore(); });
after(async () => { await w?.dispose(); });

/** The account row as stored, and every value in it as text (to look for what must not be there). */
async function storedRow(address: string) {
  const row = await w.store.db.selectFrom('accounts').selectAll().where('address', '=', address).executeTakeFirstOrThrow();
  return { row, text: JSON.stringify(row) };
}

test('file custody: the mnemonic restores the address and secretKey answered; the stored key signs for it; nothing in clear', async () => {
  w.now += 1;
  const created = await createAddress(w);
  assert.equal(created.mnemonic.split(' ').length, 12);
  assert.ok(validateMnemonic(created.mnemonic, wordlist), created.mnemonic);
  assert.match(created.secretKey, /^[0-9a-f]{64}$/);
  // Restoring from the mnemonic (another derivation of the same m/44'/60'/0'/0/0 key) finds this account.
  assert.deepEqual(await importAddress(w, { mnemonic: created.mnemonic }), { address: created.address, secretKey: created.secretKey });

  const { row, text } = await storedRow(created.address);
  assert.equal(row.created_at, w.now);
  assert.equal(w.vault.decrypt(row.secret_key_enc), created.secretKey);
  const privateKey = w.vault.decrypt(row.private_key_enc);
  assert.match(privateKey, /^0x[0-9a-f]{64}$/);
  assert.ok(!text.includes(privateKey.slice(2)), 'the private key is not stored in clear');
  assert.ok(!text.includes(created.secretKey), 'nor the secretKey');
  assert.ok(!text.includes(created.mnemonic), 'nor the mnemonic');
  const signature = await walletKeys(w.vault).account(row.private_key_enc, created.address).signMessage({ message: 'created' });
  assert.equal(await recoverMessageAddress({ message: 'created', signature }), created.address);
  const other = await createAddress(w);
  assert.notEqual(other.address, created.address);
  assert.notEqual(other.mnemonic, created.mnemonic);
  assert.notEqual(other.secretKey, created.secretKey);
});

const skip = skipWithout('softhsm2', softhsmMissing());
describe('pkcs11 custody (SoftHSM2)', { skip }, () => {
  let soft: SoftToken;
  let token: Pkcs11Token;
  before(() => {
    soft = makeSoftToken();
    token = openPkcs11Token(soft);
  });
  after(() => {
    token?.close();
    soft?.close();
  });

  test('the new wallet\'s key is stored wrapped by the token, and signs for the address through it', async () => {
    const keys = walletKeys(w.vault, tokenWrappedKeys(token));
    const created = await createAddress({ ...w, keys });
    const { row } = await storedRow(created.address);
    assert.match(row.private_key_enc, /^p11:v1:vixpay-wallet-wrap-1:/);
    assert.equal(w.vault.decrypt(row.secret_key_enc), created.secretKey);
    const signature = await keys.account(row.private_key_enc, created.address).signMessage({ message: 'wrapped' });
    assert.equal(await recoverMessageAddress({ message: 'wrapped', signature }), created.address);
  });
});
