import type { Logger } from '#shared/logger.ts';
import { runPeriodically } from '#shared/periodic.ts';
import type { Clock } from '#shared/clock.ts';
import type { WalletRepository } from '../store/wallet-repository.ts';
import type { IdempotencyRepository } from '../store/idempotency-repository.ts';
import type { WebsiteLoginService } from '../identity/website-login.ts';

export interface RecordSweepDeps {
  tempKeys: Pick<WalletRepository, 'deleteDeadTempKeys'>;
  idempotencyKeys: Pick<IdempotencyRepository, 'sweepExpired'>;
  websiteLogins: Pick<WebsiteLoginService, 'sweepExpired'>;
  clock: Clock;
  logger: Logger;
  /** A used temp key is kept this long after its use (TEMP_KEY_USED_GRACE_SECONDS). */
  usedTempKeyGraceMs: number;
}

/** Rows deleted by one sweep, by table. */
export interface RecordSweepCounts {
  tempKeys: number;
  idempotencyKeys: number;
  websiteLogins: number;
}

/**
 * One sweep of the rows nobody can use any more: dead temp keys (`net_getTempKey`), expired
 * idempotency keys (REST pay, POS tran_no) and website-login requests past their retention. Each is
 * one DELETE by expiry in the store; a failing one does not stop the others.
 */
export async function sweepExpiredRecords(deps: RecordSweepDeps): Promise<RecordSweepCounts> {
  const now = deps.clock();
  const attempt = async (table: keyof RecordSweepCounts, sweep: () => Promise<number>) => {
    try {
      return await sweep();
    } catch (err) {
      deps.logger.warn({ err, table }, 'expiry sweep failed');
      return 0;
    }
  };
  const counts = {
    tempKeys: await attempt('tempKeys', () => deps.tempKeys.deleteDeadTempKeys(now, now - deps.usedTempKeyGraceMs)),
    idempotencyKeys: await attempt('idempotencyKeys', () => deps.idempotencyKeys.sweepExpired(now)),
    websiteLogins: await attempt('websiteLogins', () => deps.websiteLogins.sweepExpired()),
  };
  if (counts.tempKeys + counts.idempotencyKeys + counts.websiteLogins > 0) deps.logger.debug(counts, 'expired records swept');
  return counts;
}

/** Runs the sweep every `intervalMs` (SWEEP_INTERVAL_SECONDS), never two at once; `stop` ends it and waits for a running one. */
export function scheduleRecordSweeps(deps: RecordSweepDeps, intervalMs: number): { stop(): Promise<void> } {
  return runPeriodically(() => sweepExpiredRecords(deps), intervalMs);
}
