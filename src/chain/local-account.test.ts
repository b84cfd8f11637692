import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGwei, recoverMessageAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { localAccount, recoverMessageSigner } from './local-account.ts';
import { signDelegation } from './account-transfer.ts';

// The native signer must make exactly the bytes viem's pure-JS signer makes (both RFC 6979, low s):
// anything the chain, a wallet or a verifier checks stays the same.
const keys = Array.from({ length: 20 }, () => generatePrivateKey());
const typedData = (i: number) => ({
  domain: { name: 'VIXP', version: '1', chainId: 31337, verifyingContract: '0x00000000000000000000000000000000000000aa' as Hex },
  types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
  primaryType: 'CancelAuthorization' as const,
  message: { authorizer: '0x00000000000000000000000000000000000000bb' as Hex, nonce: `0x${i.toString(16).padStart(64, '0')}` as Hex },
});

test('the native account has the same address and signs messages, typed data and transactions byte for byte like viem', async () => {
  for (const [i, key] of keys.entries()) {
    const native = localAccount(key);
    const reference = privateKeyToAccount(key);
    assert.equal(native.address, reference.address);
    const message = `sha256 of a transfer ${i}`;
    assert.equal(await native.signMessage({ message }), await reference.signMessage({ message }));
    assert.equal(await native.signTypedData(typedData(i)), await reference.signTypedData(typedData(i)));
    const tx = {
      chainId: 31337, type: 'eip1559' as const, nonce: i, to: reference.address, data: '0x1234' as Hex, value: 0n, gas: 90_000n,
      maxFeePerGas: parseGwei('3'), maxPriorityFeePerGas: parseGwei('1'),
    };
    assert.equal(await native.signTransaction(tx), await reference.signTransaction(tx));
  }
});

test('recovery finds the signer of an EIP-191 message and nothing for a malformed signature', async () => {
  const account = privateKeyToAccount(keys[0]!);
  const signature = await account.signMessage({ message: 'hello' });
  assert.equal(recoverMessageSigner('hello', signature), account.address);
  assert.equal(recoverMessageSigner('hello', signature), await recoverMessageAddress({ message: 'hello', signature }));
  assert.notEqual(recoverMessageSigner('hello!', signature), account.address);
  const v01 = `${signature.slice(0, 130)}${(parseInt(signature.slice(130), 16) - 27).toString(16).padStart(2, '0')}` as Hex;
  assert.equal(recoverMessageSigner('hello', v01), account.address, 'v as 0/1 is accepted like viem does');
  assert.equal(recoverMessageSigner('hello', `${signature.slice(0, 130)}05` as Hex), undefined);
  assert.equal(recoverMessageSigner('hello', '0x1234'), undefined);
});

test('the native account signs EIP-7702 delegations (a raw digest) and type-4 transactions byte for byte like viem', async () => {
  const contract = '0x00000000000000000000000000000000000000cc' as Hex;
  for (const [i, key] of keys.slice(0, 5).entries()) {
    const native = localAccount(key);
    const reference = privateKeyToAccount(key);
    const delegation = await signDelegation(native, 31337, contract, i);
    const expected = await reference.signAuthorization({ chainId: 31337, contractAddress: contract, nonce: i });
    assert.deepEqual({ ...delegation, v: undefined }, { ...expected, address: contract, v: undefined });
    assert.equal(delegation.yParity, expected.yParity);
    const tx = {
      chainId: 31337, type: 'eip7702' as const, nonce: i, to: reference.address, data: '0x1234' as Hex, value: 0n, gas: 90_000n,
      maxFeePerGas: parseGwei('3'), maxPriorityFeePerGas: parseGwei('1'), authorizationList: [delegation],
    };
    assert.equal(await native.signTransaction(tx), await reference.signTransaction(tx));
  }
});
