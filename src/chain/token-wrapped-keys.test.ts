import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, renameSync } from 'node:fs';
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

/** The session private keys (unwrapped wallet keys) the token holds for this process, with their sensitive and extractable flags. */
const unwrapped = () => token.run(async ({ p11, handle }) => {
  const p = lib();
  p11.C_FindObjectsInit(handle, [{ type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }, { type: p.CKA_TOKEN, value: false }]);
  let found: Buffer[];
  try { found = p11.C_FindObjects(handle, 1000); } finally { p11.C_FindObjectsFinal(handle); }
  return found.map((object) => {
    const [sensitive, extractable] = p11.C_GetAttributeValue(handle, object, [{ type: p.CKA_SENSITIVE }, { type: p.CKA_EXTRACTABLE }]);
    assert.throws(() => p11.C_GetAttributeValue(handle, object, [{ type: p.CKA_VALUE }]), /CKR_ATTRIBUTE_SENSITIVE/);
    return `${sensitive!.value![0]}${extractable!.value![0]}`;
  });
});

/** Every session of this process on the test token closed, as a token leaving closes them (the library is process-wide). */
function closeAllSessions(): void {
  const p = lib();
  const p11 = new p.PKCS11();
  p11.load(soft.module);
  let initialised = false;
  try { p11.C_Initialize(); initialised = true; } catch (error) { if ((error as Error).message !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw error; }
  for (const slot of p11.C_GetSlotList(false)) { try { p11.C_CloseAllSessions(slot); } catch { /* empty slot */ } }
  if (initialised) p11.C_Finalize(); // no session was open: leave the library as found
}

const wallet = async (wrapped: TokenWrappedKeys) => {
  const privateKey = generatePrivateKey();
  const { address } = privateKeyToAccount(privateKey);
  return { address, account: wrapped.account(await wrapped.wrap(hexToBytes(privateKey)), address) };
};
const signsAs = async (signer: { address: Hex; account: { signMessage(args: { message: string }): Promise<Hex> } }, message: string) =>
  assert.equal(await recoverMessageAddress({ message, signature: await signer.account.signMessage({ message }) }), signer.address);

test('a wrapped key stays unwrapped in the token for its next signatures (one sensitive, not extractable object, however many sign at once), at most `unwrappedKeys` of them: the least recently used is destroyed, and unwrapped again when it signs', { skip }, async () => {
  closeAllSessions(); // the other tests' kept keys go with their sessions: this test counts its own
  const two = tokenWrappedKeys(token, { unwrappedKeys: 2 });
  const [a, b, c] = [await wallet(two), await wallet(two), await wallet(two)];
  assert.deepEqual(await unwrapped(), [], 'wrapping leaves no key in the token');
  await Promise.all(Array.from({ length: 8 }, (_, i) => signsAs(a, `a${i}`)));
  assert.deepEqual(await unwrapped(), ['10'], 'eight signatures at once, one unwrapped key: sensitive, not extractable');
  await signsAs(b, 'b');
  await signsAs(a, 'a again'); // a is now the most recently used
  await signsAs(c, 'c');
  assert.deepEqual(await unwrapped(), ['10', '10'], 'two kept: b, the least recently used, was destroyed');
  await signsAs(b, 'b again');
  await Promise.all([signsAs(a, 'a'), signsAs(b, 'b'), signsAs(c, 'c')]);
  assert.equal((await unwrapped()).length, 2);

  // unwrappedKeys 0: each signature's key is destroyed after it, as many signing at once as there may be.
  closeAllSessions();
  const none = tokenWrappedKeys(token, { unwrappedKeys: 0 });
  const d = await wallet(none);
  await Promise.all(Array.from({ length: 8 }, (_, i) => signsAs(d, `d${i}`)));
  assert.deepEqual(await unwrapped(), []);
});

test('kept keys are gone with the token: removed and back (every session closed, signatures in flight), a wallet is custody.unavailable meanwhile, then unwrapped again and signs, without reopening', { skip }, async () => {
  const kept = tokenWrappedKeys(token, { unwrappedKeys: 8 });
  const signers = [await wallet(kept), await wallet(kept)];
  await Promise.all(signers.map((signer) => signsAs(signer, 'kept')));
  // Removed before any of them reaches the module, so each finds its session gone: closing a session
  // that another thread is signing in crashes SoftHSM2 itself (a segmentation fault in about half the
  // runs), which the platform never does (a lost connection is closed once nothing borrows it).
  const inFlight = Array.from({ length: 16 }, (_, i) => signers[i % 2]!.account.signMessage({ message: `in flight ${i}` }));
  const [tokenDir] = readdirSync(soft.tokensDir);
  const away = `${soft.dir}/away`;
  renameSync(`${soft.tokensDir}/${tokenDir!}`, away);
  closeAllSessions();
  try {
    for (const outcome of await Promise.allSettled(inFlight)) {
      assert.ok(outcome.status === 'rejected' && outcome.reason instanceof DomainError && outcome.reason.code === 'custody.unavailable', String(outcome.status === 'rejected' ? outcome.reason : outcome.value));
    }
    await assert.rejects(signers[0]!.account.signMessage({ message: 'away' }), (e: unknown) => e instanceof DomainError && e.code === 'custody.unavailable');
  } finally {
    renameSync(away, `${soft.tokensDir}/${tokenDir!}`);
  }
  // The handles kept before belonged to the lost sessions: the next signatures unwrap the keys anew.
  await Promise.all(signers.map((signer) => signsAs(signer, 'back')));
  assert.deepEqual(await unwrapped(), ['10', '10']);
});

test('the wrapping key stays in the token (sensitive, not extractable)', { skip }, async () => {
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
  const privateKey = generatePrivateKey();
  const sealed = await keys.wrap(hexToBytes(privateKey));
  const other = privateKeyToAccount(generatePrivateKey()).address;
  await assert.rejects(keys.account(sealed, other).signMessage({ message: 'x' }), /does not recover to its key/);
  // Nor once it is kept unwrapped, having signed for its own address.
  await signsAs({ address: privateKeyToAccount(privateKey).address, account: keys.account(sealed, privateKeyToAccount(privateKey).address) }, 'own');
  await assert.rejects(keys.account(sealed, other).signMessage({ message: 'y' }), /does not recover to its key/);
  // Another wrapping key's label (a rotation made elsewhere, or another token): refused when it signs.
  await assert.rejects(keys.account(sealed.replace(walletWrappingKeyLabel, 'vixpay-wallet-wrap-9'), other).signMessage({ message: 'x' }),
    /the token holds no wallet wrapping key "vixpay-wallet-wrap-9"/);
  assert.throws(() => keys.account('p11:v1:another-key:AAAA', other), /not a wallet key wrapped by a token/);
});

test('with the PIN file unreadable, wrapping and signing are custody.unavailable, and work again once it is back', { skip }, async () => {
  const privateKey = generatePrivateKey();
  const sealed = await keys.wrap(hexToBytes(privateKey));
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
