import { DomainError } from '#shared/errors.ts';
import { addOperator } from '../console/operators.ts';
import type { CliCommand } from './command.ts';
import { withStoreRecords } from './command.ts';

export const operatorAddCommand: CliCommand = {
  summary: '--username NAME --password PW  create an operator of the console at /console (not a user)',
  options: { username: { type: 'string' }, password: { type: 'string' } },
  run: async (context) => {
    const { username, password } = context.values;
    if (typeof username !== 'string' || typeof password !== 'string') throw new DomainError('request.invalid', '--username and --password are required');
    return withStoreRecords(context, (records) => addOperator(
      records.operators,
      { username, password },
    ));
  },
};
