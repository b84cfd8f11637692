import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFunctionData, getAddress, hashTypedData, keccak256, parseSignature, recoverTypedDataAddress, signatureToCompactSignature, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { recoverAuthorizationAddress } from 'viem/utils';
import { localAccount } from './local-account.ts';
import { accountDomain, accountTransferTypes, signAccountTransfer, signDelegation, signNonceCancellation } from './account-transfer.ts';
import { decodeAccountBatch, delegationGas, encodeAccountBatch, encodeAccountSettlement } from './account-batch-layout.ts';
import { vixpAccountSettlementAbi } from '../gen/contracts/vixp-account-settlement.ts';
import { vixpayAccountAbi } from '../gen/contracts/vixpay-account.ts';

// The TypeScript side of contracts/VixpayAccount.sol and VixpAccountSettlement.sol: the EIP-712
// message an account's key signs and the packed batch, byte for byte (test/account-contract.test.ts
// runs them on a chain).

const key = keccak256(toHex('account-batch-layout.test key'));
const signer = localAccount(key);
const token = getAddress('0x00000000000000000000000000000000000a0001');
const store = getAddress('0x00000000000000000000000000000000000b0001');
const other = getAddress('0x00000000000000000000000000000000000b0002');
const settlement = getAddress('0x00000000000000000000000000000000000c0001');
const deadline = 4_102_444_800n;

test('signAccountTransfer signs the Transfer message in the account\'s own domain, with any custody\'s signTypedData (the same bytes as viem\'s own account)', async () => {
  const transfer = { token, to: store, value: 125n * 10n ** 16n, nonce: 7n, deadline };
  const signed = await signAccountTransfer(signer, 10, transfer);
  const viaViem = await signAccountTransfer(privateKeyToAccount(key), 10, transfer);
  assert.equal(signed.signature, viaViem.signature);
  assert.equal(signed.account, signer.address);
  const typedData = { domain: accountDomain(10, signer.address), types: accountTransferTypes, primaryType: 'Transfer', message: { token, to: store, amount: transfer.value, nonce: 7n, deadline } } as const;
  assert.deepEqual(accountDomain(10, signer.address), { name: 'VixpayAccount', version: '1', chainId: 10, verifyingContract: signer.address });
  assert.equal(await recoverTypedDataAddress({ ...typedData, signature: signed.signature }), signer.address);
  assert.notEqual(hashTypedData(typedData), hashTypedData({ ...typedData, domain: accountDomain(56, signer.address) }), 'the chain is signed');
  const cancel = await signNonceCancellation(signer, 10, 7n);
  assert.equal(await recoverTypedDataAddress({ domain: accountDomain(10, signer.address), types: { CancelNonce: [{ name: 'nonce', type: 'uint256' }] }, primaryType: 'CancelNonce', message: { nonce: 7n }, signature: cancel }), signer.address);
});

test('the packed batch: groups of a token with its payee table, then per item account, payee index, exponent, mantissa, nonce, deadline, r, vs', async () => {
  const a = await signAccountTransfer(signer, 10, { token, to: store, value: 125n * 10n ** 16n, nonce: 7n, deadline });
  const b = await signAccountTransfer(signer, 10, { token, to: other, value: 3n, nonce: 300n, deadline: 0n });
  const compact = (signature: Hex) => {
    const { r, yParityAndS } = signatureToCompactSignature(parseSignature(signature));
    return `${r.slice(2)}${yParityAndS.slice(2)}`;
  };
  const account = signer.address.slice(2).toLowerCase();
  const expected = `0x01${token.slice(2).toLowerCase()}02${store.slice(2).toLowerCase()}${other.slice(2).toLowerCase()}0002`
    + `${account}0010017d010704f4865700${compact(a.signature)}`
    + `${account}0100010302012c00${compact(b.signature)}` as Hex;
  assert.equal(encodeAccountBatch([a, b]), expected);
  // Header 64 bytes; item a 95 (1-byte mantissa and nonce, 4-byte deadline), item b 92 (2-byte nonce, deadline 0).
  assert.equal((expected.length - 2) / 2, 64 + 95 + 92);
  assert.deepEqual(decodeAccountBatch(expected).map(({ r: _r, vs: _vs, ...fields }) => fields), [
    { token, account: signer.address, to: store, value: a.value, nonce: 7n, deadline },
    { token, account: signer.address, to: other, value: 3n, nonce: 300n, deadline: 0n },
  ]);
  assert.throws(() => decodeAccountBatch(`${expected}00`), /ends at byte/);
});

test('encodeAccountSettlement: many items are one settle(batch) with VixpSettlement\'s gas; one item goes to the account itself; each delegation adds 25,000', async () => {
  const a = await signAccountTransfer(signer, 10, { token, to: store, value: 1n, nonce: 1n, deadline });
  const b = await signAccountTransfer(signer, 10, { token, to: store, value: 2n, nonce: 2n, deadline });
  const batch = encodeAccountSettlement(settlement, [a, b]);
  assert.equal(batch.to, settlement);
  assert.equal(batch.gas, 60_000n + 2n * 175_000n);
  assert.deepEqual(decodeFunctionData({ abi: vixpAccountSettlementAbi, data: batch.data }).args, [encodeAccountBatch([a, b])]);
  const alone = encodeAccountSettlement(settlement, [a]);
  assert.equal(alone.to, signer.address);
  assert.equal(alone.gas, 180_000n);
  const { r, yParityAndS } = signatureToCompactSignature(parseSignature(a.signature));
  assert.deepEqual(decodeFunctionData({ abi: vixpayAccountAbi, data: alone.data }), { functionName: 'signedTransfer', args: [token, store, 1n, 1n, deadline, r, yParityAndS] });
  const authorization = await privateKeyToAccount(key).signAuthorization({ chainId: 10, address: settlement, nonce: 0 });
  const carrying = encodeAccountSettlement(settlement, [a, b], [authorization]);
  assert.equal(carrying.gas, batch.gas + delegationGas);
  assert.deepEqual(carrying.authorizationList, [authorization]);
  assert.throws(() => encodeAccountSettlement(settlement, []), /at least one item/);
});

test('signDelegation: the authorization digest signed by any custody signing a digest, the same as viem\'s signAuthorization; never chain 0', async () => {
  const viemAccount = privateKeyToAccount(key);
  const ours = await signDelegation(viemAccount, 204, settlement, 0);
  assert.deepEqual(ours, await viemAccount.signAuthorization({ chainId: 204, address: settlement, nonce: 0 }));
  assert.equal(await recoverAuthorizationAddress({ authorization: ours }), viemAccount.address);
  await assert.rejects(signDelegation(viemAccount, 0, settlement, 0), /chain id 0/);
});
