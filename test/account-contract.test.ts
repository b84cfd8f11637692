import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BaseError, concat, createPublicClient, createWalletClient, decodeErrorResult, encodeAbiParameters, encodeDeployData,
  encodeFunctionData, getAddress, hexToBigInt, http, keccak256, numberToHex, parseEventLogs, parseSignature, parseUnits, serializeSignature,
  toHex, type Abi, type Address, type Hex, type PublicClient, type SignedAuthorization, type TransactionReceipt,
} from 'viem';
import { mnemonicToAccount, privateKeyToAccount, type HDAccount, type PrivateKeyAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from '../src/chain/anvil-process.ts';
import { accountDomain, accountTransferTypes, signAccountTransfer, signNonceCancellation, type SignedAccountTransfer } from '../src/chain/account-transfer.ts';
import { encodeAccountBatch, encodeAccountSettlement } from '../src/chain/account-batch-layout.ts';
import { encodeSettlement } from '../src/chain/settlement-calldata.ts';
import { executedTransferCount } from '../src/chain/mined-receipt.ts';
import type { SettlementItem } from '../src/chain/relay-types.ts';
import { vixpayAccountAbi, vixpayAccountBytecode } from '../src/gen/contracts/vixpay-account.ts';
import { vixpAccountSettlementAbi, vixpAccountSettlementBytecode } from '../src/gen/contracts/vixp-account-settlement.ts';
import { vixpSettlementAbi, vixpSettlementBytecode } from '../src/gen/contracts/vixp-settlement.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../src/gen/contracts/vixp-token.ts';
import { transferAuthorizationTypes } from '../src/wallet/authorize-transfer.ts';
import { nextAuthorizationNonce } from '../src/wallet/authorization-nonce.ts';
import { falseReturningTokenAbi, falseReturningTokenBytecode, tetherLikeAbi, tetherLikeBytecode, usdcLikeAbi, usdcLikeBytecode } from './support/gen/test-tokens.ts';
import { receiptOf } from './support/chain-parts.ts';

// contracts/VixpayAccount.sol on a real anvil (Prague: EIP-7702): custodial accounts delegate to it
// by a relayer's type-4 transaction carrying their signed authorization, then move any ERC-20 with
// their own EIP-712 signature, one at a time or many accounts in one VixpAccountSettlement batch.
// Each attack below is its own test and fails if the check it attacks were removed. Keys, nonces,
// deadlines and the deployment order are fixed, so every gas figure is exact.

const devMnemonic = 'test test test test test test test test test test test junk';
const [owner, relayer, stranger] = [0, 2, 4].map((addressIndex) => mnemonicToAccount(devMnemonic, { addressIndex })) as [HDAccount, HDAccount, HDAccount];
const chainId = foundry.id;
const keyOf = (label: string): PrivateKeyAccount => privateKeyToAccount(keccak256(toHex(`account-contract.test ${label}`)));
const [alice, bob, carol, dave] = ['alice', 'bob', 'carol', 'dave'].map(keyOf) as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
/** A store's settlement account, already holding each token. */
const store = keyOf('store').address;
/** Far in the future, fixed: the same calldata on every run. */
const deadline = 4_102_444_800n;
const one = parseUnits('1', 18);
const oneUsd = parseUnits('1', 6);
const magicValue = '0x1626ba7e';

let anvil: AnvilProcess | undefined;
let client: PublicClient;
let accountCode: Address;
let accountSettlement: Address;
let settlement: Address;
let vixp: Address;
let usdt: Address;
let usdc: Address;
let falseToken: Address;

before(async () => {
  anvil = await startAnvil({ chainId, port: 0 });
  client = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  accountCode = await deploy(encodeDeployData({ abi: vixpayAccountAbi, bytecode: vixpayAccountBytecode }));
  accountSettlement = await deploy(encodeDeployData({ abi: vixpAccountSettlementAbi, bytecode: vixpAccountSettlementBytecode }));
  settlement = await deploy(encodeDeployData({ abi: vixpSettlementAbi, bytecode: vixpSettlementBytecode }));
  vixp = await deploy(encodeDeployData({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: ['VIXP', 'VIXP', owner.address, parseUnits('1000000000', 18)] }));
  usdt = await deploy(encodeDeployData({ abi: tetherLikeAbi, bytecode: tetherLikeBytecode, args: ['Tether USD', 'USDT', parseUnits('1000000000', 6)] }));
  usdc = await deploy(encodeDeployData({ abi: usdcLikeAbi, bytecode: usdcLikeBytecode, args: [parseUnits('1000000000', 6)] }));
  falseToken = await deploy(encodeDeployData({ abi: falseReturningTokenAbi, bytecode: falseReturningTokenBytecode }));
  for (const holder of [alice, bob, carol, dave].map((k) => k.address).concat(store)) {
    await sendOk(owner, { to: vixp, data: erc20Transfer(holder, 1000n * one) });
    await sendOk(owner, { to: usdt, data: erc20Transfer(holder, 1000n * oneUsd) });
    await sendOk(owner, { to: usdc, data: erc20Transfer(holder, 1000n * oneUsd) });
  }
  await sendOk(owner, { to: falseToken, data: encodeFunctionData({ abi: falseReturningTokenAbi, functionName: 'mint', args: [alice.address, 1000n] }) });
});

after(async () => {
  await anvil?.stop();
});

describe('delegation (EIP-7702)', () => {
  test('a relayer\'s type-4 transaction carrying two accounts\' signed authorizations sets each one\'s code to 0xef0100 ‖ VixpayAccount; the accounts pay nothing', async () => {
    const receipt = await sendOk(relayer, { to: alice.address, data: '0x', authorizationList: [await authorize(alice, accountCode), await authorize(bob, accountCode)] });
    for (const account of [alice, bob]) {
      assert.equal(await client.getCode({ address: account.address }), designator(accountCode));
      assert.equal(await client.getBalance({ address: account.address }), 0n, 'the account holds no ether, before or after');
    }
    assert.equal(receipt.from, relayer.address.toLowerCase());
  });
});

describe('signed transfers', () => {
  test('the relayer moves VIXP, USDT (whose transfer answers nothing) and USDC out of the account with its signature alone: no approval, the account is msg.sender', async () => {
    for (const [token, value, nonce] of [[vixp, 5n * one, 1n], [usdt, 5n * oneUsd, 2n], [usdc, 5n * oneUsd, 3n]] as const) {
      const before = await balanceOf(token, store);
      const item = await signAccountTransfer(alice, chainId, { token, to: store, value, nonce, deadline });
      const receipt = await sendOk(relayer, encodeAccountSettlement(accountSettlement, [item]));
      assert.equal(await balanceOf(token, store), before + value);
      assert.deepEqual(parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs }).map((l) => [l.address, l.args.from, l.args.to]), [[token.toLowerCase(), alice.address, store]]);
      assert.equal(await nonceUsed(alice.address, nonce), true);
    }
    assert.equal(await client.getBalance({ address: alice.address }), 0n);
  });

  test('nonces live in the ERC-7201 namespace vixpay.account: bit (nonce & 255) of word (nonce >> 8)', async () => {
    const location = (hexToBigInt(keccak256(encodeAbiParameters([{ type: 'uint256' }], [hexToBigInt(keccak256(toHex('vixpay.account'))) - 1n]))) & ~0xffn);
    const wordSlot = keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [0n, location]));
    assert.equal(hexToBigInt((await client.getStorageAt({ address: alice.address, slot: wordSlot }))!), 0b1110n, 'nonces 1, 2 and 3 of word 0');
    assert.equal(await client.getStorageAt({ address: alice.address, slot: toHex(0n, { size: 32 }) }), toHex(0n, { size: 32 }), 'slot 0 untouched');
  });

  test('the deadline is the last second a transfer executes in: one past it is refused (Expired)', async () => {
    const now = (await client.getBlock()).timestamp;
    const late = await signAccountTransfer(alice, chainId, { token: vixp, to: store, value: one, nonce: 10n, deadline: now - 1n });
    assert.equal(await revertOf(simulate(alice.address, transferData(late))), 'Expired');
  });
});

