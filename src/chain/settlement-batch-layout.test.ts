import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  BaseError, ContractFunctionRevertedError, concat, createPublicClient, encodeDeployData, getAddress, http, keccak256, parseUnits, toHex,
  type Address, type Hex, type PublicClient,
} from 'viem';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { batchItem, decimalParts, decodeBatch, encodeBatch, type BatchItem } from './settlement-batch-layout.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { vixpSettlementAbi, vixpSettlementBytecode } from '../gen/contracts/vixp-settlement.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';

// The packed batch of contracts/VixpSettlement.sol: what the encoder writes is what the decoder (and
// the contract) reads back, for any field values; and a batch not in the layout is refused whole.

const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => getAddress(toHex(bytes)));
const word = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => toHex(bytes));
const uint256 = fc.oneof(fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }), fc.constantFrom(0n, 1n, (1n << 256n) - 1n, 10n ** 77n, 125n * 10n ** 17n));

describe('the packed settlement batch', () => {
  test('decodes to the items encoded, grouped by token in the order tokens first appear, each group in its own order', () => {
    fc.assert(fc.property(fc.array(address, { minLength: 1, maxLength: 3 }), fc.array(address, { minLength: 1, maxLength: 4 }), fc.array(fc.record({
      token: fc.nat(), from: address, to: fc.nat(), value: uint256, validAfter: uint256, validBefore: uint256, nonce: word, r: word, vs: word,
    }), { minLength: 1, maxLength: 20 }), (tokens, payees, drawn) => {
      const items: BatchItem[] = drawn.map((item) => ({ ...item, token: tokens[item.token % tokens.length]!, to: payees[item.to % payees.length]! }));
      const grouped = [...new Set(items.map((item) => item.token))].flatMap((token) => items.filter((item) => item.token === token));
      assert.deepEqual(decodeBatch(encodeBatch(items)), grouped);
    }));
  });

  test('a custodial item is 97 bytes here (105 with a 7-byte nonce): the payee once per group, the value as mantissa × 10^exponent, a counter nonce in its few bytes', () => {
    assert.deepEqual(decimalParts(parseUnits('12.5', 18)), { mantissa: 125n, exponent: 17 });
    assert.deepEqual(decimalParts(0n), { mantissa: 0n, exponent: 0 });
    assert.deepEqual(decimalParts(7n), { mantissa: 7n, exponent: 0 });
    const token = getAddress(`0x${'11'.repeat(20)}`);
    const store = getAddress(`0x${'22'.repeat(20)}`);
    const item = (i: number): BatchItem => ({
      token, from: getAddress(`0x${'33'.repeat(19)}${i.toString(16).padStart(2, '0')}`), to: store, value: parseUnits('12.5', 18), validAfter: 0n,
      validBefore: 1_800_000_600n, nonce: toHex(i + 1, { size: 32 }), r: `0x${'44'.repeat(32)}`, vs: `0x${'55'.repeat(32)}`,
    });
    const batch = encodeBatch([item(0), item(1)]);
    // 1 group; token, 1 payee, 2 items; per item kind 1, from 20, payee 1, exponent 1, mantissa 2, validAfter 1, validBefore 5, nonce 2, r and vs 64.
    assert.equal((batch.length - 2) / 2, 1 + 20 + 1 + 20 + 2 + 2 * 97);
    assert.equal(batch.slice(2, 2 + 2 * (1 + 20 + 1 + 20 + 2)), `01${'11'.repeat(20)}01${'22'.repeat(20)}0002`);
    assert.equal(batch.slice(2 + 2 * 44, 2 + 2 * (44 + 33)), `00${'33'.repeat(19)}00` + '00' + '11' + '01' + '7d' + '00' + '046b49d458' + '0101');
  });

  test('a signature is carried as EIP-2098 r and vs', async () => {
    const holder = privateKeyToAccount(keccak256(toHex('settlement-batch-layout.test holder')));
    const signature = await holder.signMessage({ message: 'x' });
    const { r, vs } = batchItem({ token: holder.address, from: holder.address, to: holder.address, value: 1n, validAfter: 0n, validBefore: 1n, nonce: toHex(1, { size: 32 }), signature });
    assert.equal(r, signature.slice(0, 66));
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    assert.equal(BigInt(vs), s | (BigInt(Number.parseInt(signature.slice(130), 16) - 27) << 255n));
  });
});

