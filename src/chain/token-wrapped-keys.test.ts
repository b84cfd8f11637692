import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { hexToBytes, recoverMessageAddress, recoverTransactionAddress, verifyTypedData, parseGwei, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type * as Pkcs11js from 'pkcs11js';
import { openPkcs11Token, type Pkcs11Token } from './pkcs11-token.ts';
import { tokenWrappedKeys, walletWrappingKeyLabel, type TokenWrappedKeys } from './token-wrapped-keys.ts';
import { DomainError } from '#shared/errors.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from '../../test/support/softhsm.ts';
import { skipWithout } from '../../test/support/parts.ts';

// Custodial wallet keys wrapped under a SoftHSM2 token's AES key, unwrapped inside it only to sign.
const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let token: Pkcs11Token;
let keys: TokenWrappedKeys;
before(() => {
  if (skip) return;
  soft = makeSoftToken();
  token = openPkcs11Token(soft);
  keys = tokenWrappedKeys(token);
});
after(() => {
  token?.close();
  soft?.close();
});

const lib = () => createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;

/** Every object of `objectClass` the logged-in token holds (session objects of this process included). */
const objects = (objectClass: number) => token.run(async ({ p11, handle }) => {
  p11.C_FindObjectsInit(handle, [{ type: lib().CKA_CLASS, value: objectClass }]);
  try { return p11.C_FindObjects(handle, 100).length; } finally { p11.C_FindObjectsFinal(handle); }
});

test('a wrapped key signs messages, typed data and transactions for its address; the stored form holds none of its bytes', { skip }, async () => {
  for (let i = 0; i < 6; i++) {
    const privateKey = generatePrivateKey();
    const reference = privateKeyToAccount(privateKey);
    const sealed = await keys.wrap(hexToBytes(privateKey));
    assert.match(sealed, new RegExp(`^p11:v1:${walletWrappingKeyLabel}:[A-Za-z0-9+/]+=*$`));
    assert.ok(keys.holds(sealed) && !keys.holds('v1:abc'));
    const stored = Buffer.from(sealed.split(':').at(-1)!, 'base64');
    assert.equal(stored.includes(Buffer.from(privateKey.slice(2), 'hex')), false, 'the key bytes are not in the stored form');
    assert.equal(sealed.includes(privateKey.slice(2)), false);

    const account = keys.account(sealed, reference.address);
    const message = `transfer ${i}`;
    assert.equal(await recoverMessageAddress({ message, signature: await account.signMessage({ message }) }), reference.address);
    const typedData = {
      domain: { name: 'VIXP', version: '1', chainId: 31337, verifyingContract: '0x00000000000000000000000000000000000000aa' as Hex },
      types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
      primaryType: 'CancelAuthorization' as const,
      message: { authorizer: reference.address, nonce: `0x${String(i).padStart(64, '0')}` as Hex },
    };
    assert.ok(await verifyTypedData({ ...typedData, address: reference.address, signature: await account.signTypedData(typedData) }));
    const serializedTransaction = await account.signTransaction({
      chainId: 31337, type: 'eip1559', nonce: i, to: reference.address, value: 1n, gas: 21_000n, maxFeePerGas: parseGwei('2'), maxPriorityFeePerGas: 1n,
    });
    assert.equal(await recoverTransactionAddress({ serializedTransaction: serializedTransaction as never }), reference.address);
  }
});

test('the wrapping key stays in the token (sensitive, not extractable); no unwrapped key outlives its signature', { skip }, async () => {
  const privateKey = generatePrivateKey();
  const sealed = await keys.wrap(hexToBytes(privateKey));
  const before = await objects(lib().CKO_PRIVATE_KEY);
  await Promise.all(Array.from({ length: 8 }, (_, i) => keys.account(sealed, privateKeyToAccount(privateKey).address).signMessage({ message: `m${i}` })));
  assert.equal(await objects(lib().CKO_PRIVATE_KEY), before, 'each unwrapped session key was destroyed after its signature');
  await token.run(async ({ p11, handle }) => {
    const p = lib();
    p11.C_FindObjectsInit(handle, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_LABEL, value: walletWrappingKeyLabel }]);
    const [aes] = p11.C_FindObjects(handle, 2);
    p11.C_FindObjectsFinal(handle);
    assert.ok(aes);
    const [sensitive, extractable, isToken] = p11.C_GetAttributeValue(handle, aes, [{ type: p.CKA_SENSITIVE }, { type: p.CKA_EXTRACTABLE }, { type: p.CKA_TOKEN }]);
    assert.deepEqual([sensitive!.value, extractable!.value, isToken!.value], [Buffer.from([1]), Buffer.from([0]), Buffer.from([1])]);
    assert.throws(() => p11.C_GetAttributeValue(handle, aes, [{ type: p.CKA_VALUE }]), /CKR_ATTRIBUTE_SENSITIVE/);
  });
});

test('a wrapped key given with another address does not sign for it; a stored form of another token\'s key is refused', { skip }, async () => {
  const sealed = await keys.wrap(hexToBytes(generatePrivateKey()));
  const other = privateKeyToAccount(generatePrivateKey()).address;
  await assert.rejects(keys.account(sealed, other).signMessage({ message: 'x' }), /does not recover to its key/);
  // Another wrapping key's label (a rotation made elsewhere, or another token): refused when it signs.
  await assert.rejects(keys.account(sealed.replace(walletWrappingKeyLabel, 'vixpay-wallet-wrap-9'), other).signMessage({ message: 'x' }),
    /the token holds no wallet wrapping key "vixpay-wallet-wrap-9"/);
  assert.throws(() => keys.account('p11:v1:another-key:AAAA', other), /not a wallet key wrapped by a token/);
});

test('with the PIN file unreadable, wrapping and signing are custody.unavailable, and work again once it is back', { skip }, async () => {
  const privateKey = generatePrivateKey();
  const sealed = await keys.wrap(hexToBytes(privateKey));
  const { renameSync } = await import('node:fs');
  token.close(); // the next call connects anew, and reads the PIN file
  renameSync(soft.pinFile, `${soft.pinFile}.away`);
  try {
    await assert.rejects(keys.wrap(hexToBytes(privateKey)), (e: unknown) => e instanceof DomainError && e.code === 'custody.unavailable');
    await assert.rejects(keys.account(sealed, privateKeyToAccount(privateKey).address).signMessage({ message: 'x' }),
      (e: unknown) => e instanceof DomainError && e.code === 'custody.unavailable');
  } finally {
    renameSync(`${soft.pinFile}.away`, soft.pinFile);
  }
  const signature = await keys.account(sealed, privateKeyToAccount(privateKey).address).signMessage({ message: 'back' });
  assert.equal(await recoverMessageAddress({ message: 'back', signature }), privateKeyToAccount(privateKey).address);
});
