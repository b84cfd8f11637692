import { test } from 'node:test';
import assert from 'node:assert/strict';
import { roundedForPerson, settlementCosts, startOfDay } from './settlement-costs.ts';

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

test('settlement costs: every network named, gas per transfer over the transactions that executed transfers only', () => {
  const costs = settlementCosts(['ethereum', 'bnb'], [
    { network: 'ethereum', gasUsed: '500000', feeWei: '1000000000000000', transfers: 10 },
    { network: 'ethereum', gasUsed: '70000', feeWei: '140000000000000', transfers: 1 },
    { network: 'ethereum', gasUsed: '50000', feeWei: null, transfers: 0 },
  ]);
  assert.deepEqual(costs[0], {
    network: 'ethereum', transactions: 3, gasUsed: '620000', feesPaid: '0.00114', feesPaidRounded: '0.00114 ETH',
    settlementTransactions: 2, transfers: 11, averageGasPerTransfer: 51818, transfersPerTransaction: 5.5,
  });
  assert.deepEqual(costs[1], {
    network: 'bnb', transactions: 0, gasUsed: '0', feesPaid: '0', feesPaidRounded: '0.00 BNB',
    settlementTransactions: 0, transfers: 0, averageGasPerTransfer: null, transfersPerTransaction: null,
  });
});
