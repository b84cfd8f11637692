import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createPublicClient, http, toHex, type Hex, type TransactionReceipt } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { authorizationKey, executedItems, itemKey, l1FeeOf, paysOperatorFee, positionOf, usedAuthorizationKeys, usedNonces } from './mined-receipt.ts';
import { createMinedFacts } from './mined-facts.ts';
import { countingRpcCalls } from './node-rpc-calls.ts';
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

test('where a receipt says it was mined, as the journal records it: block, its header\'s timestamp, index in the block, gas used and the fees paid', async () => {
  const { publicClient } = chain;
  // Two transactions in one block: the second has index 1.
  await publicClient.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  let receipt: TransactionReceipt;
  let first: TransactionReceipt;
  try {
    const one = await chain.tokenAs(holder).write.transfer([payee.address, 1n]);
    const second = await chain.tokenAs(holder).write.transfer([payee.address, 2n]);
    await publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    receipt = await publicClient.getTransactionReceipt({ hash: second });
    first = await publicClient.getTransactionReceipt({ hash: one });
  } finally {
    await publicClient.request({ method: 'evm_setAutomine' as never, params: [true] as never });
  }
  const block = await publicClient.getBlock({ blockNumber: receipt.blockNumber });
  assert.equal(receipt.transactionIndex, 1);
  assert.ok(receipt.effectiveGasPrice > 0n);
  const expected = {
    blockNumber: Number(receipt.blockNumber), blockTimestamp: Number(block.timestamp), txIndex: 1,
    gasUsed: Number(receipt.gasUsed), feeWei: receipt.gasUsed * receipt.effectiveGasPrice, l1FeeWei: undefined, operatorFeeWei: undefined,
  };
  // The block's time from its header, one read for the block's two receipts (anvil's receipts also say it; Hardhat's do not).
  const calls: string[] = [];
  const counted = createPublicClient({ chain: foundry, transport: http(anvil!.url, countingRpcCalls('ethereum', (_, method) => calls.push(method))) });
  const factsOf = createMinedFacts(counted);
  const [facts, firstFacts] = await Promise.all([factsOf(receipt), factsOf(first)]);
  assert.deepEqual(facts, { blockTimestamp: Number(block.timestamp), operatorFeeWei: undefined });
  assert.deepEqual(firstFacts, facts);
  assert.deepEqual(await factsOf(receipt), facts);
  assert.deepEqual(calls, ['eth_getBlockByHash']);
  assert.deepEqual(positionOf(receipt, facts), expected);
  // What the receipt itself says of its block's time is not read: the header's is recorded.
  const other = (fields: Record<string, unknown>) => ({ ...receipt, ...fields }) as TransactionReceipt;
  assert.deepEqual(positionOf(other({ blockTimestamp: 1n }), facts), expected);
  assert.deepEqual(positionOf(receipt, { blockTimestamp: undefined }), { ...expected, blockTimestamp: undefined });
  // Another node's receipts: no effective gas price, no index.
  assert.deepEqual(positionOf(other({ effectiveGasPrice: undefined }), facts), { ...expected, feeWei: undefined });
  assert.deepEqual(positionOf(other({ transactionIndex: null }), facts), { ...expected, txIndex: undefined });
  // An OP-stack receipt: its l1Fee (hex as the node sends it, or a bigint), the operator fee read beside it.
  assert.deepEqual(positionOf(other({ l1Fee: '0xff9ca94740' }), { ...facts, operatorFeeWei: 16_000n }), { ...expected, l1FeeWei: 1_097_845_000_000n, operatorFeeWei: 16_000n });
  assert.deepEqual(positionOf(other({ l1Fee: 5n }), facts), { ...expected, l1FeeWei: 5n });
  for (const l1Fee of ['0x', 'ff', '-0x1', 12, -1n, null]) assert.equal(l1FeeOf(other({ l1Fee })), undefined, `l1Fee ${String(l1Fee)} is not a quantity`);
  assert.equal(paysOperatorFee(other({ operatorFeeScalar: '0x0', operatorFeeConstant: '0x0' })), false);
  assert.equal(paysOperatorFee(receipt), false);
  assert.equal(paysOperatorFee(other({ operatorFeeScalar: '0x7', operatorFeeConstant: '0x0' })), true);
  assert.equal(paysOperatorFee(other({ operatorFeeScalar: '0x0', operatorFeeConstant: '0x3e80' })), true);
});
