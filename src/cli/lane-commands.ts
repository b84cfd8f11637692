import { formatEther } from 'viem';
import { DomainError } from '#shared/errors.ts';
import { isNetworkName, networkNames, type NetworkName } from '#shared/networks.ts';
import { fundLanes, minimumGasBalance, parseNativeAmount } from '../chain/fund-lanes.ts';
import type { CliCommand } from './command.ts';
import { withPlatform } from './command.ts';

function requiredNetwork(value: string | boolean | undefined): NetworkName {
  if (typeof value !== 'string') throw new DomainError('request.invalid', '--network is required', { details: 'network' });
  if (!isNetworkName(value)) throw new DomainError('network.unknown', `--network must be one of ${networkNames.join(', ')}`);
  return value;
}

function laneOption(value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,3}$/.test(value)) throw new DomainError('request.invalid', '--lane must be a lane number', { details: 'lane' });
  return Number(value);
}

export const lanesFundCommand: CliCommand = {
  summary: '--network NAME --amount X [--lane N]  send X of the native coin (ETH, BNB) from the treasury to each relayer lane',
  options: { network: { type: 'string' }, amount: { type: 'string' }, lane: { type: 'string' } },
  run: async (context) => {
    const network = requiredNetwork(context.values.network);
    const { amount } = context.values;
    if (typeof amount !== 'string') throw new DomainError('request.invalid', '--amount is required', { details: 'amount' });
    const wei = parseNativeAmount(amount);
    const lane = laneOption(context.values.lane);
    return withPlatform(context, async (platform) => {
      const funded = await fundLanes(platform.relayer, network, wei, lane);
      const { client } = platform.chains[network];
      const balances = await Promise.all(funded.map((f) => client.getBalance({ address: f.address })));
      const treasury = await client.getBalance({ address: platform.relayer.lanes[0]! });
      return {
        network, amount: formatEther(wei),
        lanes: funded.map((f, i) => ({ ...f, balance: formatEther(balances[i]!) })),
        treasury: { address: platform.relayer.lanes[0], balance: formatEther(treasury) },
      };
    });
  },
};

export const lanesListCommand: CliCommand = {
  summary: '[--network NAME]  each relayer lane\'s address and gas balance, and whether it is low',
  options: { network: { type: 'string' } },
  run: async (context) => {
    const networks = context.values.network === undefined ? networkNames : [requiredNetwork(context.values.network)];
    return withPlatform(context, async (platform) => ({
      minimum: formatEther(minimumGasBalance),
      lanes: (await Promise.all(networks.flatMap((network) => platform.relayer.lanes.map(async (address, lane) => {
        const balance = await platform.chains[network].client.getBalance({ address });
        return { network, lane, address, balance: formatEther(balance), low: balance < minimumGasBalance };
      })))),
    }));
  },
};
