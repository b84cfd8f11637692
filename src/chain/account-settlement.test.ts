import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPublicClient, createWalletClient, encodeDeployData, encodeFunctionData, getAddress, http, keccak256, numberToHex, parseUnits, toHex,
  type Address, type Hex, type PublicClient, type SignedAuthorization, type TransactionReceipt,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { localAccount } from './local-account.ts';
import { signAccountTransfer, signDelegation } from './account-transfer.ts';
import { accountBatchLayout, delegatedCode, isDelegatedTo } from './account-settlement.ts';
import { executedTransferCount, itemKey } from './mined-receipt.ts';
import type { SettlementItem } from './relay-types.ts';
import { vixpayAccountAbi, vixpayAccountBytecode } from '../gen/contracts/vixpay-account.ts';
import { vixpAccountSettlementAbi, vixpAccountSettlementBytecode } from '../gen/contracts/vixp-account-settlement.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { tetherLikeAbi, tetherLikeBytecode } from '../../test/support/gen/test-tokens.ts';

// The batcher's layout of account transfers (account-settlement.ts) on a real anvil (Prague): the
// transaction it encodes carries the delegations of accounts not delegated yet (type 4), and the
// items it reads back as executed are exactly those the chain executed. Keys, nonces, deadlines and
// the deployment order are fixed, so every gas figure is exact.

const devMnemonic = 'test test test test test test test test test test test junk';
const [owner, relayer] = [0, 2].map((addressIndex) => mnemonicToAccount(devMnemonic, { addressIndex })) as [HDAccount, HDAccount];
const chainId = foundry.id;
const accounts = Array.from({ length: 10 }, (_, i) => localAccount(keccak256(toHex(`account-settlement.test ${i}`))));
const store = getAddress(`0x${'5e'.repeat(20)}`);
const deadline = 4_102_444_800n;
const oneUsd = parseUnits('1', 6);

let anvil: AnvilProcess | undefined;
let client: PublicClient;
let accountCode: Address;
let accountSettlement: Address;
let usdt: Address;

before(async () => {
  anvil = await startAnvil({ chainId, port: 0 });
  client = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  accountCode = await deploy(encodeDeployData({ abi: vixpayAccountAbi, bytecode: vixpayAccountBytecode }));
  accountSettlement = await deploy(encodeDeployData({ abi: vixpAccountSettlementAbi, bytecode: vixpAccountSettlementBytecode }));
  usdt = await deploy(encodeDeployData({ abi: tetherLikeAbi, bytecode: tetherLikeBytecode, args: ['Tether USD', 'USDT', parseUnits('1000000000', 6)] }));
  for (const holder of [...accounts.map((a) => a.address), store]) {
    await send(owner, { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'transfer', args: [holder, 100n * oneUsd] }) });
  }
});

after(async () => {
  await anvil?.stop();
});

/** The batcher's item of `account`'s signed transfer of `value` USDT to the store, carrying its delegation when `delegate`. */
async function item(account: (typeof accounts)[number], nonce: bigint, value: bigint, options: { delegate?: boolean; deadline?: bigint } = {}): Promise<SettlementItem> {
  const signed = await signAccountTransfer(account, chainId, { token: usdt, to: store, value, nonce, deadline: options.deadline ?? deadline });
  const delegation = options.delegate ? await signDelegation(account, chainId, accountCode, await client.getTransactionCount({ address: account.address })) : undefined;
  return {
    token: usdt, from: account.address, to: store, value, validBefore: signed.deadline, nonce: numberToHex(nonce, { size: 32 }), signature: signed.signature,
    account: { delegation },
  };
}

const keyOf = (i: SettlementItem) => itemKey(i.token, i.from, i.nonce);