describe('attacks on a signed transfer', () => {
  test('replay across chains: a transfer signed for chain 31337 is refused once the chain is 31338 (the signature for 31338 executes there)', async () => {
    const item = await signAccountTransfer(alice, chainId, { token: vixp, to: store, value: one, nonce: 20n, deadline });
    await client.request({ method: 'anvil_setChainId' as never, params: [31_338] as never });
    try {
      assert.equal(await revertOf(simulate(alice.address, transferData(item))), 'InvalidSignature');
      const there = await signAccountTransfer(alice, 31_338, { token: vixp, to: store, value: one, nonce: 20n, deadline });
      await simulate(alice.address, transferData(there));
    } finally {
      await client.request({ method: 'anvil_setChainId' as never, params: [chainId] as never });
    }
    await simulate(alice.address, transferData(item));
  });

  test('replay across accounts: alice\'s signed transfer sent to bob\'s account is refused (InvalidSignature)', async () => {
    const item = await signAccountTransfer(alice, chainId, { token: vixp, to: store, value: one, nonce: 21n, deadline });
    assert.equal(await revertOf(simulate(bob.address, transferData(item))), 'InvalidSignature');
    await simulate(alice.address, transferData(item));
  });

  test('a signature of another account: bob\'s key signing a transfer in alice\'s domain moves nothing of alice\'s (InvalidSignature)', async () => {
    const message = { token: vixp, to: stranger.address, amount: one, nonce: 22n, deadline };
    const signature = await bob.signTypedData({ domain: accountDomain(chainId, alice.address), types: accountTransferTypes, primaryType: 'Transfer', message });
    const forged: SignedAccountTransfer = { token: vixp, account: alice.address, to: stranger.address, value: one, nonce: 22n, deadline, signature };
    assert.equal(await revertOf(simulate(alice.address, transferData(forged))), 'InvalidSignature');
  });

  test('replay across tokens: a transfer signed for VIXP, sent naming USDT (which the account holds too), is refused', async () => {
    const item = await signAccountTransfer(alice, chainId, { token: vixp, to: store, value: 1_000_000n, nonce: 23n, deadline });
    assert.equal(await revertOf(simulate(alice.address, transferData({ ...item, token: usdt }))), 'InvalidSignature');
    assert.equal(await revertOf(simulate(alice.address, transferData({ ...item, to: stranger.address }))), 'InvalidSignature', 'nor another payee');
    assert.equal(await revertOf(simulate(alice.address, transferData({ ...item, value: 2_000_000n }))), 'InvalidSignature', 'nor another amount');
    assert.equal(await revertOf(simulate(alice.address, transferData({ ...item, deadline: deadline + 1n }))), 'InvalidSignature', 'nor another deadline');
  });

  test('replay of a nonce: a transfer executes once; the same, or another message with its nonce, is refused (NonceAlreadyUsed)', async () => {
    const item = await signAccountTransfer(alice, chainId, { token: vixp, to: store, value: one, nonce: 24n, deadline });
    await sendOk(relayer, { to: alice.address, data: transferData(item) });
    assert.equal(await revertOf(simulate(alice.address, transferData(item))), 'NonceAlreadyUsed');
    const other = await signAccountTransfer(alice, chainId, { token: usdc, to: stranger.address, value: 1n, nonce: 24n, deadline });
    assert.equal(await revertOf(simulate(alice.address, transferData(other))), 'NonceAlreadyUsed');
    const next = await signAccountTransfer(alice, chainId, { token: vixp, to: store, value: one, nonce: 24n + 256n, deadline });
    await simulate(alice.address, transferData(next)); // the same bit of another word
  });

  test('a cancelled nonce: its transfer is refused; a cancellation only with the account\'s signature, once', async () => {
    const item = await signAccountTransfer(alice, chainId, { token: vixp, to: store, value: one, nonce: 25n, deadline });
    const byBob = await signNonceCancellation(bob, chainId, 25n);
    assert.equal(await revertOf(simulate(alice.address, cancelData(25n, byBob))), 'InvalidSignature');
    const cancel = cancelData(25n, await signNonceCancellation(alice, chainId, 25n));
    const receipt = await sendOk(stranger, { to: alice.address, data: cancel });
    assert.deepEqual(parseEventLogs({ abi: vixpayAccountAbi, eventName: 'NonceCancelled', logs: receipt.logs }).map((l) => l.args.nonce), [25n]);
    assert.equal(await revertOf(simulate(alice.address, transferData(item))), 'NonceAlreadyUsed');
    assert.equal(await revertOf(simulate(alice.address, cancel)), 'NonceAlreadyUsed', 'a cancellation counts once');
    assert.equal(await revertOf(simulate(alice.address, cancelData(24n, await signNonceCancellation(alice, chainId, 24n)))), 'NonceAlreadyUsed', 'a used nonce is not cancelled');
  });

  test('a call from someone else: a stranger\'s own signature moves nothing; nothing but the signed calls is there (no ERC-20 call, no approval, no arbitrary call)', async () => {
    const own = await signAccountTransfer(stranger, chainId, { token: vixp, to: stranger.address, value: one, nonce: 26n, deadline });
    assert.equal(await revertOf(simulate(alice.address, transferData({ ...own, account: alice.address }), stranger.address)), 'InvalidSignature');
    const typeHash = await client.readContract({ address: alice.address, abi: vixpayAccountAbi, functionName: 'TRANSFER_TYPEHASH' });
    assert.equal(typeHash, keccak256(toHex('Transfer(address token,address to,uint256 amount,uint256 nonce,uint256 deadline)')));
    const functions = vixpayAccountAbi.filter((entry) => entry.type === 'function').map((entry) => `${entry.name}:${entry.stateMutability}`).sort();
    assert.deepEqual(functions, [
      'CANCEL_NONCE_TYPEHASH:view', 'TRANSFER_TYPEHASH:view', 'cancelNonce:nonpayable', 'isValidSignature:view', 'nonceUsed:view', 'signedTransfer:nonpayable',
    ]);
    for (const data of [
      erc20Transfer(stranger.address, one),
      encodeFunctionData({ abi: vixpTokenAbi, functionName: 'approve', args: [stranger.address, one] }),
      concat(['0xb61d27f6', encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }], [vixp, 0n, erc20Transfer(stranger.address, one)])]), // execute(address,uint256,bytes)
    ]) {
      assert.equal(await revertOf(simulate(alice.address, data, stranger.address)), 'no reason', data.slice(0, 10));
    }
    await sendOk(stranger, { to: alice.address, data: '0x', value: 1n }); // plain ether, as before delegation
    await sendOk(owner, { to: alice.address, data: '0x', value: 0n });
  });

  test('a signed transfer sent by anyone pays only the payee it names', async () => {
    const item = await signAccountTransfer(alice, chainId, { token: usdc, to: store, value: 7n, nonce: 27n, deadline });
    const before = await balanceOf(usdc, store);
    await sendOk(stranger, { to: alice.address, data: transferData(item) });
    assert.equal(await balanceOf(usdc, store), before + 7n);
  });

  test('re-delegation: delegated elsewhere the account\'s signatures execute nothing; the first authorization cannot be replayed; back on VixpayAccount, its used nonces are still used', async () => {
    const first = await authorize(dave, accountCode);
    await sendOk(relayer, { to: store, data: '0x', authorizationList: [first] });
    const executed = await signAccountTransfer(dave, chainId, { token: vixp, to: store, value: one, nonce: 1n, deadline });
    await sendOk(relayer, { to: dave.address, data: transferData(executed) });
    // dave re-delegates to a contract that has no signedTransfer (the EIP-3009 batch contract).
    await sendOk(relayer, { to: store, data: '0x', authorizationList: [await authorize(dave, settlement)] });
    assert.equal(await client.getCode({ address: dave.address }), designator(settlement));
    const fresh = await signAccountTransfer(dave, chainId, { token: vixp, to: store, value: one, nonce: 2n, deadline });
    assert.equal(await revertOf(simulate(dave.address, transferData(fresh))), 'no reason');
    // The relayer replays dave's first authorization: its nonce is spent, so the chain ignores it.
    await sendOk(relayer, { to: store, data: '0x', authorizationList: [first] });
    assert.equal(await client.getCode({ address: dave.address }), designator(settlement));
    // An authorization signed for another chain is ignored too.
    const elsewhere = await dave.signAuthorization({ chainId: 1, address: accountCode, nonce: await client.getTransactionCount({ address: dave.address }) });
    await sendOk(relayer, { to: store, data: '0x', authorizationList: [elsewhere] });
    assert.equal(await client.getCode({ address: dave.address }), designator(settlement));
    // Back on VixpayAccount (a new authorization): the transfer executed before stays executed.
    await sendOk(relayer, { to: store, data: '0x', authorizationList: [await authorize(dave, accountCode)] });
    assert.equal(await revertOf(simulate(dave.address, transferData(executed))), 'NonceAlreadyUsed');
    await simulate(dave.address, transferData(fresh));
  });
});

