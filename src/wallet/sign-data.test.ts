import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { bytesToHex, recoverMessageAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import { addWallet, openWalletStore, type StoredWallet, type WalletStore } from '../../test/support/wallet-store.ts';
import { issueTempKey, type KeyType } from './temp-key.ts';
import { signData } from './sign-data.ts';

// signData on a real SQLite store: the account's key signs the sha256 hex string, EIP-191
// (personal_sign) over the text, so any Ethereum tool recovers the account from the signature.
let w: WalletStore;
let alice: StoredWallet;
let bob: StoredWallet;
before(async () => {
  w = await openWalletStore();
  alice = await addWallet(w);
  bob = await addWallet(w);
});
after(async () => { await w?.dispose(); });

/** A live temp key of `wallet` with its hashKey, and the data docs/interfaces.md#key-scheme has the client sign. */
async function prepared(wallet: StoredWallet, keyType: KeyType = 'transfer') {
  const { tempKey } = await issueTempKey(w, { address: wallet.address, keyType });
  const hashKey = sha256Hex(`${tempKey}|${wallet.secretKey}`);
  return { address: wallet.address, tempKey, hashKey, data: sha256Hex(`${wallet.address}|${bob.address}|4|${tempKey}|${hashKey}`) };
}

test('the signature recovers to the account, and is the one its own key makes; the temp key stays usable', async () => {
  const params = await prepared(alice);
  const { signature } = await signData(w, params);
  assert.equal(await recoverMessageAddress({ message: params.data, signature }), alice.address);
  assert.equal(signature, await privateKeyToAccount(bytesToHex(alice.privateKey)).signMessage({ message: params.data }));
  const again = await signData(w, { ...params, data: sha256Hex('another') });
  assert.equal(await recoverMessageAddress({ message: sha256Hex('another'), signature: again.signature }), alice.address);
});

test('data that is not a lower-case sha256 hex string is refused as the field `data`, before the key is looked at', async () => {
  const params = await prepared(alice);
  const hex = params.data;
  for (const data of [hex.toUpperCase(), `0x${hex}`, hex.slice(1), `${hex}0`, `0${hex}`, `${hex}\n`, `${hex.slice(0, 63)}g`, '', 'a']) {
    await assert.rejects(signData(w, { ...params, data }), (error: unknown) => {
      assert.ok(error instanceof DomainError, String(error));
      assert.equal(error.code, 'request.invalid', JSON.stringify(data));
      assert.equal(error.message, 'data must be a lower-case sha256 hex string (64 characters)');
      assert.equal(error.details, 'data');
      return true;
    });
  }
});

test('a transfer key signs by default; a createToken key only when the call says createToken', async () => {
  const params = await prepared(alice, 'createToken');
  await assert.rejects(signData(w, params), { code: 'wallet.temp_key_invalid' });
  const { signature } = await signData(w, { ...params, keyType: 'createToken' });
  assert.equal(await recoverMessageAddress({ message: params.data, signature }), alice.address);
});

test('nothing is signed without the key\'s own hashKey, or with another account\'s key', async () => {
  const params = await prepared(alice);
  await assert.rejects(signData(w, { ...params, hashKey: sha256Hex(`${params.tempKey}|${bob.secretKey}`) }), { code: 'wallet.hash_key_invalid' });
  const bobs = await prepared(bob);
  await assert.rejects(signData(w, { ...bobs, address: alice.address, hashKey: params.hashKey }), { code: 'wallet.temp_key_invalid' });
});
