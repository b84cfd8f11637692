import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BaseError, ContractFunctionRevertedError, createPublicClient, decodeFunctionData, encodeDeployData, encodeFunctionData, getAddress, http, keccak256, parseEventLogs, parseUnits, toHex,
  type Address, type Hex, type PublicClient, type TransactionReceipt,
} from 'viem';
import { mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { encodeDirectTransfer, encodeSettlement, encodeSettlementBatch, type SettlementCall } from './settlement-calldata.ts';
import { decodeBatch } from './settlement-batch-layout.ts';
import type { SettlementItem } from './relayer.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { vixpSettlementAbi, vixpSettlementBytecode } from '../gen/contracts/vixp-settlement.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import { receiptOf } from '../../test/support/chain-parts.ts';

// contracts/VixpSettlement.sol on a real chain (a fresh anvil): its compact calldata, what a transfer
// costs in a batch of 1, 10 and 100 beside the token's own transferWithAuthorization sent alone, and
// that a failing item is skipped without reverting the others. Every input is deterministic (keys,
// nonces, validBefore, the token's address), so the gas figures are exact.

const devMnemonic = 'test test test test test test test test test test test junk';
const [owner, relayer] = [0, 2].map((addressIndex) => mnemonicToAccount(devMnemonic, { addressIndex }).address) as [Address, Address];
const tokenName = 'VIXP';
/** Far in the future, fixed: the same calldata on every run. */
const validBefore = 4_102_444_800n;
const value = parseUnits('1', 18);
const accountOf = (label: string): PrivateKeyAccount => privateKeyToAccount(keccak256(toHex(`settlement-contract.test ${label}`)));
const holders = Array.from({ length: 100 }, (_, i) => accountOf(`holder ${i}`));
/** Payees already holding VIXP (a store's settlement account after its first payment). */
const warmPayees = Array.from({ length: 100 }, (_, i) => accountOf(`warm payee ${i}`).address);
/** A payee holding nothing yet: new for every transfer. */
const freshPayee = (label: string) => accountOf(`fresh payee ${label}`).address;

let anvil: AnvilProcess | undefined;
let client: PublicClient;
let token: Address;
let otherToken: Address;
let settlement: Address;

before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  client = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  const tokenDeploy = (name: string) => encodeDeployData({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: [name, 'VIXP', owner, parseUnits('1000000000', 18)] });
  token = await deploy(tokenDeploy(tokenName));
  settlement = await deploy(encodeDeployData({ abi: vixpSettlementAbi, bytecode: vixpSettlementBytecode }));
  otherToken = await deploy(tokenDeploy('Other'));
  const funding = [
    ...holders.map((holder) => transferCall(token, holder.address, parseUnits('1000', 18))),
    ...holders.slice(0, 3).map((holder) => transferCall(otherToken, holder.address, parseUnits('1000', 18))),
    ...warmPayees.map((payee) => transferCall(token, payee, 1n)),
  ];
  for (const receipt of await sendAll(owner, funding)) assert.equal(receipt.status, 'success');
});

after(async () => {
  await anvil?.stop();
});

