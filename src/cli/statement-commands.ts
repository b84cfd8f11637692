import { DomainError } from '#shared/errors.ts';
import { isNetworkName, networkNames } from '#shared/networks.ts';
import { batched, statementCsv, statementJson } from '../statements/statement-render.ts';
import { operatorDayCsv } from '../statements/operator-day.ts';
import type { CliCommand } from './commands.ts';
import { withPlatform } from './cli-deps.ts';

/** Written to standard output as it comes, each piece handed to the OS before the next (the process exits after). */
const write = (piece: string) => new Promise<void>((resolve, reject) => process.stdout.write(piece, (error) => (error ? reject(error) : resolve())));

async function writeOut(pieces: AsyncIterable<string>): Promise<void> {
  for await (const piece of pieces) await write(piece);
}

function dateOption(value: string | boolean | undefined): string {
  if (typeof value !== 'string') throw new DomainError('request.invalid', '--date yyyy-mm-dd is required (a day in TIME_ZONE)');
  return value;
}

export const statementCommand: CliCommand = {
  summary: '--tid TID --date YYYY-MM-DD [--csv]  a store\'s daily statement, reconciled against the chain (docs/statements.md)',
  options: { tid: { type: 'string' }, date: { type: 'string' }, csv: { type: 'boolean' } },
  run: async (context) => {
    const { tid } = context.values;
    if (typeof tid !== 'string') throw new DomainError('request.invalid', '--tid is required');
    const date = dateOption(context.values.date);
    await withPlatform(context, async (platform) => {
      const statement = await platform.statements.open(tid, date);
      await writeOut(batched(context.values.csv ? statementCsv(statement) : statementJson(statement)));
      if (!context.values.csv) await write('\n');
    });
    return undefined;
  },
};

export const operatorDayCommand: CliCommand = {
  summary: '--date YYYY-MM-DD [--network NAME] [--csv]  settlement transactions, gas and fees of a day per network',
  options: { date: { type: 'string' }, network: { type: 'string' }, csv: { type: 'boolean' } },
  run: async (context) => {
    const date = dateOption(context.values.date);
    const { network } = context.values;
    if (network !== undefined && (typeof network !== 'string' || !isNetworkName(network))) {
      throw new DomainError('network.unknown', `--network must be one of ${networkNames.join(', ')}`);
    }
    const day = await withPlatform(context, (platform) => platform.statements.operatorDay(date));
    const shown = network ? { ...day, networks: day.networks.filter((n) => n.network === network), transactions: day.transactions.filter((t) => t.network === network) } : day;
    return context.values.csv ? operatorDayCsv(shown).trimEnd() : shown;
  },
};
