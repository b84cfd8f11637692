import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  bytesToHex, concat, createPublicClient, hexToBigInt, hexToBytes, http, keccak256, numberToHex, parseEther, parseGwei,
  recoverMessageAddress, recoverTransactionAddress, toHex, verifyTypedData, type Hex, type LocalAccount,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { foundry } from 'viem/chains';
import type * as Pkcs11js from 'pkcs11js';
import { openPkcs11Token, type Pkcs11Token } from './pkcs11-token.ts';
import { ethereumSignature, laneKeyLabel, loadTokenLanes } from './token-account.ts';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { DomainError } from '#shared/errors.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from '../../test/support/softhsm.ts';
import { skipWithout } from '../../test/support/parts.ts';

// Relayer lanes whose keys live in a real SoftHSM2 token (a token of this file's own).
const skip = skipWithout('softhsm2', softhsmMissing());
const curveOrder = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const halfOrder = curveOrder / 2n;

let soft: SoftToken;
let token: Pkcs11Token;
let lanes: LocalAccount[];
before(async () => {
  if (skip) return;
  soft = makeSoftToken();
  token = openPkcs11Token(soft);
  lanes = await loadTokenLanes(token, 2);
});
after(() => {
  token?.close();
  soft?.close();
});

/** The same library, loaded a second time in this process: what the test does to the token behind the platform's back. */
function sameLibrary(): { p11: Pkcs11js.PKCS11; lib: typeof Pkcs11js } {
  const lib = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
  const p11 = new lib.PKCS11();
  p11.load(soft.module);
  try { p11.C_Initialize(); } catch (error) { if ((error as Error).message !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw error; }
  return { p11, lib };
}

test('each lane is an account over a key in the token: an address, no private key to hand out', { skip }, () => {
  assert.equal(new Set(lanes.map((lane) => lane.address)).size, 2);
  assert.equal(lanes[0]!.source, 'custom');
  assert.equal('privateKey' in lanes[0]!, false);
});

test('the private key cannot be read out of the token, even logged in', { skip }, async () => {
  await token.run(async ({ p11, handle }) => {
    const lib = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
    p11.C_FindObjectsInit(handle, [{ type: lib.CKA_CLASS, value: lib.CKO_PRIVATE_KEY }, { type: lib.CKA_LABEL, value: laneKeyLabel(0) }]);
    const [key] = p11.C_FindObjects(handle, 1);
    p11.C_FindObjectsFinal(handle);
    assert.ok(key);
    const [sensitive, extractable] = p11.C_GetAttributeValue(handle, key, [{ type: lib.CKA_SENSITIVE }, { type: lib.CKA_EXTRACTABLE }]);
    assert.deepEqual([sensitive!.value, extractable!.value], [Buffer.from([1]), Buffer.from([0])]);
    assert.throws(() => p11.C_GetAttributeValue(handle, key, [{ type: lib.CKA_VALUE }]), /CKR_ATTRIBUTE_SENSITIVE/);
  });
});

test('a raw signature with high s is made low and given the recovery id of the key that made it', async () => {
  for (let i = 0; i < 16; i++) {
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    const digest = hexToBytes(keccak256(toHex(`digest ${i}`)));
    const low = await sign({ hash: bytesToHex(digest), privateKey: key });
    const high = concat([low.r, numberToHex(curveOrder - hexToBigInt(low.s), { size: 32 })]);
    for (const raw of [concat([low.r, low.s]), high]) {
      const fixed = ethereumSignature(hexToBytes(raw), digest, hexToBytes(account.publicKey));
      assert.deepEqual(fixed, { r: low.r, s: low.s, yParity: low.yParity });
    }
  }
  assert.throws(() => ethereumSignature(new Uint8Array(64).fill(1), new Uint8Array(32), hexToBytes(privateKeyToAccount(generatePrivateKey()).publicKey)),
    /does not recover to its key/);
});

test('signatures over many messages recover to the lane\'s address, all low s, with both recovery ids', { skip }, async () => {
  const parities = new Set<string>();
  for (let i = 0; i < 40; i++) {
    const lane = lanes[i % 2]!;
    const message = `settlement batch ${i}`;
    const signature = await lane.signMessage({ message });
    assert.equal(await recoverMessageAddress({ message, signature }), lane.address);
    assert.ok(BigInt(`0x${signature.slice(66, 130)}`) <= halfOrder, `signature ${i} has low s`);
    parities.add(signature.slice(130));
  }
  // v 27 and 28 both occur: the recovery id is found, not assumed.
  assert.deepEqual([...parities].sort(), ['1b', '1c']);
});

test('typed data signed by a lane verifies as EIP-712 for its address', { skip }, async () => {
  const typedData = {
    domain: { name: 'VIXP', version: '1', chainId: 31337, verifyingContract: '0x00000000000000000000000000000000000000aa' as Hex },
    types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
    primaryType: 'CancelAuthorization' as const,
    message: { authorizer: lanes[1]!.address, nonce: `0x${'11'.repeat(32)}` as Hex },
  };
  const signature = await lanes[1]!.signTypedData(typedData);
  assert.equal(await verifyTypedData({ ...typedData, address: lanes[1]!.address, signature }), true);
});

test('the lanes are the same keys when loaded again (found by label, not generated anew); a new lane is a new key', { skip }, async () => {
  const again = await loadTokenLanes(token, 3);
  assert.deepEqual(again.slice(0, 2).map((lane) => lane.address), lanes.map((lane) => lane.address));
  assert.equal(new Set(again.map((lane) => lane.address)).size, 3);
});

let anvil: AnvilProcess | undefined;
after(async () => { await anvil?.stop(); });

test('a transaction signed in the token is mined on anvil from the lane\'s address', { skip }, async () => {
  anvil = await startAnvil({ chainId: foundry.id });
  const client = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  const lane = lanes[0]!;
  await client.request({ method: 'anvil_setBalance' as never, params: [lane.address, `0x${parseEther('1').toString(16)}`] as never });
  const hashes: Hex[] = [];
  for (let nonce = 0; nonce < 4; nonce++) {
    const serializedTransaction = await lane.signTransaction({
      chainId: foundry.id, type: 'eip1559', nonce, to: lanes[1]!.address, value: 1000n, gas: 21_000n,
      maxFeePerGas: parseGwei('10'), maxPriorityFeePerGas: parseGwei('1'),
    });
    assert.equal(await recoverTransactionAddress({ serializedTransaction: serializedTransaction as never }), lane.address);
    hashes.push(await client.sendRawTransaction({ serializedTransaction }));
  }
  for (const hash of hashes) assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  assert.equal(await client.getBalance({ address: lanes[1]!.address }), 4000n);
});

test('a lost session is replaced on the next signature: the caller sees nothing', { skip }, async () => {
  const { p11 } = sameLibrary();
  const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.trim() === soft.tokenLabel)!;
  p11.C_CloseAllSessions(slot);
  const signature = await lanes[0]!.signMessage({ message: 'after the sessions were closed' });
  assert.equal(await recoverMessageAddress({ message: 'after the sessions were closed', signature }), lanes[0]!.address);
});