describe('tokens that fail', () => {
  test('a reverting token (USDT paused, the account blacklisted): TokenTransferFailed(token), the nonce left unused; the same signature executes once the token lets it', async () => {
    const item = await signAccountTransfer(alice, chainId, { token: usdt, to: store, value: oneUsd, nonce: 30n, deadline });
    await sendOk(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'pause' }) });
    assert.deepEqual(await revertWithArgs(simulate(alice.address, transferData(item))), ['TokenTransferFailed', [usdt]]);
    await sendOk(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'unpause' }) });
    await sendOk(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'addBlackList', args: [alice.address] }) });
    assert.deepEqual(await revertWithArgs(simulate(alice.address, transferData(item))), ['TokenTransferFailed', [usdt]]);
    await sendOk(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'removeBlackList', args: [alice.address] }) });
    assert.equal(await nonceUsed(alice.address, 30n), false);
    await sendOk(relayer, { to: alice.address, data: transferData(item) });
  });

  test('a token answering false, or an address without code, is a failed transfer (TokenTransferFailed), never one taken as made', async () => {
    const tooMuch = await signAccountTransfer(alice, chainId, { token: falseToken, to: store, value: 1001n, nonce: 31n, deadline });
    assert.deepEqual(await revertWithArgs(simulate(alice.address, transferData(tooMuch))), ['TokenTransferFailed', [falseToken]]);
    const enough = await signAccountTransfer(alice, chainId, { token: falseToken, to: store, value: 1000n, nonce: 31n, deadline });
    await simulate(alice.address, transferData(enough));
    const noCode = await signAccountTransfer(alice, chainId, { token: stranger.address, to: store, value: 1n, nonce: 32n, deadline });
    assert.deepEqual(await revertWithArgs(simulate(alice.address, transferData(noCode))), ['TokenTransferFailed', [stranger.address]]);
  });
});

