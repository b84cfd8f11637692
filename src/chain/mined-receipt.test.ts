import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { toHex, type Hex, type TransactionReceipt } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { authorizationKey, executedItems, itemKey, positionOf, usedAuthorizationKeys, usedNonces } from './mined-receipt.ts';
import { deployContracts, holder, payee, relayer, splitSignature, tokenDomain, type ContractsChain } from '../../test/support/token-contracts.ts';

// What the relayer reads from a mined receipt, on a real anvil with the platform's token: where it was
// mined and what it cost (the journal's record), and which holder-signed transfers it executed.
let anvil: AnvilProcess | undefined;
let chain: ContractsChain;

before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  chain = await deployContracts(anvil.url);
});
after(async () => { await anvil?.stop(); });

/** A transfer of `value` from `holder` to `payee` that `holder` signed, submitted by `relayer`: its receipt and nonce. */
async function transferWithAuthorization(value: bigint): Promise<{ receipt: TransactionReceipt; nonce: Hex }> {
  const nonce = toHex(randomBytes(32));
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3_600);
  const signature = await holder.signTypedData({
    domain: tokenDomain(chain.tokenAddress), primaryType: 'TransferWithAuthorization',
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
      ],
    },
    message: { from: holder.address, to: payee.address, value, validAfter: 0n, validBefore, nonce },
  });
  const { v, r, s } = splitSignature(signature);
  const receipt = await chain.mined(chain.tokenAs(relayer).write.transferWithAuthorization([holder.address, payee.address, value, 0n, validBefore, nonce, v, r, s]));
  return { receipt, nonce };
}

test('a receipt names the holder-signed transfers it executed: their nonces, their authorization rows, their settlement items (lowercase keys)', async () => {
  const { receipt, nonce } = await transferWithAuthorization(25n);
  const token = chain.tokenAddress.toLowerCase();
  const authorizer = holder.address.toLowerCase();
  assert.notEqual(chain.tokenAddress, token, 'the receipt\'s addresses are checksummed (mixed case)');
  assert.deepEqual(usedNonces(receipt), [nonce]);
  assert.deepEqual(usedAuthorizationKeys('ethereum', receipt), [nonce, `ethereum:${token}:${authorizer}:${nonce}`]);
  assert.deepEqual(executedItems(receipt), new Set([`${token}:${authorizer}:${nonce}`]));
  // A node whose receipt says reverted: nothing executed, whatever logs it carries.
  const saysReverted = { ...receipt, status: 'reverted' } as const;
  assert.deepEqual(usedNonces(saysReverted), []);
  assert.deepEqual(usedAuthorizationKeys('ethereum', saysReverted), []);
  assert.deepEqual(executedItems(saysReverted), new Set());
});

test('a receipt of a transaction that executed no holder-signed transfer names none: a plain token transfer, a reverted one', async () => {
  const plain = await chain.mined(chain.tokenAs(holder).write.transfer([payee.address, 1n]));
  assert.ok(plain.logs.length > 0, 'it has logs (its Transfer)');
  assert.deepEqual(usedNonces(plain), []);
  assert.deepEqual(usedAuthorizationKeys('ethereum', plain), []);
  assert.deepEqual(executedItems(plain), new Set());
  // More than the holder has, sent with a fixed gas limit: mined, reverted.
  const hash = await chain.tokenAs(holder).write.transfer([payee.address, 10n ** 30n], { gas: 100_000n });
  const reverted = await chain.publicClient.waitForTransactionReceipt({ hash });
  assert.equal(reverted.status, 'reverted');
  assert.deepEqual(usedNonces(reverted), []);
  assert.deepEqual(executedItems(reverted), new Set());
});

test('keys are lowercase whatever the case they are given in: an item by token, authorizer and nonce; an outside payer\'s row by network too', () => {
  const token = '0xAbCdEf0000000000000000000000000000000001';
  const authorizer = '0x00000000000000000000000000000000000000Ff';
  const nonce = `0x${'Ab'.repeat(32)}`;
  assert.equal(itemKey(token, authorizer, nonce), `0xabcdef0000000000000000000000000000000001:0x00000000000000000000000000000000000000ff:0x${'ab'.repeat(32)}`);
  assert.equal(authorizationKey('base', token, authorizer, nonce), `base:${itemKey(token, authorizer, nonce)}`);
});

test('where a receipt says it was mined, as the journal records it: block, its timestamp, index in the block, gas used and the fee paid', async () => {
  const { publicClient } = chain;
  // Two transactions in one block: the second has index 1.
  await publicClient.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  let receipt: TransactionReceipt;
  try {
    await chain.tokenAs(holder).write.transfer([payee.address, 1n]);
    const second = await chain.tokenAs(holder).write.transfer([payee.address, 2n]);
    await publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    receipt = await publicClient.getTransactionReceipt({ hash: second });
  } finally {
    await publicClient.request({ method: 'evm_setAutomine' as never, params: [true] as never });
  }
  const block = await publicClient.getBlock({ blockNumber: receipt.blockNumber });
  assert.equal(receipt.transactionIndex, 1);
  assert.ok(receipt.effectiveGasPrice > 0n);
  const expected = {
    blockNumber: Number(receipt.blockNumber), blockTimestamp: Number(block.timestamp), txIndex: 1,
    gasUsed: Number(receipt.gasUsed), feeWei: receipt.gasUsed * receipt.effectiveGasPrice,
  };
  assert.deepEqual(positionOf(receipt), expected);
  // Another node's receipts: the timestamp as a bigint, as hex, or none; no effective gas price, no index.
  const other = (fields: Record<string, unknown>) => ({ ...receipt, ...fields }) as TransactionReceipt;
  assert.deepEqual(positionOf(other({ blockTimestamp: block.timestamp })), expected);
  assert.deepEqual(positionOf(other({ blockTimestamp: toHex(block.timestamp) })), expected);
  assert.deepEqual(positionOf(other({ blockTimestamp: undefined })), { ...expected, blockTimestamp: undefined });
  assert.deepEqual(positionOf(other({ blockTimestamp: null })), { ...expected, blockTimestamp: undefined });
  assert.deepEqual(positionOf(other({ effectiveGasPrice: undefined })), { ...expected, feeWei: undefined });
  assert.deepEqual(positionOf(other({ transactionIndex: null })), { ...expected, txIndex: undefined });
});
