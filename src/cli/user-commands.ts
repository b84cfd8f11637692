import { DomainError } from '#shared/errors.ts';
import { addUser } from '../identity/add-user.ts';
import type { CliCommand } from './command.ts';
import { withPlatform } from './command.ts';

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

export const userAddCommand: CliCommand = {
  summary: '--id ID --password PW --name NAME [--email E] [--tel T]  create a user and its wallet (secrets shown once)',
  options: { id: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' }, tel: { type: 'string' } },
  run: async (context) => {
    const { id, password, name, email, tel } = context.values;
    if (typeof id !== 'string' || typeof password !== 'string' || typeof name !== 'string') {
      throw new DomainError('request.invalid', '--id, --password and --name are required');
    }
    return withPlatform(context, (platform) => addUser(
      { users: platform.identity.users, createWalletAccount: () => platform.wallet.createAddress() },
      { id, password, name, email: text(email), tel: text(tel) },
    ));
  },
};