describe('ERC-1271 for the account\'s own key', () => {
  const hash = keccak256(toHex('any message'));
  const isValid = (address: Address, signature: Hex) =>
    client.readContract({ address, abi: vixpayAccountAbi, functionName: 'isValidSignature', args: [hash, signature] });

  test('the account key\'s signature of a hash is valid; another key\'s, a malleated (high s) one, a 64-byte one are not; nothing is valid at the contract\'s own address', async () => {
    const own = await alice.sign({ hash });
    assert.equal(await isValid(alice.address, own), magicValue);
    assert.equal(await isValid(alice.address, await bob.sign({ hash })), '0xffffffff');
    const { r, s, yParity } = parseSignature(own);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const highS = serializeSignature({ r, s: numberToHex(n - hexToBigInt(s), { size: 32 }), yParity: 1 - yParity });
    assert.equal(await isValid(alice.address, highS), '0xffffffff');
    assert.equal(await isValid(alice.address, `0x${own.slice(2, 130)}`), '0xffffffff');
    assert.equal(await isValid(accountCode, own), '0xffffffff');
  });
});

describe('EIP-3009 (VixpToken, UsdcLike) of an account signed before and after its delegation', () => {
  // Both tokens check signatures with OpenZeppelin's SignatureChecker (contracts/EIP3009.sol): an
  // authorizer with code is asked ERC-1271 instead of having its ECDSA signature recovered.
  const domainOf = (token: Address) => token === vixp ? { name: 'VIXP', version: '1', chainId, verifyingContract: token } : { name: 'USD Coin', version: '2', chainId, verifyingContract: token };
  const nonceOf = (label: string) => keccak256(toHex(`account-contract.test eip3009 ${label}`));
  const sign3009 = async (key: PrivateKeyAccount, token: Address, label: string) => {
    const message = { from: key.address, to: store, value: 3n, validAfter: 0n, validBefore: deadline, nonce: nonceOf(label) };
    const signature = await key.signTypedData({ domain: domainOf(token), types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message });
    const { r, s, yParity } = parseSignature(signature);
    return encodeFunctionData({ abi: vixpTokenAbi, functionName: 'transferWithAuthorization', args: [message.from, message.to, message.value, 0n, deadline, message.nonce, yParity + 27, r, s] });
  };
  const signCancel = async (key: PrivateKeyAccount, token: Address, label: string) => {
    const signature = await key.signTypedData({
      domain: domainOf(token), types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
      primaryType: 'CancelAuthorization', message: { authorizer: key.address, nonce: nonceOf(label) },
    });
    const { r, s, yParity } = parseSignature(signature);
    return encodeFunctionData({ abi: vixpTokenAbi, functionName: 'cancelAuthorization', args: [key.address, nonceOf(label), yParity + 27, r, s] });
  };
  const state = (token: Address, key: PrivateKeyAccount, label: string) =>
    client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'authorizationState', args: [key.address, nonceOf(label)] });

  test('signed before delegation, executed after it: transfers and cancellations on both tokens (the token asks the account, which answers for its key)', async () => {
    const signed = [];
    for (const token of [vixp, usdc]) signed.push([token, await sign3009(carol, token, 'before'), await signCancel(carol, token, 'cancel before')] as const);
    await sendOk(relayer, { to: carol.address, data: '0x', authorizationList: [await authorize(carol, accountCode)] });
    assert.equal(await client.getCode({ address: carol.address }), designator(accountCode));
    for (const [token, transfer, cancel] of signed) {
      const before = await balanceOf(token, store);
      await sendOk(relayer, { to: token, data: transfer });
      await sendOk(relayer, { to: token, data: cancel });
      assert.equal(await balanceOf(token, store), before + 3n);
      assert.deepEqual([await state(token, carol, 'before'), await state(token, carol, 'cancel before')], [true, true]);
    }
  });

  test('signed after delegation: transfers and cancellations on both tokens', async () => {
    for (const token of [vixp, usdc]) {
      await sendOk(relayer, { to: token, data: await sign3009(carol, token, 'after') });
      await sendOk(relayer, { to: token, data: await signCancel(carol, token, 'cancel after') });
      assert.deepEqual([await state(token, carol, 'after'), await state(token, carol, 'cancel after')], [true, true]);
    }
  });

  test('why ERC-1271 is needed: an account delegated to code without it has its plain ECDSA authorization refused (InvalidAuthorizationSignature)', async () => {
    const erin = keyOf('erin');
    await sendOk(owner, { to: vixp, data: erc20Transfer(erin.address, one) });
    await sendOk(relayer, { to: store, data: '0x', authorizationList: [await authorize(erin, settlement)] });
    assert.equal(await revertOf(simulate(vixp, await sign3009(erin, vixp, 'erin'), relayer.address, vixpTokenAbi)), 'InvalidAuthorizationSignature');
  });
});

