import { DomainError } from '../shared/errors.ts';
import { addStore } from '../payments/add-store.ts';
import { publishRateNotice } from '../payments/publish-rate-notice.ts';
import { createMerchantRepository } from '../store/merchant-repository.ts';
import type { CliCommand } from './commands.ts';
import { withPlatform } from './token-commands.ts';

export const storeAddCommand: CliCommand = {
  summary: '--tid TID --name NAME  register a store: settlement account and POS API key (shown once)',
  options: { tid: { type: 'string' }, name: { type: 'string' } },
  run: async (context) => {
    const { tid, name } = context.values;
    if (typeof tid !== 'string' || typeof name !== 'string') throw new DomainError('request.invalid', '--tid and --name are required');
    return withPlatform(context, (platform) => addStore(
      { merchants: createMerchantRepository(platform.store.db), wallet: platform.wallet, clock: platform.clock },
      { tid, name },
    ));
  },
};

export const ratePublishCommand: CliCommand = {
  summary: '--rate R [--currency KRW]  publish an exchange-rate notice (currency units per token)',
  options: { currency: { type: 'string' }, rate: { type: 'string' } },
  run: async (context) => {
    const { rate } = context.values;
    if (typeof rate !== 'string') throw new DomainError('request.invalid', '--rate is required');
    const currency = typeof context.values.currency === 'string' ? context.values.currency : context.config.defaultCurrency;
    return withPlatform(context, (platform) => publishRateNotice(
      { merchants: createMerchantRepository(platform.store.db), clock: platform.clock, timeZone: platform.config.timeZone },
      { currency, rate },
    ));
  },
};
