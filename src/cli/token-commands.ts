import { DomainError } from '#shared/errors.ts';
import { isNetworkName, networkNames, type NetworkName } from '#shared/networks.ts';
import { allowSettlementToken, disallowSettlementToken, listSettlementTokens } from '../payments/settlement-token-allow-list.ts';
import type { CliCommand, CliContext } from './command.ts';
import { withPlatform } from './command.ts';

function networkOption(value: string | boolean | undefined, fallback: NetworkName = 'ethereum'): NetworkName {
  const network = typeof value === 'string' ? value : fallback;
  if (!isNetworkName(network)) throw new DomainError('network.unknown', `--network must be one of ${networkNames.join(', ')}`);
  return network;
}

export const tokenMintCommand: CliCommand = {
  summary: '--to ADDRESS --amount AMOUNT [--network NAME]  treasury issuance of VIXP',
  options: { to: { type: 'string' }, amount: { type: 'string' }, network: { type: 'string' } },
  run: async (context) => {
    const { to, amount } = context.values;
    if (typeof to !== 'string' || typeof amount !== 'string') throw new DomainError('request.invalid', '--to and --amount are required');
    const network = networkOption(context.values.network);
    return withPlatform(context, async (platform) => {
      const minted = await platform.wallet.mint(network, { to, amount });
      const balance = await platform.wallet.getBalance(network, { address: to });
      return { network, to, amount, transactionId: minted.transactionId, balance: balance.balance };
    });
  },
};

export const tokenBalanceCommand: CliCommand = {
  summary: 'ADDRESS [--network NAME]  VIXP balance of an address',
  options: { network: { type: 'string' } },
  run: async (context) => {
    const [address] = context.positionals;
    if (!address) throw new DomainError('request.invalid', 'ADDRESS is required');
    const network = networkOption(context.values.network);
    return withPlatform(context, async (platform) => ({ network, address, ...(await platform.wallet.getBalance(network, { address })) }));
  },
};

function contractOption(context: CliContext): string {
  const { contract } = context.values;
  if (typeof contract !== 'string') throw new DomainError('request.invalid', '--contract is required');
  return contract;
}

export const tokenAllowCommand: CliCommand = {
  summary: '--contract ADDRESS [--network NAME] [--holder ADDRESS]  let any ERC-20 the platform can move settle payments, refunds and rewards besides VIXP',
  options: { contract: { type: 'string' }, network: { type: 'string' }, holder: { type: 'string' } },
  run: async (context) => {
    const contract = contractOption(context);
    const network = networkOption(context.values.network, context.config.paymentNetwork);
    const { holder } = context.values;
    return withPlatform(context, (platform) =>
      allowSettlementToken(platform.admin.settlementTokens, network, contract, typeof holder === 'string' ? { holder } : {}));
  },
};

export const tokenDisallowCommand: CliCommand = {
  summary: '--contract ADDRESS [--network NAME]  take a token off the allow-list',
  options: { contract: { type: 'string' }, network: { type: 'string' } },
  run: async (context) => {
    const contract = contractOption(context);
    const network = networkOption(context.values.network, context.config.paymentNetwork);
    return withPlatform(context, (platform) => disallowSettlementToken(platform.admin.settlementTokens, network, contract));
  },
};

export const tokenAllowedCommand: CliCommand = {
  summary: '[--network NAME]  tokens that settle payments: VIXP and the allow-list',
  options: { network: { type: 'string' } },
  run: async (context) => {
    const network = typeof context.values.network === 'string' ? networkOption(context.values.network) : undefined;
    return withPlatform(context, async (platform) => ({ tokens: await listSettlementTokens(platform.admin.settlementTokens, network) }));
  },
};
