import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError, type DomainErrorCode } from '#shared/errors.ts';
import { outcomeOf } from './transfer-outcome.ts';
import type { TransferReturnType } from './transfer.ts';

// How the domains that move tokens (payments, rewards, refunds) read a transfer's end: settled,
// refused (nothing moved, nothing signed can move anything: the operation may fail and be tried
// again) or pending (it may still execute once: the operation must stay pending).

const tx = `0x${'12'.repeat(32)}` as const;
const answer = (status: TransferReturnType['status']): TransferReturnType => ({ status, transactionId: tx, amountRaw: '2500', contractAddress: `0x${'aa'.repeat(20)}` });
const plain = (outcome: Awaited<ReturnType<typeof outcomeOf>>) => ('error' in outcome
  ? { ...outcome, error: { code: outcome.error.code, message: outcome.error.message, details: outcome.error.details } }
  : outcome);

describe('outcomeOf', () => {
  test('executed on chain: settled, with its transaction, amount and token', async () => {
    assert.deepEqual(await outcomeOf(Promise.resolve(answer('settled'))),
      { status: 'settled', transactionId: tx, amountRaw: '2500', contractAddress: `0x${'aa'.repeat(20)}` });
  });

  test('sent and not settled either way yet: pending with its transaction, answered chain.outcome_pending naming it', async () => {
    assert.deepEqual(plain(await outcomeOf(Promise.resolve(answer('pending')))), {
      status: 'pending', transactionId: tx,
      error: { code: 'chain.outcome_pending', message: 'the transfer is sent but not settled on chain yet', details: tx },
    });
  });

  test('a refusal (anything but the codes that leave it open): refused, with the refusal itself', async () => {
    for (const code of ['wallet.insufficient_balance', 'chain.transaction_failed', 'wallet.temp_key_invalid', 'store.full', 'chain.unavailable', 'custody.unavailable'] satisfies DomainErrorCode[]) {
      const error = new DomainError(code, `refused: ${code}`);
      const outcome = await outcomeOf(Promise.reject(error));
      assert.deepEqual(outcome, { status: 'refused', error }, code);
      assert.equal(outcome.status === 'refused' && outcome.error, error);
    }
  });

  test('a failure that may come after the broadcast (outcome pending, store unavailable, internal): pending without a transaction, with that error', async () => {
    for (const code of ['chain.outcome_pending', 'store.unavailable', 'internal'] satisfies DomainErrorCode[]) {
      const error = new DomainError(code, `open: ${code}`);
      const outcome = await outcomeOf(Promise.reject(error));
      assert.deepEqual(outcome, { status: 'pending', error }, code);
      assert.equal('transactionId' in outcome, false);
    }
  });

  test('an unexpected failure (not a domain error): pending, answered internal with the failure as its cause', async () => {
    const failure = new Error('database connection lost');
    const outcome = await outcomeOf(Promise.reject(failure));
    assert.equal(outcome.status, 'pending');
    assert.equal('transactionId' in outcome, false);
    assert.ok(outcome.status === 'pending' && outcome.error instanceof DomainError);
    assert.deepEqual({ code: outcome.error.code, message: outcome.error.message, cause: outcome.error.cause }, { code: 'internal', message: 'the transfer was interrupted', cause: failure });
  });
});
