import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '#shared/errors.ts';
import { openWalletStore, type WalletStore } from '../../test/support/wallet-store.ts';
import { importAddress } from './import-address.ts';

// importAddress on a real SQLite store, with the mnemonic every Ethereum dev chain funds (anvil's and
// hardhat's): its m/44'/60'/0'/0/0 account and key are public, so the test knows what must be stored.
const mnemonic = 'test test test test test test test test test test test junk';
const address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const privateKey = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

let w: WalletStore;
before(async () => { w = await openWalletStore(); });
after(async () => { await w?.dispose(); });

const accountCount = async () => (await w.store.db.selectFrom('accounts').select('address').execute()).length;

test('a new mnemonic is taken into custody: its account, its key sealed, a fresh secretKey; two imports at once store one and answer it to both', async () => {
  const [first, second] = await Promise.all([importAddress(w, { mnemonic }), importAddress(w, { mnemonic })]);
  assert.equal(first.address, address);
  assert.match(first.secretKey, /^[0-9a-f]{64}$/);
  assert.deepEqual(second, first, 'the import that lost the race answers the secretKey stored, not one of its own');
  const stored = await w.repo.findAccount(address);
  assert.ok(stored);
  assert.equal(w.vault.decrypt(stored.privateKeyEnc), privateKey);
  assert.equal(w.vault.decrypt(stored.secretKeyEnc), first.secretKey);
  assert.equal(await accountCount(), 1);
});

test('the mnemonic is read in any case and spacing; an account already held answers with its secretKey', async () => {
  const held = await w.repo.findAccount(address);
  assert.ok(held, 'imported by the test before');
  const { secretKey } = await importAddress(w, { mnemonic: ` \tTEST test  Test test\ntest test test test test test test JUNK \n` });
  assert.equal(secretKey, w.vault.decrypt(held.secretKeyEnc));
  assert.deepEqual(await w.repo.findAccount(address), held, 'the account is left as it was');
});

test('what is not an English BIP-39 mnemonic is refused as wallet.invalid_mnemonic, and nothing is stored', async () => {
  const before = await accountCount();
  for (const bad of [
    'test test test test test test test test test test test test', // the checksum word wrong
    'test test test test test test test test test test junk', // 11 words
    'test test test test test test test test test test test junk junk',
    'test,test,test,test,test,test,test,test,test,test,test,junk',
    'tést test test test test test test test test test test junk',
    'ábaco ábaco ábaco ábaco ábaco ábaco ábaco ábaco ábaco ábaco ábaco abierto', // words of the Spanish list
    '',
  ]) {
    await assert.rejects(importAddress(w, { mnemonic: bad }), (error: unknown) => {
      assert.ok(error instanceof DomainError, String(error));
      assert.equal(error.code, 'wallet.invalid_mnemonic', bad);
      assert.equal(error.message, 'mnemonic is not a valid English BIP-39 mnemonic');
      return true;
    });
  }
  assert.equal(await accountCount(), before);
});