describe('VixpAccountSettlement: many accounts\' signed transfers in one transaction', () => {
  const batchKeys = Array.from({ length: 6 }, (_, i) => keyOf(`batch ${i}`));
  before(async () => {
    for (const key of batchKeys) {
      await sendOk(owner, { to: vixp, data: erc20Transfer(key.address, 10n * one) });
      await sendOk(owner, { to: usdt, data: erc20Transfer(key.address, 10n * oneUsd) });
    }
    // All but batch 2 delegate (batch 2 stays a plain account), in one transaction.
    const delegated = batchKeys.filter((_, i) => i !== 2);
    await sendOk(relayer, { to: store, data: '0x', authorizationList: await Promise.all(delegated.map((k) => authorize(k, accountCode))) });
  });

  test('each failing item is skipped alone with ItemSkipped(index, nonce): balance moved away, not delegated, another key\'s signature, payer blacklisted; the others execute', async () => {
    const [k0, k1, k2, k3, k4, k5] = batchKeys as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
    // k1's balance moves away after it signed its batch item.
    const item1 = await signAccountTransfer(k1, chainId, { token: vixp, to: store, value: 5n * one, nonce: 1n, deadline });
    await sendOk(relayer, { to: k1.address, data: transferData(await signAccountTransfer(k1, chainId, { token: vixp, to: stranger.address, value: 10n * one, nonce: 2n, deadline })) });
    await sendOk(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'addBlackList', args: [k5.address] }) });
    const forged = await signAccountTransfer(k4, chainId, { token: vixp, to: store, value: one, nonce: 1n, deadline });
    const items = [
      await signAccountTransfer(k0, chainId, { token: vixp, to: store, value: one, nonce: 1n, deadline }), // VIXP group: index 0
      item1, // 1: balance moved away
      await signAccountTransfer(k0, chainId, { token: usdt, to: store, value: oneUsd, nonce: 2n, deadline }), // USDT group: index 4
      await signAccountTransfer(k2, chainId, { token: vixp, to: store, value: one, nonce: 1n, deadline }), // 2: not delegated
      { ...forged, account: k3.address }, // 3: k4's signature on k3's account
      await signAccountTransfer(k5, chainId, { token: usdt, to: stranger.address, value: oneUsd, nonce: 1n, deadline }), // 5: blacklisted
      await signAccountTransfer(k4, chainId, { token: usdt, to: stranger.address, value: oneUsd, nonce: 2n, deadline }), // 6
    ];
    const call = encodeAccountSettlement(accountSettlement, items);
    const { result } = await client.simulateContract({ address: accountSettlement, abi: vixpAccountSettlementAbi, functionName: 'settle', args: [encodeAccountBatch(items)], account: relayer.address });
    assert.equal(result, 3n);
    const [vixpBefore, usdtBefore] = [await balanceOf(vixp, store), await balanceOf(usdt, store)];
    const receipt = await sendOk(relayer, call);
    const skipped = parseEventLogs({ abi: vixpAccountSettlementAbi, eventName: 'ItemSkipped', logs: receipt.logs }).map((l) => [l.args.index, l.args.nonce]);
    assert.deepEqual(skipped, [[1n, toHex(1n, { size: 32 })], [2n, toHex(1n, { size: 32 })], [3n, toHex(1n, { size: 32 })], [5n, toHex(1n, { size: 32 })]]);
    const moved = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs }).map((l) => [getAddress(l.address), l.args.from]);
    assert.deepEqual(moved, [[vixp, k0.address], [usdt, k0.address], [usdt, k4.address]]);
    assert.deepEqual([await nonceUsed(k0.address, 1n), await nonceUsed(k0.address, 2n), await nonceUsed(k4.address, 2n)], [true, true, true]);
    assert.equal(await balanceOf(vixp, store), vixpBefore + one);
    assert.equal(await balanceOf(usdt, store), usdtBefore + oneUsd);
    assert.deepEqual([await nonceUsed(k1.address, 1n), await nonceUsed(k3.address, 1n), await nonceUsed(k5.address, 1n)], [false, false, false], 'a skipped item leaves its nonce usable');
  });

  test('USDT paused: every USDT item is skipped, the VIXP items of the same batch execute', async () => {
    const [k0, , , , k4] = batchKeys as PrivateKeyAccount[];
    await sendOk(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'pause' }) });
    const items = [
      await signAccountTransfer(k0!, chainId, { token: usdt, to: store, value: oneUsd, nonce: 3n, deadline }),
      await signAccountTransfer(k0!, chainId, { token: vixp, to: store, value: one, nonce: 4n, deadline }),
      await signAccountTransfer(k4!, chainId, { token: usdt, to: store, value: oneUsd, nonce: 3n, deadline }),
    ];
    const receipt = await sendOk(relayer, encodeAccountSettlement(accountSettlement, items));
    await sendOk(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'unpause' }) });
    const skipped = parseEventLogs({ abi: vixpAccountSettlementAbi, eventName: 'ItemSkipped', logs: receipt.logs }).map((l) => l.args.index);
    assert.deepEqual(skipped, [0n, 1n], 'the USDT group (indexes 0 and 1) skipped, the VIXP group (index 2) executed');
    assert.equal(await nonceUsed(k0!.address, 4n), true);
  });

  test('a malformed batch or a token without code reverts the whole batch', async () => {
    const item = await signAccountTransfer(batchKeys[0]!, chainId, { token: vixp, to: store, value: one, nonce: 9n, deadline });
    const batch = encodeAccountBatch([item, item]);
    const settleData = (b: Hex) => encodeFunctionData({ abi: vixpAccountSettlementAbi, functionName: 'settle', args: [b] });
    assert.equal(await revertOf(simulate(accountSettlement, settleData(`${batch}00`), relayer.address, vixpAccountSettlementAbi)), 'MalformedBatch');
    const noCode = encodeAccountBatch([{ ...item, token: stranger.address }, item]);
    assert.equal(await revertOf(simulate(accountSettlement, settleData(noCode), relayer.address, vixpAccountSettlementAbi)), 'NotAToken');
  });
});

