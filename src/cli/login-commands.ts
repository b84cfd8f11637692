import { DomainError } from '#shared/errors.ts';
import { readServerUrls } from '#shared/server-urls.ts';
import type { CliCommand } from './command.ts';
import { approveWebsiteLogin } from './approve-login.ts';

export const loginApproveCommand: CliCommand = {
  summary: '--request-id ID --id USER --password PW --address A --secret-key S [--server URL]  answer a website login as the app',
  options: {
    'request-id': { type: 'string' }, id: { type: 'string' }, password: { type: 'string' },
    address: { type: 'string' }, 'secret-key': { type: 'string' }, server: { type: 'string' },
  },
  run: async ({ values, config }) => {
    const text = (name: string) => {
      const value = values[name];
      if (typeof value !== 'string' || value === '') throw new DomainError('request.invalid', `--${name} is required`);
      return value;
    };
    // As the simulators find the server: --server, HTTP_PORT, then the URL the server recorded in DATA_DIR.
    const recorded = process.env.HTTP_PORT === undefined ? readServerUrls(config.dataDir)?.http : undefined;
    const server = typeof values.server === 'string' ? values.server : recorded ?? `http://127.0.0.1:${config.httpPort}`;
    const approved = await approveWebsiteLogin({
      server, requestId: text('request-id'), id: text('id'), password: text('password'), address: text('address'), secretKey: text('secret-key'),
    });
    return { approved: true, ...approved };
  },
};
