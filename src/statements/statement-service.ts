import type { Clock } from '#shared/clock.ts';
import type { StatementRepository } from '../store/statement-repository.ts';
import { openStatement, type StatementDeps } from './statement-builder.ts';
import { operatorDay, type OperatorDay } from './operator-day.ts';
import { announceClosedDays } from './statement-ready.ts';
import type { OpenStatement } from './statement.ts';

export interface StatementServiceDeps extends Omit<StatementDeps, 'repository'> {
  repository: StatementRepository;
  networks: readonly string[];
  clock: Clock;
}

/** Daily statements of stores, the operator's day, and the `statement.ready` check (docs/statements.md). */
export interface StatementService {
  /** Store `tid`'s statement of `date` (yyyy-mm-dd, TIME_ZONE): the header at once, the lines as they are read. */
  open(tid: string, date: string): Promise<OpenStatement>;
  operatorDay(date: string): Promise<OperatorDay>;
  /** Writes `statement.ready` for every closed day not announced yet; answers how many. */
  announceClosedDays(): Promise<number>;
}

export function createStatementService(deps: StatementServiceDeps): StatementService {
  return {
    open: (tid, date) => openStatement(deps, tid, date),
    operatorDay: (date) => operatorDay(deps, date),
    announceClosedDays: () => announceClosedDays({ ...deps, ...(deps.closeGraceMs !== undefined && { closeGraceMs: deps.closeGraceMs }) }),
  };
}
