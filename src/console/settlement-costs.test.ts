import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costKindOf, roundedForPerson, settlementCosts, startOfDay } from './settlement-costs.ts';

test('an amount of ether rounded for a person: grouped, two decimals from 1 up, three significant digits below', () => {
  assert.equal(roundedForPerson('999999.994518507748618634', 'ETH'), '999,999.99 ETH');
  assert.equal(roundedForPerson('1000000', 'BNB'), '1,000,000.00 BNB');
  assert.equal(roundedForPerson('0.000893207641212765', 'ETH'), '0.000893 ETH');
  assert.equal(roundedForPerson('0', 'ETH'), '0.00 ETH');
});

test('the platform\'s day starts at midnight in TIME_ZONE, daylight saving included', () => {
  const at = Date.parse('2026-11-26T10:00:00Z');
  assert.equal(new Date(startOfDay(at, 'Asia/Seoul')).toISOString(), '2026-11-25T15:00:00.000Z');
  assert.equal(new Date(startOfDay(Date.parse('2026-11-26T16:00:00Z'), 'Asia/Seoul')).toISOString(), '2026-11-26T15:00:00.000Z');
  assert.equal(new Date(startOfDay(at, 'UTC')).toISOString(), '2026-11-26T00:00:00.000Z');
  // New York, the day summer time ends (2026-11-01, 02:00 EDT -> 01:00 EST): midnight was still EDT.
  assert.equal(new Date(startOfDay(Date.parse('2026-11-01T20:00:00Z'), 'America/New_York')).toISOString(), '2026-11-01T04:00:00.000Z');
  // The day it begins (2026-03-08): midnight was EST.
  assert.equal(new Date(startOfDay(Date.parse('2026-03-08T20:00:00Z'), 'America/New_York')).toISOString(), '2026-03-08T05:00:00.000Z');
});

test('settlement costs: every network named, fees in ETH with wei beside, settlements apart from deploys and mints, POS and x402 by kind', () => {
  const costs = settlementCosts(['ethereum', 'bnb'], [
    { network: 'ethereum', kind: 'settlement', gasUsed: '500000', feeWei: '1000000000000000', transfers: 10, x402Transfers: 0 },
    { network: 'ethereum', kind: 'settlement', gasUsed: '70000', feeWei: '140000000000000', transfers: 1, x402Transfers: 1 },
    { network: 'ethereum', kind: 'settlement', gasUsed: '90000', feeWei: '20000000000000', transfers: 3, x402Transfers: 1 },
    { network: 'ethereum', kind: 'deploy', gasUsed: '900000', feeWei: '5000000000000', transfers: 0, x402Transfers: 0 },
    { network: 'ethereum', kind: 'mint', gasUsed: '50000', feeWei: null, transfers: 0, x402Transfers: 0 },
  ]);
  const [ethereum, bnb] = costs;
  const { settlementFees, settlementFeePerTransfer, settlementFeePerTransaction, otherFees, otherFeesByKind, fees, ...flat } = ethereum!;
  assert.deepEqual(flat, {
    network: 'ethereum', currency: 'ETH', transactions: 5, gasUsed: '1610000',
    feesPaid: '0.001165', feesPaidWei: '1165000000000000', feesPaidRounded: '0.00117 ETH',
    settlementTransactions: 3, settlementFeesPaid: '0.00116', settlementFeesPaidWei: '1160000000000000', settlementFeesPaidRounded: '0.00116 ETH',
    settlementsByKind: { pos: 1, x402: 1, mixed: 1 }, otherTransactions: { deploy: 1, mint: 1 },
    transfers: 14, posTransfers: 12, x402Transfers: 2, averageGasPerTransfer: 47143, transfersPerTransaction: 4.67,
  });
  const zero = { amount: '0', wei: '0', rounded: '0.00 ETH' };
  // Not an OP-stack network: execution alone, no L1 data or operator fee.
  assert.deepEqual(settlementFees, { execution: { amount: '0.00116', wei: '1160000000000000', rounded: '0.00116 ETH' }, l1Data: zero, operator: zero, total: { amount: '0.00116', wei: '1160000000000000', rounded: '0.00116 ETH' } });
  assert.deepEqual(settlementFeePerTransfer!.total, { amount: '0.000082857142857143', wei: '82857142857143', rounded: '0.0000829 ETH' });
  assert.deepEqual(settlementFeePerTransaction!.total.wei, '386666666666667');
  assert.deepEqual(otherFees.total, { amount: '0.000005', wei: '5000000000000', rounded: '0.000005 ETH' });
  assert.deepEqual(Object.fromEntries(Object.entries(otherFeesByKind).map(([kind, f]) => [kind, f.total.wei])), { deploy: '5000000000000', mint: '0' });
  assert.equal(fees.total.wei, '1165000000000000');
  assert.deepEqual({ ...bnb, settlementFees: undefined, otherFees: undefined, fees: undefined }, {
    network: 'bnb', currency: 'BNB', transactions: 0, gasUsed: '0', feesPaid: '0', feesPaidWei: '0', feesPaidRounded: '0.00 BNB',
    settlementTransactions: 0, settlementFeesPaid: '0', settlementFeesPaidWei: '0', settlementFeesPaidRounded: '0.00 BNB', settlementsByKind: { pos: 0, x402: 0, mixed: 0 }, otherTransactions: {},
    transfers: 0, posTransfers: 0, x402Transfers: 0, averageGasPerTransfer: null, transfersPerTransaction: null,
    settlementFeePerTransfer: null, settlementFeePerTransaction: null, otherFeesByKind: {}, settlementFees: undefined, otherFees: undefined, fees: undefined,
  });
  assert.equal(bnb!.settlementFees.total.rounded, '0.00 BNB');
  assert.equal(costKindOf({ kind: 'settlement', transfers: 2, x402Transfers: 0 }), 'pos-settlement');
  assert.equal(costKindOf({ kind: 'settlement', transfers: 2, x402Transfers: 2 }), 'x402-settlement');
  assert.equal(costKindOf({ kind: 'settlement', transfers: 2, x402Transfers: 1 }), 'mixed-settlement');
  assert.equal(costKindOf({ kind: 'settlement', transfers: 0, x402Transfers: 0 }), 'settlement');
  assert.equal(costKindOf({ kind: 'mint', transfers: 0, x402Transfers: 0 }), 'mint');
});