describe('gas per transfer: account transfers beside EIP-3009 authorizations (VixpSettlement), same chain, same run', () => {
  // Every transfer 1 VIXP to the store (which holds VIXP already), from payers holding VIXP; each
  // account's key delegated beforehand unless said. "first" is an account's first transfer (its nonce
  // word written fresh, 22,100 gas as EIP-3009's nonce slot is for every transfer); after it, a
  // transfer writes a word already written. EIP-3009 items carry the platform's counter nonces.
  const accounts = Array.from({ length: 100 }, (_, i) => keyOf(`gas account ${i}`));
  const newcomers = Array.from({ length: 10 }, (_, i) => keyOf(`new account ${i}`));
  const holders = Array.from({ length: 100 }, (_, i) => keyOf(`eip3009 holder ${i}`));
  const measured: Record<string, number> = {};
  /** What the metric of transfers per transaction counts in each receipt (src/chain/account-settlement.ts). */
  const transferCounts: Record<string, number> = {};
  const perTransfer = (receipt: TransactionReceipt, count: number) => Math.round(Number(receipt.gasUsed) / count);
  const accountItems = (keys: readonly PrivateKeyAccount[], nonce: bigint, token: Address = vixp) =>
    Promise.all(keys.map((key) => signAccountTransfer(key, chainId, { token, to: store, value: token === vixp ? one : oneUsd, nonce, deadline })));

  before(async () => {
    for (const key of [...accounts, ...newcomers, ...holders]) await sendOk(owner, { to: vixp, data: erc20Transfer(key.address, 100n * one) });
    for (const key of accounts) await sendOk(owner, { to: usdt, data: erc20Transfer(key.address, 100n * oneUsd) });
    await sendOk(relayer, { to: store, data: '0x', gas: 3_000_000n, authorizationList: await Promise.all(accounts.map((k) => authorize(k, accountCode))) });
    for (const count of [10, 100]) {
      measured[`account, first × ${count}`] = await measure(async () => perTransfer(await sendOk(relayer, encodeAccountSettlement(accountSettlement, await accountItems(accounts.slice(0, count), 0n))), count));
    }
    // USDT-shaped (contracts/test/TetherLike.sol: its pause and the sender's blacklist entry read on every transfer, nothing returned).
    measured['usdt, first × 100'] = await measure(async () => perTransfer(await sendOk(relayer, encodeAccountSettlement(accountSettlement, await accountItems(accounts, 0n, usdt))), 100));
    await sendOk(relayer, encodeAccountSettlement(accountSettlement, await accountItems(accounts, 0n))); // every account's first transfer
    for (const count of [10, 100]) {
      measured[`usdt × ${count}`] = await measure(async () => {
        const receipt = await sendOk(relayer, encodeAccountSettlement(accountSettlement, await accountItems(accounts.slice(0, count), 2n, usdt)));
        transferCounts[`usdt × ${count}`] = executedTransferCount(receipt);
        return perTransfer(receipt, count);
      });
    }
    measured['account, alone × 1'] = await measure(async () => perTransfer(await sendOk(relayer, encodeAccountSettlement(accountSettlement, await accountItems(accounts.slice(0, 1), 1n))), 1));
    for (const count of [10, 100]) {
      measured[`account × ${count}`] = await measure(async () => perTransfer(await sendOk(relayer, encodeAccountSettlement(accountSettlement, await accountItems(accounts.slice(0, count), 1n))), count));
    }
    for (const count of [1, 10, 100]) {
      const items = await Promise.all(holders.slice(0, count).map((holder, i) => sign3009Item(holder, i)));
      measured[`eip3009 × ${count}`] = await measure(async () => {
        const receipt = await sendOk(relayer, encodeSettlement(settlement, items));
        transferCounts[`eip3009 × ${count}`] = executedTransferCount(receipt);
        return perTransfer(receipt, count);
      });
    }
    // Delegations carried by the batch of the newcomers' first transfers, beside the same batch once
    // they delegated in a transaction of their own.
    const delegations = await Promise.all(newcomers.map((k) => authorize(k, accountCode)));
    const firstItems = await accountItems(newcomers, 0n);
    const carrying = await measure(async () => Number((await sendOk(relayer, encodeAccountSettlement(accountSettlement, firstItems, delegations))).gasUsed));
    measured['delegation, its own transaction × 10'] = Number((await sendOk(relayer, { to: store, data: '0x', authorizationList: delegations })).gasUsed);
    const after = Number((await sendOk(relayer, encodeAccountSettlement(accountSettlement, firstItems))).gasUsed);
    measured['delegation, carried in the batch, per account'] = Math.round((carrying - after) / 10);
    process.stdout.write(`${JSON.stringify(measured)}\n`);
  });

  test('exact figures (docs/decisions/tokens.md has the table)', () => {
    assert.deepEqual(measured, expectedGas);
  });

  test('an account transfer saves at least 18,000 gas against an EIP-3009 one in a batch of 10 or 100 (no fresh 32-byte nonce slot), and its first one is no dearer', () => {
    for (const count of [10, 100]) {
      assert.ok(measured[`account × ${count}`]! + 18_000 <= measured[`eip3009 × ${count}`]!, `${count}: ${JSON.stringify(measured)}`);
      assert.ok(measured[`account, first × ${count}`]! <= measured[`eip3009 × ${count}`]!, `${count}: ${JSON.stringify(measured)}`);
    }
  });

  test('100 USDT-shaped transfers of delegated accounts (nonce word written, the payee warm) cost at most 26,000 gas each, against EIP-3009\'s 100 in the same run', () => {
    assert.ok(measured['usdt × 100']! <= 26_000, JSON.stringify(measured));
    assert.ok(measured['usdt × 100']! + 16_000 <= measured['eip3009 × 100']!, JSON.stringify(measured));
  });

  test('the metric counts each executed item once, EIP-3009 (AuthorizationUsed beside its Transfer) or account (its Transfer)', () => {
    assert.deepEqual(transferCounts, { 'usdt × 10': 10, 'usdt × 100': 100, 'eip3009 × 1': 1, 'eip3009 × 10': 10, 'eip3009 × 100': 100 });
  });

  async function measure(run: () => Promise<number>): Promise<number> {
    const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
    try {
      return await run();
    } finally {
      await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    }
  }

  async function sign3009Item(holder: PrivateKeyAccount, i: number): Promise<SettlementItem> {
    const nonce = toHex(nextAuthorizationNonce(undefined, 1_800_000_000_000 + i), { size: 32 });
    const signature = await holder.signTypedData({
      domain: { name: 'VIXP', version: '1', chainId, verifyingContract: vixp }, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
      message: { from: holder.address, to: store, value: one, validAfter: 0n, validBefore: deadline, nonce },
    });
    return { token: vixp, from: holder.address, to: store, value: one, validAfter: 0n, validBefore: deadline, nonce, signature };
  }
});