test('sessions closed under 32 signatures in flight: each signature is made or refused as custody.unavailable, none crashes the process', { skip }, async () => {
  const { p11 } = sameLibrary();
  const slot = p11.C_GetSlotList(true).find((s) => p11.C_GetTokenInfo(s).label.trim() === soft.tokenLabel)!;
  const signing = Array.from({ length: 32 }, (_, i) => lanes[i % 2]!.signMessage({ message: `in flight ${i}` }));
  p11.C_CloseAllSessions(slot);
  const outcomes = await Promise.allSettled(signing);
  for (const [i, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') assert.equal(await recoverMessageAddress({ message: `in flight ${i}`, signature: outcome.value }), lanes[i % 2]!.address);
    else assert.ok(outcome.reason instanceof DomainError && outcome.reason.code === 'custody.unavailable', String(outcome.reason));
  }
  const signature = await lanes[0]!.signMessage({ message: 'after' });
  assert.equal(await recoverMessageAddress({ message: 'after', signature }), lanes[0]!.address);
});

test('a removed token or a refused PIN is custody.unavailable, and the same accounts sign again once it is back, without reopening', { skip }, async () => {
  const { p11 } = sameLibrary();
  const [tokenDir] = readdirSync(soft.tokensDir);
  const away = path.join(soft.dir, 'away');
  // The token leaves: its directory is gone and every session with it.
  renameSync(path.join(soft.tokensDir, tokenDir!), away);
  for (const slot of p11.C_GetSlotList(false)) { try { p11.C_CloseAllSessions(slot); } catch { /* empty slot */ } }
  const refused = async () => {
    const error = await lanes[0]!.signMessage({ message: 'while away' }).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof DomainError, `a DomainError, not ${String(error)}`);
    assert.equal(error.code, 'custody.unavailable');
    await assert.rejects(token.probe(), (e: unknown) => e instanceof DomainError && e.code === 'custody.unavailable');
    return error.message;
  };
  assert.match(await refused(), /no token labelled/);
  renameSync(away, path.join(soft.tokensDir, tokenDir!));
  await token.probe();
  const message = 'back again';
  assert.equal(await recoverMessageAddress({ message, signature: await lanes[0]!.signMessage({ message }) }), lanes[0]!.address);

  // A wrong PIN: refused once, and not tried again until the file changes (an HSM locks a user after a few).
  writeFileSync(soft.pinFile, '000000\n');
  for (const slot of p11.C_GetSlotList(true)) { try { p11.C_CloseAllSessions(slot); } catch { /* empty slot */ } }
  assert.match(await refused(), /CKR_PIN_INCORRECT|was refused/);
  assert.match(await refused(), /not tried again until the file changes/);
  writeFileSync(soft.pinFile, '123456\n');
  await token.probe();
  assert.equal(await recoverMessageAddress({ message, signature: await lanes[1]!.signMessage({ message }) }), lanes[1]!.address);
});

test('a library that does not load is custody.unavailable naming it', { skip }, async () => {
  const missing = openPkcs11Token({ ...soft, module: path.join(soft.dir, 'no-such-pkcs11.so') });
  await assert.rejects(missing.probe(), (e: unknown) => e instanceof DomainError && e.code === 'custody.unavailable' && /no-such-pkcs11\.so does not load/.test(e.message));
  missing.close();
});