describe('VixpSettlement: a batch not in the layout reverts whole (MalformedBatch), nothing executed', () => {
  const devMnemonic = 'test test test test test test test test test test test junk';
  const owner = mnemonicToAccount(devMnemonic, { addressIndex: 0 }).address;
  const holder = privateKeyToAccount(keccak256(toHex('settlement-batch-layout.test payer')));
  const payee = privateKeyToAccount(keccak256(toHex('settlement-batch-layout.test payee'))).address;
  let anvil: AnvilProcess | undefined;
  let client: PublicClient;
  let token: Address;
  let settlement: Address;
  let good: BatchItem[];

  before(async () => {
    anvil = await startAnvil({ chainId: foundry.id, port: 0 });
    client = createPublicClient({ chain: foundry, transport: http(anvil.url) });
    const deploy = async (data: Hex) => {
      const hash = await client.request({ method: 'eth_sendTransaction' as never, params: [{ from: owner, data, gas: toHex(10_000_000n) }] as never }) as unknown as Hex;
      return getAddress((await client.waitForTransactionReceipt({ hash, pollingInterval: 20 })).contractAddress!);
    };
    token = await deploy(encodeDeployData({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: ['VIXP', 'VIXP', holder.address, parseUnits('1000', 18)] }));
    settlement = await deploy(encodeDeployData({ abi: vixpSettlementAbi, bytecode: vixpSettlementBytecode }));
    good = await Promise.all([1, 2].map(async (n) => {
      const message = { from: holder.address, to: payee, value: 5n, validAfter: 0n, validBefore: 4_102_444_800n, nonce: toHex(n, { size: 32 }) };
      const signature = await holder.signTypedData({ domain: { name: 'VIXP', version: '1', chainId: foundry.id, verifyingContract: token }, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message });
      return batchItem({ token, ...message, signature });
    }));
  });
  after(async () => {
    await anvil?.stop();
  });

  /** The revert `settle(batch)` answers, or 'executed N' when it would not revert. */
  const outcome = async (batch: Hex): Promise<string> => {
    try {
      const { result } = await client.simulateContract({ address: settlement, abi: vixpSettlementAbi, functionName: 'settle', args: [batch], account: owner });
      return `executed ${result}`;
    } catch (error) {
      const revert = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
      assert.ok(revert instanceof ContractFunctionRevertedError, String(error));
      return revert.data?.errorName ?? 'unknown';
    }
  };

  test('the well-formed batch executes both; an unknown item kind, a payee outside the table, a byte too many or too few revert it', async () => {
    const batch = encodeBatch(good);
    assert.equal(await outcome(batch), 'executed 2');
    const itemAt = 1 + 20 + 1 + 20 + 2;
    const replaced = (offset: number, byte: string) => `0x${batch.slice(2, 2 + 2 * offset)}${byte}${batch.slice(2 + 2 * (offset + 1))}` as Hex;
    assert.equal(await outcome(replaced(itemAt, '01')), 'MalformedBatch', 'item kind 1: not one this release settles');
    assert.equal(await outcome(replaced(itemAt + 21, '01')), 'MalformedBatch', 'payee 1 of a table of 1');
    assert.equal(await outcome(concat([batch, '0x00'])), 'MalformedBatch', 'a byte after the last item');
    assert.equal(await outcome(batch.slice(0, -2) as Hex), 'MalformedBatch', 'the last item cut short');
    assert.throws(() => decodeBatch(replaced(itemAt, '01')), /item kind 1/);
    assert.throws(() => decodeBatch(replaced(itemAt + 21, '01')), /outside its table/);
  });
});
