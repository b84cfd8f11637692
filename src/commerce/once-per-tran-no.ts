import { DomainError, leavesOutcomeOpen } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import type { Clock } from '#shared/clock.ts';
import type { IdempotencyRepository } from '../store/idempotency-repository.ts';

export interface TranNoDeps {
  idempotency: IdempotencyRepository;
  clock: Clock;
  /**
   * An operation untouched this long was interrupted (its instance stopped), STALE_OPERATION_SECONDS:
   * far beyond what a live run takes between writing its record and signing its transfer. Its
   * transfer, if it signed one, is then settled from the chain; one still able to execute (within
   * AUTHORIZATION_TTL_SECONDS) keeps it pending.
   */
  staleOperationMs: number;
}

/**
 * What an interrupted attempt's record and the chain say of it: its outcome (answered, and kept for
 * the tran_no), `rerun` when nothing moved and nothing signed for it can move anything (the call runs
 * again), `pending` while a transfer of it may still execute.
 */
export type StaleAttempt<T> = { outcome: T } | 'rerun' | 'pending';

/** A POS unary call under its `common.tran_no`. */
export interface PosCallKey<T = unknown> {
  tid: string;
  call: 'cancelPayment' | 'issueReward' | 'cancelReward';
  /** Empty or absent: the call is not keyed (it runs every time). */
  tranNo?: string | undefined;
  /** The request's parameters: the same tran_no with other parameters is refused. */
  request: Readonly<Record<string, string | undefined>>;
  /**
   * Whether a call interrupted mid-run (an instance stopped) may run again after `staleAfterMs`:
   * true only for calls that move no tokens (IssueReward). Others answer 13 until `settleStale` settles them.
   */
  rerunWhenStale?: boolean;
  /** This attempt's record (a cancellation's id, a reward's id), kept with the tran_no for `settleStale`. */
  reference?: string;
  /** For a call that moves tokens: settles an attempt of it interrupted mid-run, once stale, by its `reference`. */
  settleStale?: (reference: string) => Promise<StaleAttempt<T>>;
}

/** How long a tran_no answers with its first outcome. */
export const posTranNoTtlMs = 30 * 24 * 3600_000;
const sweepEveryMs = 60_000;
// Stryker disable next-line StringLiteral: equivalent, every answer but 'pending' reruns (oncePerTranNo's check)
const rerun = 'rerun' satisfies StaleAttempt<never>;
const lastSweep = new WeakMap<IdempotencyRepository, number>();

/**
 * Runs a POS unary call at most once per (tid, call, tran_no). A retry after a lost reply answers
 * the first call's success again and moves nothing; a call refused before anything moved (a domain
 * error) frees the tran_no, as a failed payment's tran_no may be tried again. The same tran_no
 * with other parameters is `request.invalid` (11); while the first call runs, or when its transfer
 * is not settled on chain, `payment.in_progress` (13): it never runs twice.
 */
export async function oncePerTranNo<T>(deps: TranNoDeps, key: PosCallKey<T>, run: () => Promise<T>): Promise<T> {
  const tranNo = key.tranNo ?? '';
  if (tranNo === '') return run();
  if (tranNo.length > 128) throw new DomainError('request.invalid', 'tran_no is at most 128 characters', { details: 'tran_no' });
  const now = deps.clock();
  if (now - (lastSweep.get(deps.idempotency) ?? 0) > sweepEveryMs) {
    lastSweep.set(deps.idempotency, now);
    await deps.idempotency.sweepExpired(now);
  }
  const scope = `pos:${key.tid}:${key.call}`;
  const fingerprint = sha256Hex(JSON.stringify(Object.entries(key.request).map(([name, value]) => [name, value ?? '']).sort()));
  const reference = key.reference ?? null;
  const claim = await deps.idempotency.claim({ scope, key: tranNo, fingerprint, reference, createdAt: now, expiresAt: now + posTranNoTtlMs });
  if (!claim.claimed) {
    const { existing } = claim;
    if (existing.fingerprint !== fingerprint) {
      throw new DomainError('request.invalid', `tran_no ${tranNo} was already used for another ${key.call} request`, { details: 'tran_no' });
    }
    if (existing.state === 'done') return JSON.parse(existing.outcome ?? 'null') as T;
    const inProgress = new DomainError('payment.in_progress', `tran_no ${tranNo} is being processed`, { details: 'tran_no' });
    if (now - existing.updatedAt <= deps.staleOperationMs) throw inProgress;
    // Interrupted: its own record and the chain say how it ended.
    const settled = key.settleStale && existing.reference ? await key.settleStale(existing.reference) : key.rerunWhenStale ? rerun : 'pending';
    if (typeof settled === 'object') {
      await deps.idempotency.record(scope, tranNo, 'done', JSON.stringify(settled.outcome), deps.clock());
      return settled.outcome;
    }
    if (settled === 'pending' || !(await deps.idempotency.retake(scope, tranNo, existing.updatedAt, reference ?? '', now))) throw inProgress;
  }
  let result: T;
  try {
    result = await run();
  } catch (error) {
    // Refused: nothing moved and nothing signed can move anything. A transfer the chain has not
    // settled (`chain.outcome_pending`) or an unexpected failure keeps the tran_no taken.
    if (!leavesOutcomeOpen(error)) {
      await deps.idempotency.release(scope, tranNo);
    }
    throw error;
  }
  await deps.idempotency.record(scope, tranNo, 'done', JSON.stringify(result), deps.clock());
  return result;
}
