import { DomainError } from '#shared/errors.ts';
import { isNetworkName, networkNames } from '#shared/networks.ts';
import { batched, statementCsv, statementJson } from '../statements/statement-render.ts';
import { operatorDayCsv, operatorDayLine } from '../statements/operator-day.ts';
import { dateOf } from '../statements/statement-day.ts';
import type { CliCommand, CliContext } from './command.ts';
import { withPlatform } from './command.ts';

/** Written to standard output as it comes, each piece handed to the OS before the next (the process exits after). */
const write = (piece: string) => new Promise<void>((resolve, reject) => process.stdout.write(piece, (error) => (error ? reject(error) : resolve())));

async function writeOut(pieces: AsyncIterable<string>): Promise<void> {
  for await (const piece of pieces) await write(piece);
}

/** --date, or today in TIME_ZONE (not the machine's zone: the platform's days are TIME_ZONE's). */
function dateOption(context: CliContext, now: number): string {
  const { date } = context.values;
  if (date === undefined) return dateOf(now, context.config.timeZone);
  if (typeof date !== 'string') throw new DomainError('request.invalid', '--date yyyy-mm-dd (a day in TIME_ZONE)');
  return date;
}

/**
 * Which day, in which zone, on standard error (standard output stays the document): a store owner
 * on a machine in another zone sees that the day is TIME_ZONE's, and whether it is over.
 */
function dayNote(what: string, day: { date: string; timeZone: string; firstInstant: string; lastInstant: string }, closed?: boolean): void {
  const state = closed === undefined ? '' : closed ? '; the day is over' : '; the day is still running (lines so far)';
  process.stderr.write(`${what}: ${day.date} in ${day.timeZone} (TIME_ZONE), ${day.firstInstant} to ${day.lastInstant}${state}\n`);
}

export const statementCommand: CliCommand = {
  summary: '--tid TID [--date YYYY-MM-DD] [--csv]  a store\'s daily statement, reconciled against the chain; the day is TIME_ZONE\'s, today by default (docs/statements.md)',
  options: { tid: { type: 'string' }, date: { type: 'string' }, csv: { type: 'boolean' } },
  run: async (context) => {
    const { tid } = context.values;
    if (typeof tid !== 'string') throw new DomainError('request.invalid', '--tid is required');
    const json = context.values.json === true;
    await withPlatform(context, async (platform) => {
      const statement = await platform.statements.open(tid, dateOption(context, platform.admin.stores.clock()));
      if (!json) dayNote(`statement of ${tid}`, statement.header, statement.header.closed);
      // One JSON document: indented on a terminal, one line with --json (and over HTTP).
      await writeOut(batched(context.values.csv ? statementCsv(statement) : statementJson(statement, { pretty: !json })));
      if (!context.values.csv) await write('\n');
    });
    return undefined;
  },
};

export const operatorDayCommand: CliCommand = {
  summary: '[--date YYYY-MM-DD] [--network NAME] [--csv]  settlement fees (execution, L1 data; ETH/BNB, wei beside), apart from deploys and mints, of a day in TIME_ZONE, today by default',
  options: { date: { type: 'string' }, network: { type: 'string' }, csv: { type: 'boolean' } },
  run: async (context) => {
    const { network } = context.values;
    if (network !== undefined && (typeof network !== 'string' || !isNetworkName(network))) {
      throw new DomainError('network.unknown', `--network must be one of ${networkNames.join(', ')}`);
    }
    const day = await withPlatform(context, (platform) => platform.statements.operatorDay(dateOption(context, platform.admin.stores.clock())));
    const shown = network ? { ...day, networks: day.networks.filter((n) => n.network === network), transactions: day.transactions.filter((t) => t.network === network) } : day;
    if (context.values.json !== true) {
      dayNote('operator\'s day', day);
      // A line per network a person reads at a glance; the document follows on standard output.
      for (const n of shown.networks) process.stderr.write(`  ${operatorDayLine(n)}\n`);
    }
    return context.values.csv ? operatorDayCsv(shown).trimEnd() : shown;
  },
};
