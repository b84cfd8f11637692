import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isAddressEqual, keccak256, parseEventLogs, parseUnits, toHex, type Address, type Hex } from 'viem';
import type { HDAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import {
  assertReverts, deployContracts, holder, payee, relayer, splitSignature, stranger, tokenDomain, type ContractsChain,
} from '../../test/support/token-contracts.ts';

// VixpToken's EIP-3009 (transfer, receive and cancel with a holder's signed authorization) on a real anvil.
let anvil: AnvilProcess | undefined;
let chain: ContractsChain;

before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  chain = await deployContracts(anvil.url);
});

after(async () => {
  await anvil?.stop();
});

// ---------------------------------------------------------------------------------------------------
// EIP-3009

test('EIP-3009: type hashes are the standard (USDC) ones', async () => {
  const { token } = chain;
  assert.equal(await token.read.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), '0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267');
  assert.equal(await token.read.RECEIVE_WITH_AUTHORIZATION_TYPEHASH(), '0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8');
  assert.equal(await token.read.CANCEL_AUTHORIZATION_TYPEHASH(), '0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429');
  assert.equal(
    await token.read.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(),
    keccak256(toHex('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)')),
  );
});

test('EIP-3009: a relayer submits the holder-signed transfer, which moves exactly the amount, once', async () => {
  const { token, tokenAs, mined, publicClient } = chain;
  const value = parseUnits('12.5', 18);
  const auth = await signAuthorization(holder, { to: payee.address, value });
  const args = [holder.address, payee.address, value, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s] as const;
  const balances = () => Promise.all([holder, payee, relayer].map((a) => token.read.balanceOf([a.address])));
  const [holderBefore, payeeBefore, relayerBefore] = await balances();
  const holderEthBefore = await publicClient.getBalance({ address: holder.address });

  const receipt = await mined(tokenAs(relayer).write.transferWithAuthorization(args));

  assert.ok(isAddressEqual(receipt.from, relayer.address), 'submitted by the relayer');
  assert.deepEqual(await balances(), [holderBefore! - value, payeeBefore! + value, relayerBefore]);
  assert.equal(await publicClient.getBalance({ address: holder.address }), holderEthBefore, 'the holder paid no gas');
  assert.equal(await token.read.authorizationState([holder.address, auth.nonce]), true);
  const [used] = parseEventLogs({ abi: vixpTokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' });
  assert.deepEqual(used?.args, { authorizer: holder.address, nonce: auth.nonce });

  // The very same authorization again.
  await assertReverts(tokenAs(relayer).simulate.transferWithAuthorization(args), 'AuthorizationAlreadyUsed');
});

test('EIP-3009: the bytes-signature overload takes the same authorization', async () => {
  const { token, tokenAs, mined } = chain;
  const auth = await signAuthorization(holder, { to: payee.address, value: 7n });
  const payeeBefore = await token.read.balanceOf([payee.address]);
  await mined(
    tokenAs(relayer).write.transferWithAuthorization([
      holder.address, payee.address, 7n, auth.validAfter, auth.validBefore, auth.nonce, auth.signature,
    ]),
  );
  assert.equal(await token.read.balanceOf([payee.address]), payeeBefore + 7n);
});

test('EIP-3009: expired and not-yet-valid authorizations revert', async () => {
  const now = (await chain.publicClient.getBlock()).timestamp;
  const expired = await signAuthorization(holder, { to: payee.address, value: 1n, validBefore: now - 1n });
  await assertReverts(relayTransfer(payee.address, 1n, expired), 'AuthorizationExpired');

  const early = await signAuthorization(holder, { to: payee.address, value: 1n, validAfter: now + 3600n, validBefore: now + 7200n });
  await assertReverts(relayTransfer(payee.address, 1n, early), 'AuthorizationNotYetValid');
});

test('EIP-3009: a signature by the wrong key, or for other terms, reverts', async () => {
  const byStranger = await signAuthorization(stranger, { from: holder.address, to: payee.address, value: 1n });
  await assertReverts(relayTransfer(payee.address, 1n, byStranger), 'InvalidAuthorizationSignature');

  const signedForOne = await signAuthorization(holder, { to: payee.address, value: 1n });
  await assertReverts(relayTransfer(payee.address, 2n, signedForOne), 'InvalidAuthorizationSignature');
  await assertReverts(relayTransfer(stranger.address, 1n, signedForOne), 'InvalidAuthorizationSignature');
});

test('EIP-3009: receiveWithAuthorization only from the payee', async () => {
  const { token, tokenAs, mined } = chain;
  const auth = await signAuthorization(holder, { to: payee.address, value: 3n, primaryType: 'ReceiveWithAuthorization' });
  const args = [holder.address, payee.address, 3n, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s] as const;
  await assertReverts(tokenAs(relayer).simulate.receiveWithAuthorization(args), 'CallerIsNotPayee');

  const payeeBefore = await token.read.balanceOf([payee.address]);
  await mined(tokenAs(payee).write.receiveWithAuthorization(args));
  assert.equal(await token.read.balanceOf([payee.address]), payeeBefore + 3n);
});

test('EIP-3009: a canceled authorization can no longer be used', async () => {
  const { token, tokenAs, mined } = chain;
  const auth = await signAuthorization(holder, { to: payee.address, value: 1n });
  const cancelSignature = await holder.signTypedData({
    domain: tokenDomain(chain.tokenAddress),
    types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
    primaryType: 'CancelAuthorization',
    message: { authorizer: holder.address, nonce: auth.nonce },
  });
  const { v, r, s } = splitSignature(cancelSignature);

  const receipt = await mined(tokenAs(relayer).write.cancelAuthorization([holder.address, auth.nonce, v, r, s]));
  const [canceled] = parseEventLogs({ abi: vixpTokenAbi, logs: receipt.logs, eventName: 'AuthorizationCanceled' });
  assert.deepEqual(canceled?.args, { authorizer: holder.address, nonce: auth.nonce });
  assert.equal(await token.read.authorizationState([holder.address, auth.nonce]), true);

  await assertReverts(relayTransfer(payee.address, 1n, auth), 'AuthorizationAlreadyUsed');
  await assertReverts(
    tokenAs(relayer).simulate.cancelAuthorization([holder.address, auth.nonce, cancelSignature]),
    'AuthorizationAlreadyUsed',
  );
});

// ---------------------------------------------------------------------------------------------------
// helpers

interface Authorization {
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  /** 65 bytes r || s || v, for the `bytes signature` overloads */
  signature: Hex;
  v: number;
  r: Hex;
  s: Hex;
}

/** Signs an EIP-3009 authorization with `signer`'s key: by default a transfer from the signer, valid for an hour. */
async function signAuthorization(
  signer: HDAccount,
  terms: {
    from?: Address;
    to: Address;
    value: bigint;
    validAfter?: bigint;
    validBefore?: bigint;
    primaryType?: 'TransferWithAuthorization' | 'ReceiveWithAuthorization';
  },
): Promise<Authorization> {
  const fields = [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ] as const;
  const primaryType = terms.primaryType ?? 'TransferWithAuthorization';
  const validAfter = terms.validAfter ?? 0n;
  const validBefore = terms.validBefore ?? (await chain.publicClient.getBlock()).timestamp + 3600n;
  const nonce = toHex(randomBytes(32));
  const signature = await signer.signTypedData({
    domain: tokenDomain(chain.tokenAddress),
    types: { [primaryType]: fields },
    primaryType,
    message: { from: terms.from ?? signer.address, to: terms.to, value: terms.value, validAfter, validBefore, nonce },
  });
  return { validAfter, validBefore, nonce, signature, ...splitSignature(signature) };
}

/** Simulates the relayer submitting `auth` as a transfer of `value` from the holder to `to`. */
function relayTransfer(to: Address, value: bigint, auth: Authorization) {
  return chain.tokenAs(relayer).simulate.transferWithAuthorization([
    holder.address, to, value, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s,
  ]);
}
