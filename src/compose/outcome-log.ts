import type { Logger } from '#shared/logger.ts';
import type { PaymentPart } from './platform.ts';
import type { SessionSink } from '../pairing/session-events.ts';
import { resCodeOf, type CallFamily } from '../payments/result-codes.ts';

type Part = Pick<PaymentPart, 'payments' | 'rewards'>;

/** The fields of an outcome line: which call, for which store and tran_no, its res_code, the tokens moved and the transaction. */
interface OutcomeFields {
  tid?: string | undefined;
  tran_no?: string | undefined;
  reward_id?: string | undefined;
}

/** The amount and transaction of whatever a call answered (approval, cancellation, reward, claim). */
function movedBy(result: unknown): { amount?: string; transaction?: string } {
  const r = (result ?? {}) as { tokenAmount?: unknown; transferTransactionId?: unknown };
  return {
    ...(typeof r.tokenAmount === 'string' && { amount: r.tokenAmount }),
    ...(typeof r.transferTransactionId === 'string' && { transaction: r.transferTransactionId }),
  };
}

/**
 * The payment and reward services with one info line per outcome: every payment, cancellation
 * (refund), reward issued, claimed or cancelled, approved or failed, as `payment outcome`
 * `{call, tid, tran_no, code, amount, transaction}` (`code` the res_code the gRPC caller gets,
 * `failure` our code when it failed). What an operator greps for "what happened to tran_no X".
 */
export function withOutcomeLog<T extends Part>(part: T, logger: Logger): T {
  const log = logger.child({ component: 'outcomes' });
  const succeeded = (call: string, fields: OutcomeFields, result: unknown) =>
    log.info({ call, ...fields, code: '00', ...movedBy(result) }, `${call} approved`);
  const failed = (call: string, family: CallFamily, fields: OutcomeFields, error: unknown) =>
    log.info({ call, ...fields, code: resCodeOf(error, family).res_code, failure: (error as { code?: unknown }).code ?? 'internal' }, `${call} failed`);

  /** A unary call: its answer or its error. */
  const unary = <A extends unknown[], R>(call: string, family: CallFamily, fieldsOf: (...args: A) => OutcomeFields, run: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        const result = await run(...args);
        succeeded(call, fieldsOf(...args), result);
        return result;
      } catch (error) {
        failed(call, family, fieldsOf(...args), error);
        throw error;
      }
    };

  /** A streamed call: its END_PAY/END_REWARD or failure, as sent to the POS. */
  const observed = <S extends SessionSink>(call: string, family: CallFamily, fields: OutcomeFields, pos: S): S => {
    let logged = false;
    // The POS side itself (its abort signal and all) with `send` looked over.
    return Object.assign(Object.create(pos) as S, {
      send(event: Parameters<SessionSink['send']>[0]) {
        if (!logged && event.type === 'end_pay') succeeded(call, fields, event.approval);
        if (!logged && event.type === 'end_reward') succeeded(call, fields, event.claim);
        if (!logged && event.type === 'failed') failed(call, family, fields, event.error);
        logged ||= event.type === 'end_pay' || event.type === 'end_reward' || event.type === 'failed';
        pos.send(event);
      },
    });
  };

  const { payments, rewards } = part;
  return {
    ...part,
    payments: {
      ...payments,
      runPayment: (store, request, pos) => payments.runPayment(store, request, observed('payment', 'payment', { tid: store.tid, tran_no: request.tranNo }, pos)),
      cancelPayment: unary('cancelPayment', 'payment', (store, request) => ({ tid: store.tid, tran_no: request.tranNo }), payments.cancelPayment),
    },
    rewards: {
      ...rewards,
      issueReward: unary('issueReward', 'reward', (store, request) => ({ tid: store.tid, tran_no: request.tranNo }), rewards.issueReward),
      claimAtPos: (store, request, pos) => rewards.claimAtPos(store, request, observed('claimReward', 'reward', { tid: store.tid, tran_no: request.tranNo, reward_id: request.rewardId }, pos)),
      claimFromReceipt: unary('claimReward', 'reward', (params) => ({ reward_id: params.rewardId }), rewards.claimFromReceipt),
      cancelReward: unary('cancelReward', 'reward', (store, request) => ({ tid: store.tid, tran_no: request.tranNo }), rewards.cancelReward),
    },
  };
}