/** Gas per transfer (per account for a delegation carried in a batch; the whole transaction for one of its own), measured here. */
const expectedGas: Record<string, number> = {
  'account, first × 10': 42_980, 'account, first × 100': 40_033, 'account, alone × 1': 48_388, 'account × 10': 25_918, 'account × 100': 22_961,
  'usdt, first × 100': 42_542, 'usdt × 10': 28_603, 'usdt × 100': 25_469,
  'eip3009 × 1': 68_268, 'eip3009 × 10': 45_404, 'eip3009 × 100': 42_681,
  'delegation, its own transaction × 10': 216_800, 'delegation, carried in the batch, per account': 10_000,
};

// ---------------------------------------------------------------------------------------------------
// helpers

function designator(contract: Address): Hex {
  return `0xef0100${contract.slice(2).toLowerCase()}`;
}

/** `key`'s EIP-7702 authorization of `contract` on this chain, with its account's current nonce (a relayer sends it). */
async function authorize(key: PrivateKeyAccount, contract: Address): Promise<SignedAuthorization> {
  return key.signAuthorization({ chainId, address: contract, nonce: await client.getTransactionCount({ address: key.address }) });
}

const erc20Transfer = (to: Address, value: bigint) => encodeFunctionData({ abi: vixpTokenAbi, functionName: 'transfer', args: [to, value] });

