import { DomainError } from '../shared/errors.ts';
import { createPasswordHasher } from '../identity/password-hasher.ts';
import { createOperatorRepository } from '../store/operator-repository.ts';
import { addOperator } from '../console/operators.ts';
import type { CliCommand } from './commands.ts';
import { withPlatform } from './token-commands.ts';

export const operatorAddCommand: CliCommand = {
  summary: '--username NAME --password PW  create an operator of the console at /console (not a user)',
  options: { username: { type: 'string' }, password: { type: 'string' } },
  run: async (context) => {
    const { username, password } = context.values;
    if (typeof username !== 'string' || typeof password !== 'string') throw new DomainError('request.invalid', '--username and --password are required');
    return withPlatform(context, (platform) => addOperator(
      { operators: createOperatorRepository(platform.store.db), passwords: createPasswordHasher(), clock: platform.clock },
      { username, password },
    ));
  },
};
