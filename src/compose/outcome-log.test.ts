import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { createLogger } from '#shared/logger.ts';
import { DomainError } from '#shared/errors.ts';
import { withOutcomeLog } from './outcome-log.ts';
import type { PaymentPart } from './platform.ts';
import type { SessionEvent } from '../pairing/session-events.ts';

test('one info line per payment, refund and reward outcome: tid, tran_no, code, amount, transaction', async () => {
  const lines: any[] = [];
  const logger = createLogger('info', new Writable({ write(chunk, _e, done) { lines.push(JSON.parse(chunk.toString())); done(); } }));
  const store = { tid: 'T001' };
  const approval = { tranNo: 'P1', tokenAmount: '8', transferTransactionId: '0xabc' };
  const part = {
    payments: {
      runPayment: async (_store: unknown, _request: unknown, pos: { send(e: SessionEvent): void }) => {
        pos.send({ type: 'transfer_pending', tranNo: 'P1' });
        pos.send({ type: 'end_pay', approval } as SessionEvent);
      },
      cancelPayment: async () => ({ tokenAmount: '8', transferTransactionId: '0xdef' }),
    },
    rewards: {
      issueReward: async () => { throw new DomainError('wallet.insufficient_balance', 'store balance too low'); },
      claimAtPos: async (_store: unknown, _request: unknown, pos: { send(e: SessionEvent): void }) => {
        pos.send({ type: 'failed', error: new DomainError('reward.expired', 'expired'), flow: 'reward', tranNo: 'R2' });
      },
      claimFromReceipt: async () => ({ tokenAmount: '1', transferTransactionId: '0x123' }),
      cancelReward: async () => ({ tokenAmount: '1', transferTransactionId: '0x456' }),
    },
  } as unknown as PaymentPart;
  const logged = withOutcomeLog(part, logger);
  const sent: string[] = [];
  const pos = { send: (event: SessionEvent) => { sent.push(event.type); }, signal: new AbortController().signal };
  await logged.payments.runPayment(store as any, { tranNo: 'P1' } as any, pos as any);
  await logged.payments.cancelPayment(store as any, { tranNo: 'C1' } as any);
  await assert.rejects(logged.rewards.issueReward(store as any, { tranNo: 'I1' } as any), /too low/);
  await logged.rewards.claimAtPos(store as any, { tranNo: 'R2', rewardId: 'RW1' } as any, pos as any);

  assert.deepEqual(sent, ['transfer_pending', 'end_pay', 'failed'], 'the POS still gets every event');
  const outcomes = lines.filter((line) => line.component === 'outcomes').map(({ call, tid, tran_no, code, amount, transaction, failure, level }) => ({ call, tid, tran_no, code, amount, transaction, failure, level }));
  assert.deepEqual(outcomes, [
    { call: 'payment', tid: 'T001', tran_no: 'P1', code: '00', amount: '8', transaction: '0xabc', failure: undefined, level: 30 },
    { call: 'cancelPayment', tid: 'T001', tran_no: 'C1', code: '00', amount: '8', transaction: '0xdef', failure: undefined, level: 30 },
    { call: 'issueReward', tid: 'T001', tran_no: 'I1', code: outcomes[2]?.code, amount: undefined, transaction: undefined, failure: 'wallet.insufficient_balance', level: 30 },
    { call: 'claimReward', tid: 'T001', tran_no: 'R2', code: '02', amount: undefined, transaction: undefined, failure: 'reward.expired', level: 30 },
  ]);
  assert.notEqual(outcomes[2]?.code, '02', 'a low store balance is not "Reward expired" in a reward call');
});