function transferData(item: SignedAccountTransfer): Hex {
  const { r, yParity, s } = parseSignature(item.signature);
  const vs = numberToHex((BigInt(yParity) << 255n) | hexToBigInt(s), { size: 32 });
  return encodeFunctionData({ abi: vixpayAccountAbi, functionName: 'signedTransfer', args: [item.token, item.to, item.value, item.nonce, item.deadline, r, vs] });
}

function cancelData(nonce: bigint, signature: Hex): Hex {
  const { r, yParity, s } = parseSignature(signature);
  const vs = numberToHex((BigInt(yParity) << 255n) | hexToBigInt(s), { size: 32 });
  return encodeFunctionData({ abi: vixpayAccountAbi, functionName: 'cancelNonce', args: [nonce, r, vs] });
}

const nonceUsed = (account: Address, nonce: bigint) => client.readContract({ address: account, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [nonce] });

const balanceOf = (token: Address, account: Address) => client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'balanceOf', args: [account] });

/** An `eth_call` of `data` to `to` from `from` (the relayer by default) on the latest state. */
function simulate(to: Address, data: Hex, from: Address = relayer.address, abi: Abi = vixpayAccountAbi): Promise<{ abi: Abi }> {
  return client.call({ account: from, to, data }).then(() => ({ abi }), (error: unknown) => { throw Object.assign(new Error('reverted'), { cause: error, abi }); });
}

/** The name of the error `call` reverted with ('no reason' for empty revert data); throws when it did not revert. */
async function revertOf(call: Promise<{ abi: Abi }>): Promise<string> {
  return (await revertWithArgs(call))[0];
}

async function revertWithArgs(call: Promise<{ abi: Abi }>): Promise<[string, readonly unknown[]]> {
  try {
    await call;
  } catch (error) {
    const { cause, abi } = error as { cause: BaseError; abi: Abi };
    // The node's answer carries the revert data: the innermost error with a hex `data`.
    const withData = cause.walk((e) => typeof (e as { data?: unknown }).data === 'string') as { data?: Hex } | null;
    const data = withData?.data;
    if (!data || data === '0x') return ['no reason', []];
    const decoded = decodeErrorResult({ abi, data });
    return [decoded.errorName, decoded.args ?? []];
  }
  throw new Error('the call did not revert');
}

interface Sendable { to: Address; data: Hex; gas?: bigint; value?: bigint; authorizationList?: readonly SignedAuthorization[] }

/** Sends `call` from `account` and answers its receipt, whatever its status. */
async function send(account: HDAccount, call: Sendable): Promise<TransactionReceipt> {
  const wallet = createWalletClient({ account, chain: foundry, transport: http(anvil!.url) });
  const hash = await wallet.sendTransaction({
    to: call.to, data: call.data, value: call.value ?? 0n, gas: call.gas ?? 3_000_000n,
    ...(call.authorizationList && call.authorizationList.length > 0 && { authorizationList: [...call.authorizationList] }),
  });
  return receiptOf(client, hash);
}

async function sendOk(account: HDAccount, call: Sendable): Promise<TransactionReceipt> {
  const receipt = await send(account, call);
  assert.equal(receipt.status, 'success');
  return receipt;
}

async function deploy(data: Hex): Promise<Address> {
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(anvil!.url) });
  const hash = await wallet.sendTransaction({ data, gas: 10_000_000n });
  const receipt = await receiptOf(client, hash);
  assert.equal(receipt.status, 'success');
  assert.ok(receipt.contractAddress);
  return getAddress(receipt.contractAddress);
}
