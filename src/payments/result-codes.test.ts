import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError, domainErrorCodes } from '#shared/errors.ts';
import { resCodeByFamily, resultOf, success } from './result-codes.ts';

// docs/interfaces.md#response-codes's tables, word for word.
const common: Record<string, string> = { '00': 'Success', 10: 'Internal server error' };
const spec = {
  payment: { ...common, '01': 'Canceled by the user', '02': 'Insufficient balance', '03': 'Transaction time expired', '04': 'Token API error' },
  reward: { ...common, '01': 'Reward not issued', '02': 'Reward expired', '03': 'Reward already canceled', '04': 'Bad reward amount', '05': 'Already rewarded' },
} as Record<'payment' | 'reward', Record<string, string>>;

test('every domain code maps once per call family; 00–10 carry docs/interfaces.md#response-codes\'s text of that family\'s table', () => {
  assert.deepEqual(success, { res_code: '00', res_message: 'Success' });
  for (const family of ['payment', 'reward'] as const) {
    const table = resCodeByFamily[family];
    assert.deepEqual(Object.keys(table).sort(), [...domainErrorCodes].sort(), family);
    for (const [code, rc] of Object.entries(table)) {
      assert.match(rc.res_code, /^\d\d$/, `${family} ${code}`);
      if (Number(rc.res_code) <= 10) assert.equal(rc.res_message, spec[family]![rc.res_code], `${family} ${code} -> ${rc.res_code} is docs/interfaces.md#response-codes's ${family} code`);
    }
  }
});

test('in reward calls 01–05 are only reward conditions; in payment calls 01–04 only payment ones', () => {
  for (const [code, rc] of Object.entries(resCodeByFamily.reward)) {
    if (['01', '02', '03', '04', '05'].includes(rc.res_code)) assert.match(code, /^reward\./, code);
  }
  for (const [code, rc] of Object.entries(resCodeByFamily.payment)) {
    if (['01', '02', '03', '04', '05'].includes(rc.res_code)) assert.doesNotMatch(code, /^reward\./, code);
  }
  assert.equal(resCodeByFamily.reward['wallet.insufficient_balance'].res_code, '19');
  assert.equal(resCodeByFamily.reward['chain.transaction_failed'].res_code, '20');
  assert.equal(resCodeByFamily.reward['payment.canceled_by_user'].res_code, '21');
  assert.equal(resCodeByFamily.reward['payment.expired'].res_code, '22');
});

test('our codes (11 and up) mean one condition: one text per code in every call', () => {
  const textOf = new Map<string, string>();
  for (const family of ['payment', 'reward'] as const) {
    for (const rc of Object.values(resCodeByFamily[family])) {
      if (Number(rc.res_code) <= 10) continue;
      assert.equal(textOf.get(rc.res_code) ?? rc.res_message, rc.res_message, rc.res_code);
      textOf.set(rc.res_code, rc.res_message);
    }
  }
  // Same condition, same code in both families, wherever docs/interfaces.md#response-codes's tables do not decide it.
  for (const code of domainErrorCodes) {
    const [payment, reward] = [resCodeByFamily.payment[code], resCodeByFamily.reward[code]];
    if (Number(payment.res_code) > 10 && Number(reward.res_code) > 10) assert.equal(payment.res_code, reward.res_code, code);
  }
});

test('a transfer reverted on chain is payment 04 "Token API error"; internals are never told', () => {
  const reverted = new DomainError('chain.transaction_failed', 'reverted');
  assert.deepEqual(resultOf(reverted, 'payment'), { res_code: '04', res_message: 'Token API error' });
  assert.deepEqual(resultOf(reverted, 'reward'), { res_code: '20', res_message: 'Token transfer failed: reverted' });
  assert.deepEqual(resultOf(new Error('db password wrong'), 'reward'), { res_code: '10', res_message: 'Internal server error' });
  assert.deepEqual(resultOf(new DomainError('request.invalid', 'tran_no is required'), 'payment'), { res_code: '11', res_message: 'Invalid request: tran_no is required' });
});
