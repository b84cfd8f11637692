import { DomainError } from '#shared/errors.ts';
import { addFacilitatorKey, listFacilitatorKeys, revokeFacilitatorKey } from '../x402/facilitator-keys.ts';
import type { CliCommand } from './command.ts';
import { withStoreRecords } from './command.ts';

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

export const facilitatorKeyAddCommand: CliCommand = {
  summary: '--name NAME [--tid TID] [--rate N]  API key of a resource server for the x402 facilitator (shown once)',
  options: { name: { type: 'string' }, tid: { type: 'string' }, rate: { type: 'string' } },
  run: async (context) => {
    const name = text(context.values.name);
    if (!name) throw new DomainError('request.invalid', '--name is required');
    const rate = text(context.values.rate);
    return withStoreRecords(context, (records) => addFacilitatorKey(records.facilitatorKeys, {
      name, tid: text(context.values.tid), ratePerSecond: rate === undefined ? undefined : Number(rate),
    }));
  },
};

export const facilitatorKeyListCommand: CliCommand = {
  summary: ' facilitator keys (never the keys themselves)',
  options: {},
  run: async (context) => withStoreRecords(context, (records) => listFacilitatorKeys(records.facilitatorKeys)),
};

export const facilitatorKeyRevokeCommand: CliCommand = {
  summary: 'ID  refuse a facilitator key from its next request on',
  options: {},
  run: async (context) => {
    const [id] = context.positionals;
    if (!id) throw new DomainError('request.invalid', 'the key ID (fk_…) is required');
    return withStoreRecords(context, (records) => revokeFacilitatorKey(records.facilitatorKeys, id));
  },
};