test('a batch of first transfers carries each account\'s delegation once (type 4); every item executed but the expired one, read from the receipt', async () => {
  const items = await Promise.all(accounts.map((account, i) => item(account, 0n, BigInt(i + 1) * oneUsd, { delegate: true })));
  // The same account twice in one batch carries its delegation once; an expired item is skipped alone.
  const expired = await item(accounts[0]!, 1n, oneUsd, { delegate: true, deadline: 1n });
  const batch = [...items, expired];
  const call = accountBatchLayout.encode(accountSettlement, batch);
  assert.equal(call.to, accountSettlement);
  assert.equal(call.authorizationList?.length ?? 0, 10);
  const receipt = await send(relayer, call);
  assert.equal(receipt.type, 'eip7702');
  for (const account of accounts) assert.ok(isDelegatedTo(await client.getCode({ address: account.address }), accountCode));
  assert.equal(await client.getCode({ address: accounts[0]!.address }), delegatedCode(accountCode));
  assert.deepEqual([...accountBatchLayout.executed(receipt, batch)].sort(), items.map(keyOf).sort());
  assert.equal(executedTransferCount(receipt), 10, 'the metric\'s transfers: ten executed, the skipped one not');
  assert.equal(await balanceOf(store), 100n * oneUsd + 55n * oneUsd);
  // 10 delegations (22,500 each on a real chain, 12,500 after anvil's refund) and 10 first transfers (fresh nonce words) and a skipped item.
  assert.equal(receipt.gasUsed, 561_200n);
});

test('account transfers of delegated accounts: gas per transfer at 10 items, exact', async () => {
  const items = await Promise.all(accounts.map((account, i) => item(account, 2n + BigInt(i), oneUsd)));
  const call = accountBatchLayout.encode(accountSettlement, items);
  assert.equal(call.authorizationList?.length ?? 0, 0);
  const receipt = await send(relayer, call);
  assert.equal(receipt.type, 'eip1559', 'nothing to delegate: a plain EIP-1559 transaction');
  assert.deepEqual([...accountBatchLayout.executed(receipt, items)].sort(), items.map(keyOf).sort());
  // 28,606 a USDT transfer (its nonce word written already; 29,470 before signedTransfer went to one assembly block), against 25,918 for VIXP in test/account-contract.test.ts.
  assert.equal(receipt.gasUsed, 286_061n);
});

test('an item whose nonce was used (the same transfer sent again) is skipped alone; one of the same account, value and payee beside it executes', async () => {
  const again = await item(accounts[1]!, 0n, 2n * oneUsd);
  const fresh = await item(accounts[1]!, 50n, 2n * oneUsd);
  const receipt = await send(relayer, accountBatchLayout.encode(accountSettlement, [again, fresh]));
  assert.deepEqual([...accountBatchLayout.executed(receipt, [again, fresh])], [keyOf(fresh)]);
  assert.equal(executedTransferCount(receipt), 1);
});

test('a batch of one goes to the account itself; read back as executed only with its Transfer: an account not delegated does nothing and executes nothing', async () => {
  const one = await item(accounts[2]!, 100n, 3n);
  const call = accountBatchLayout.encode(accountSettlement, [one]);
  assert.equal(call.to, accounts[2]!.address);
  const receipt = await send(relayer, call);
  assert.deepEqual([...accountBatchLayout.executed(receipt, [one])], [keyOf(one)]);
  assert.equal(receipt.gasUsed, 52_817n);

  const stranger = localAccount(keccak256(toHex('account-settlement.test stranger')));
  const signed = await signAccountTransfer(stranger, chainId, { token: usdt, to: store, value: 1n, nonce: 0n, deadline });
  const notDelegated: SettlementItem = { ...one, from: stranger.address, signature: signed.signature, nonce: numberToHex(0n, { size: 32 }), value: 1n };
  const nothing = await send(relayer, accountBatchLayout.encode(accountSettlement, [notDelegated]));
  assert.equal(nothing.status, 'success', 'a call to an account without code succeeds doing nothing');
  assert.equal(accountBatchLayout.executed(nothing, [notDelegated]).size, 0);
  assert.equal(executedTransferCount(nothing), 0);
});

const balanceOf = (account: Address) => client.readContract({ address: usdt, abi: vixpTokenAbi, functionName: 'balanceOf', args: [account] });

async function send(account: HDAccount, call: { to?: Address | undefined; data: Hex; gas?: bigint; authorizationList?: readonly SignedAuthorization[] | undefined }): Promise<TransactionReceipt> {
  const wallet = createWalletClient({ account, chain: foundry, transport: http(anvil!.url) });
  const hash = await wallet.sendTransaction({
    to: call.to!, data: call.data, gas: call.gas ?? 3_000_000n,
    ...(call.authorizationList && call.authorizationList.length > 0 && { authorizationList: [...call.authorizationList] }),
  });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  assert.equal(receipt.status, 'success');
  return receipt;
}

async function deploy(data: Hex): Promise<Address> {
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(anvil!.url) });
  const hash = await wallet.sendTransaction({ data, gas: 10_000_000n });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  assert.equal(receipt.status, 'success');
  return getAddress(receipt.contractAddress!);
}
