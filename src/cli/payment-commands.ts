import { DomainError } from '#shared/errors.ts';
import { addStore } from '../payments/add-store.ts';
import { publishRateNotice } from '../commerce/rate-notice.ts';
import type { CliCommand } from './command.ts';
import { withPlatform } from './command.ts';

export const storeAddCommand: CliCommand = {
  summary: '--tid TID --name NAME  register a store: settlement account and POS API key (shown once)',
  options: { tid: { type: 'string' }, name: { type: 'string' } },
  run: async (context) => {
    const { tid, name } = context.values;
    if (typeof tid !== 'string' || typeof name !== 'string') throw new DomainError('request.invalid', '--tid and --name are required');
    return withPlatform(context, (platform) => addStore(
      platform.admin.stores,
      { tid, name },
    ));
  },
};

export const ratePublishCommand: CliCommand = {
  summary: '--rate R [--currency KRW] [--contract 0x… | --symbol SYMBOL]  publish an exchange-rate notice (currency units per token: VIXP, or the allowed token named)',
  options: { currency: { type: 'string' }, rate: { type: 'string' }, contract: { type: 'string' }, symbol: { type: 'string' } },
  run: async (context) => {
    const { rate, contract, symbol } = context.values;
    if (typeof rate !== 'string') throw new DomainError('request.invalid', '--rate is required');
    const currency = typeof context.values.currency === 'string' ? context.values.currency : context.config.defaultCurrency;
    return withPlatform(context, (platform) => publishRateNotice(
      platform.admin.stores,
      { currency, rate, ...(typeof contract === 'string' && { contractAddress: contract }), ...(typeof symbol === 'string' && { tokenSymbol: symbol }) },
    ));
  },
};
