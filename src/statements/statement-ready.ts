import type { Clock } from '#shared/clock.ts';
import type { StatementRepository } from '../store/statement-repository.ts';
import { statementReadyEvent } from '../webhooks/webhook-events.ts';
import { dateOf, statementDay } from './statement-day.ts';

export interface StatementReadyDeps {
  repository: Pick<StatementRepository, 'stores' | 'readyDays' | 'markReady'>;
  clock: Clock;
  timeZone: string;
  /** A day is announced this long after it ended (the same grace as a statement's `closed`). */
  closeGraceMs?: number;
  /** How many past days a platform that was down catches up on. */
  catchUpDays?: number;
}

const dayMs = 86_400_000;

/**
 * Writes `statement.ready` for each store and each closed day since it was added (at most
 * `catchUpDays` back), once: the (store, day) row and the event are one transaction, so instances
 * checking at the same time write it once. Answers how many were written.
 */
export async function announceClosedDays(deps: StatementReadyDeps): Promise<number> {
  const now = deps.clock();
  const grace = deps.closeGraceMs ?? 60_000;
  const days: string[] = [];
  for (let back = deps.catchUpDays ?? 3; back >= 1; back--) {
    const date = dateOf(now - back * dayMs, deps.timeZone);
    if (!days.includes(date) && statementDay(date, deps.timeZone).endMs + grace <= now) days.push(date);
  }
  let written = 0;
  // One read of what was announced: a check every minute over many stores writes only what is new.
  const announced = await deps.repository.readyDays(days);
  for (const store of await deps.repository.stores()) {
    for (const date of days) {
      if (announced.has(`${store.tid}|${date}`) || statementDay(date, deps.timeZone).endMs <= store.createdAt) continue;
      const path = `/v1/stores/${encodeURIComponent(store.tid)}/statements/${date}`;
      if (await deps.repository.markReady(store.tid, date, statementReadyEvent(store.tid, { date, timeZone: deps.timeZone, path }), now)) written++;
    }
  }
  return written;
}