describe('VixpSettlement: cost per transfer beside the token\'s own transferWithAuthorization', () => {
  type Payees = 'warm' | 'fresh';
  interface Row { path: Path; payees: Payees; transfers: number; gasPerTransfer: number; calldataPerTransfer: number }
  type Path = 'alone, bytes signature' | 'alone, v r s' | 'platform' | 'settle';
  const rows: Row[] = [];
  const row = (path: Path, payees: Payees, transfers: number) => {
    const found = rows.find((r) => r.path === path && r.payees === payees && r.transfers === transfers);
    assert.ok(found, `${path} ${payees} ${transfers}`);
    return found;
  };

  before(async () => {
    for (const payees of ['warm', 'fresh'] as const) {
      for (const count of [1, 10, 100]) {
        // The same authorizations, from the same state (a snapshot), sent each way: alone in the
        // token's two forms, as the platform sends them, and (for one) through the settlement contract.
        const items = await Promise.all(Array.from({ length: count }, (_, i) =>
          signItem(holders[i]!, token, payees === 'warm' ? warmPayees[i]! : freshPayee(`${count} ${i}`), `${payees} ${count} ${i}`)));
        const ways: [Path, SettlementCall[]][] = [
          ['alone, bytes signature', items.map((item) => ({
            to: token, gas: 200_000n, data: encodeFunctionData({
              abi: vixpTokenAbi, functionName: 'transferWithAuthorization',
              args: [item.from, item.to, item.value, 0n, item.validBefore, item.nonce, item.signature],
            }),
          }))],
          ['alone, v r s', items.map(encodeDirectTransfer)],
          ['platform', [encodeSettlement(settlement, items)]],
          ...(count === 1 ? [['settle', [encodeSettlementBatch(settlement, items)]] as [Path, SettlementCall[]]] : []),
        ];
        for (const [path, calls] of ways) {
          const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
          const receipts = await sendAll(relayer, calls);
          for (const receipt of receipts) assert.equal(receipt.status, 'success', path);
          const used = parseEventLogs({ abi: vixpTokenAbi, eventName: 'AuthorizationUsed', logs: receipts.flatMap((r) => r.logs) });
          assert.equal(used.length, count, `${path}: every transfer executed`);
          const gas = receipts.reduce((sum, r) => sum + r.gasUsed, 0n);
          const bytes = calls.reduce((sum, call) => sum + (call.data.length - 2) / 2, 0);
          rows.push({ path, payees, transfers: count, gasPerTransfer: Math.round(Number(gas) / count), calldataPerTransfer: Math.round(bytes / count) });
          await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
        }
      }
    }
    process.stdout.write(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  });

  test('calldata: 149 bytes per transfer in a batch of 100 distinct payees with random nonces (226 in the earlier layout), 292 for a batch of one (356 for the bytes form)', () => {
    for (const payees of ['warm', 'fresh'] as const) {
      assert.equal(row('platform', payees, 100).calldataPerTransfer, 149);
      assert.equal(row('platform', payees, 10).calldataPerTransfer, 157);
      assert.equal(row('platform', payees, 1).calldataPerTransfer, 292);
      assert.equal(row('alone, bytes signature', payees, 1).calldataPerTransfer, 356);
    }
  });

  test('no batch costs more than its items sent alone: a batch of one is the token\'s own call, 10 and 100 cost less per transfer', () => {
    for (const payees of ['warm', 'fresh'] as const) {
      for (const count of [1, 10, 100]) {
        const alone = Math.min(row('alone, bytes signature', payees, count).gasPerTransfer, row('alone, v r s', payees, count).gasPerTransfer);
        const batch = row('platform', payees, count).gasPerTransfer;
        if (count === 1) assert.equal(batch, alone, `${payees}: a batch of one costs what the transfer alone costs`);
        else assert.ok(batch < alone, `${payees}: a batch of ${count} costs ${batch} per transfer, alone ${alone}`);
      }
      assert.ok(row('settle', payees, 1).gasPerTransfer > row('platform', payees, 1).gasPerTransfer, 'the contract for one item would cost more: why it is not used');
    }
  });

  test('exact gas per transfer (deterministic on a fresh chain; docs/performance.md has the table)', () => {
    const table = Object.fromEntries(rows.map((r) => [`${r.path} × ${r.transfers}, ${r.payees}`, r.gasPerTransfer]));
    assert.deepEqual(table, expectedGas);
  });
});

/** Gas per transfer, measured here (docs/performance.md, "Settlement gas and calldata"). */
const expectedGas: Record<string, number> = {
  'alone, bytes signature × 1, warm': 68977, 'alone, v r s × 1, warm': 68580, 'platform × 1, warm': 68580, 'settle × 1, warm': 73069,
  'alone, bytes signature × 10, warm': 68972, 'alone, v r s × 10, warm': 68575, 'platform × 10, warm': 50419,
  'alone, bytes signature × 100, warm': 68971, 'alone, v r s × 100, warm': 68574, 'platform × 100, warm': 48161,
  'alone, bytes signature × 1, fresh': 86077, 'alone, v r s × 1, fresh': 85680, 'platform × 1, fresh': 85680, 'settle × 1, fresh': 90169,
  'alone, bytes signature × 10, fresh': 86065, 'alone, v r s × 10, fresh': 85668, 'platform × 10, fresh': 67512,
  'alone, bytes signature × 100, fresh': 86071, 'alone, v r s × 100, fresh': 85674, 'platform × 100, fresh': 65261,
};

describe('VixpSettlement: any validity window (x402 clients sign validAfter = now − 600)', () => {
  /** A fixed `now − 600`: the same calldata on every run. */
  const validAfter = 1_700_000_000n - 600n;

  test('100 buyers paying one payee that holds VIXP, validAfter now − 600: all settled in one batch, 133 bytes each, gas per transfer within 1% of 44,464', async () => {
    const payee = warmPayees[99]!;
    const items = await Promise.all(holders.map((holder, i) => signItem(holder, token, payee, `x402 window ${i}`, validBefore, validAfter)));
    const call = encodeSettlement(settlement, items);
    const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
    const [receipt] = await sendAll(relayer, [call]);
    assert.equal(receipt!.status, 'success');
    assert.equal(parseEventLogs({ abi: vixpTokenAbi, eventName: 'AuthorizationUsed', logs: receipt!.logs }).length, 100, 'every item executed');
    const perTransfer = Math.round(Number(receipt!.gasUsed) / 100);
    const bytesPerTransfer = Math.round((call.data.length - 2) / 2 / 100);
    process.stdout.write(`${JSON.stringify({ onePayee: true, validAfter: 'now - 600', gasPerTransfer: perTransfer, calldataPerTransfer: bytesPerTransfer })}\n`);
    assert.equal(bytesPerTransfer, 133);
    assert.ok(perTransfer <= 44_464 * 1.01, `${perTransfer} gas per transfer`);
    assert.equal(perTransfer, expectedWindowGas);
    await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
  });

  test('a batch carries any validAfter and validBefore (2^256 − 1, 2^200); an item not valid yet is skipped, the others settle', async () => {
    const now = (await client.getBlock()).timestamp;
    const items = [
      await signItem(holders[40]!, token, warmPayees[40]!, 'window now - 600', validBefore, now - 600n),
      await signItem(holders[41]!, token, warmPayees[41]!, 'window never expires', 2n ** 256n - 1n, now - 600n),
      await signItem(holders[42]!, token, warmPayees[42]!, 'window not yet', validBefore, now + 3600n),
      await signItem(holders[43]!, token, warmPayees[43]!, 'window 2^200', 2n ** 200n, 0n),
    ];
    const [receipt] = await sendAll(relayer, [encodeSettlement(settlement, items)]);
    assert.equal(receipt!.status, 'success');
    assert.deepEqual(await Promise.all(items.map((item) => authorizationState(token, item.from, item.nonce))), [true, true, false, true]);
    const skipped = parseEventLogs({ abi: vixpSettlementAbi, eventName: 'ItemSkipped', logs: receipt!.logs });
    assert.deepEqual(skipped.map((log) => [log.args.index, log.args.nonce]), [[2n, items[2]!.nonce]]);
  });
});

/** Gas per transfer of 100 x402 items to one payee holding VIXP, validAfter now − 600 (measured here). */
const expectedWindowGas = 43_156;

describe('VixpSettlement: each item on its own', () => {
  test('a batch over two tokens executes every valid item and skips the others with ItemSkipped(index in calldata order, nonce)', async () => {
    const [a, b, c] = holders as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
    const now = (await client.getBlock()).timestamp;
    const reused = await signItem(a, token, warmPayees[0]!, 'used before');
    await sendAll(relayer, [encodeDirectTransfer(reused)]);
    const badSignature = { ...(await signItem(c, otherToken, warmPayees[1]!, 'bad signature')), value: 2n * value };
    const items: SettlementItem[] = [
      await signItem(a, token, warmPayees[2]!, 'good a'), // group token: index 0
      await signItem(b, token, warmPayees[3]!, 'expired', now - 1n), // index 1
      await signItem(b, otherToken, warmPayees[4]!, 'good other'), // group otherToken: index 4
      reused, // index 2
      badSignature, // index 5
      await signItem(c, token, warmPayees[5]!, 'good c'), // index 3
    ];
    const call = encodeSettlementBatch(settlement, items);
    // The documented layout: a group count, per group its token, payee table and item count, per
    // item kind, payer, payee, exponent, then value 1 (1 byte), validAfter 0, validBefore (4 bytes), a
    // random nonce (32 bytes, 31 when it begins with a zero byte), r and vs.
    const batch = decodeFunctionData({ abi: vixpSettlementAbi, data: call.data }).args[0]!;
    const nonceBytes = items.reduce((sum, item) => sum + Math.ceil(BigInt(item.nonce).toString(16).length / 2), 0);
    assert.equal((batch.length - 2) / 2, 1 + 2 * (20 + 1 + 2) + 6 * 20 + items.length * (1 + 20 + 1 + 1 + 2 + 1 + 5 + 1 + 64) + nonceBytes);
    assert.deepEqual(decodeBatch(batch).map((item) => item.nonce), [0, 1, 3, 5, 2, 4].map((i) => items[i]!.nonce), 'grouped by token, in the order tokens first appear');
    const balances = () => Promise.all([token, otherToken].flatMap((t) => [a, b, c].map((h) => balanceOf(t, h.address))));
    const before = await balances();
    const [receipt] = await sendAll(relayer, [call]);
    assert.equal(receipt!.status, 'success');
    const skipped = parseEventLogs({ abi: vixpSettlementAbi, eventName: 'ItemSkipped', logs: receipt!.logs }).map((log) => [log.args.index, log.args.nonce]);
    assert.deepEqual(skipped, [[1n, items[1]!.nonce], [2n, reused.nonce], [5n, badSignature.nonce]]);
    const used = parseEventLogs({ abi: vixpTokenAbi, eventName: 'AuthorizationUsed', logs: receipt!.logs }).map((log) => [getAddress(log.address), log.args.nonce]);
    assert.deepEqual(used, [[token, items[0]!.nonce], [token, items[5]!.nonce], [otherToken, items[2]!.nonce]]);
    const [aT, bT, cT, aO, bO, cO] = before as bigint[];
    assert.deepEqual(await balances(), [aT! - value, bT, cT! - value, aO, bO! - value, cO]);
    assert.equal(await authorizationState(token, b.address, items[1]!.nonce), false, 'a skipped authorization stays untouched');
  });

  test('a transaction whose gas cannot cover the next item reverts whole: BatchGasTooLow, nothing executed', async () => {
    const items = await Promise.all([0, 1].map((i) => signItem(holders[10 + i]!, token, warmPayees[10 + i]!, `gas too low ${i}`)));
    const call = { ...encodeSettlementBatch(settlement, items), gas: 230_000n };
    const batch = decodeFunctionData({ abi: vixpSettlementAbi, data: call.data }).args[0]!;
    await assert.rejects(client.simulateContract({ address: settlement, abi: vixpSettlementAbi, functionName: 'settle', args: [batch], account: relayer, gas: call.gas }), (error: unknown) => {
      const revert = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
      assert.ok(revert instanceof ContractFunctionRevertedError, String(error));
      assert.deepEqual([revert.data?.errorName, revert.data?.args], ['BatchGasTooLow', [1n]], 'the first item fits, the second does not');
      return true;
    });
    const [receipt] = await sendAll(relayer, [call]);
    assert.equal(receipt!.status, 'reverted');
    for (const item of items) assert.equal(await authorizationState(token, item.from, item.nonce), false);
  });

  test('a group naming an address without code reverts the batch whole (NotAToken): a call there would succeed and do nothing', async () => {
    const item = { ...(await signItem(holders[30]!, token, warmPayees[30]!, 'no code')), token: warmPayees[31]! };
    const call = encodeSettlementBatch(settlement, [item, await signItem(holders[31]!, token, warmPayees[31]!, 'beside no code')]);
    const [receipt] = await sendAll(relayer, [call]);
    assert.equal(receipt!.status, 'reverted');
    const batch = decodeFunctionData({ abi: vixpSettlementAbi, data: call.data }).args[0]!;
    await assert.rejects(client.simulateContract({ address: settlement, abi: vixpSettlementAbi, functionName: 'settle', args: [batch], account: relayer }), (error: unknown) => {
      const revert = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
      assert.ok(revert instanceof ContractFunctionRevertedError, String(error));
      assert.deepEqual([revert.data?.errorName, revert.data?.args], ['NotAToken', [warmPayees[31]]]);
      return true;
    });
  });

  test('a batch of one that cannot execute reverts (the token\'s own call), and its authorization stays unused', async () => {
    const now = (await client.getBlock()).timestamp;
    const expired = await signItem(holders[20]!, token, warmPayees[20]!, 'alone expired', now - 1n);
    const call = encodeSettlement(settlement, [expired]);
    assert.equal(call.to, token, 'sent to the token, not the settlement contract');
    const [receipt] = await sendAll(relayer, [call]);
    assert.equal(receipt!.status, 'reverted');
    assert.equal(await authorizationState(token, expired.from, expired.nonce), false);
  });
});

// ---------------------------------------------------------------------------------------------------
// helpers

async function deploy(data: Hex): Promise<Address> {
  const [receipt] = await sendAll(owner, [{ data, gas: 10_000_000n }]);
  assert.ok(receipt?.contractAddress);
  return getAddress(receipt.contractAddress);
}

function transferCall(tokenAddress: Address, to: Address, amount: bigint): SettlementCall {
  return { to: tokenAddress, gas: 100_000n, data: encodeFunctionData({ abi: vixpTokenAbi, functionName: 'transfer', args: [to, amount] }) };
}

/** Sends each call from the unlocked dev account `from`, in order, and answers their receipts. */
async function sendAll(from: Address, calls: readonly (Omit<SettlementCall, 'to'> & { to?: Address })[]): Promise<TransactionReceipt[]> {
  const hashes: Hex[] = [];
  for (const call of calls) {
    hashes.push(await client.request({
      method: 'eth_sendTransaction' as never,
      params: [{ from, ...(call.to && { to: call.to }), data: call.data, gas: toHex(call.gas) }] as never,
    }) as unknown as Hex);
  }
  return Promise.all(hashes.map((hash) => receiptOf(client, hash)));
}

/** `holder`'s EIP-3009 authorization of 1 token unit to `to`, as src/wallet/authorize-transfer.ts signs it. */
async function signItem(holder: PrivateKeyAccount, tokenAddress: Address, to: Address, label: string, before = validBefore, after = 0n): Promise<SettlementItem> {
  const nonce = keccak256(toHex(`settlement-contract.test nonce ${label}`));
  const name = tokenAddress === token ? tokenName : 'Other';
  const signature = await holder.signTypedData({
    domain: { name, version: '1', chainId: foundry.id, verifyingContract: tokenAddress },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
    message: { from: holder.address, to, value, validAfter: after, validBefore: before, nonce },
  });
  return { token: tokenAddress, from: holder.address, to, value, validAfter: after, validBefore: before, nonce, signature };
}

const balanceOf = (tokenAddress: Address, account: Address) =>
  client.readContract({ address: tokenAddress, abi: vixpTokenAbi, functionName: 'balanceOf', args: [account] });
const authorizationState = (tokenAddress: Address, authorizer: Address, nonce: Hex) =>
  client.readContract({ address: tokenAddress, abi: vixpTokenAbi, functionName: 'authorizationState', args: [authorizer, nonce] });
