import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeDecimal, tokenUnitsFor } from './exchange.ts';
import { formatDate, formatDateTime } from './platform-dates.ts';

test('token units = exchange_amount / exchange_rate, exact, rounded down to 18 decimals', () => {
  assert.equal(tokenUnitsFor('15000', '1500', 18), 10n * 10n ** 18n);
  assert.equal(tokenUnitsFor('1000', '1500', 18), 666666666666666666n);
  assert.equal(tokenUnitsFor('1', '3', 18), 333333333333333333n);
  assert.equal(tokenUnitsFor('1350.25', '1350.25', 18), 10n ** 18n);
  assert.equal(tokenUnitsFor('0.1', '0.3', 18), 333333333333333333n);
  assert.equal(tokenUnitsFor('123456789012345678901234567890', '0.000000000000000001', 0), 123456789012345678901234567890n * 10n ** 18n);
  assert.equal(tokenUnitsFor('7', '2', 0), 3n);
});

test('amounts and rates must be plain positive decimals', () => {
  for (const bad of ['0', '-1', '1e3', '01', '1.', '.5', ' 1', '1,000', 'NaN', '', '0.0000000000000000001']) {
    assert.throws(() => tokenUnitsFor(bad, '1', 18), { code: 'request.invalid' }, bad);
    assert.throws(() => tokenUnitsFor('1', bad, 18), { code: 'request.invalid' }, bad);
  }
  assert.throws(() => tokenUnitsFor('1', '1000000000000000000000', 0), { code: 'request.invalid' }, 'below one unit');
  assert.equal(normalizeDecimal('12.50', 'x'), '12.5');
  assert.equal(normalizeDecimal('1500.000', 'x'), '1500');
  assert.equal(normalizeDecimal('0.05', 'x'), '0.05');
});

test('contract dates are yyyyMMddHHmmss in the configured time zone', () => {
  const instant = Date.UTC(2026, 10, 22, 15, 4, 5); // 2026-11-22T15:04:05Z
  assert.equal(formatDateTime(instant, 'Asia/Seoul'), '20261123000405');
  assert.equal(formatDateTime(instant, 'UTC'), '20261122150405');
  assert.equal(formatDate(instant, 'Asia/Seoul'), '20261123');
  assert.equal(formatDateTime(Date.UTC(2026, 0, 1, 0, 0, 0), 'UTC'), '20260101000000');
});
