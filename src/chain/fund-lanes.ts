import { formatEther, getAddress, parseEther, type Address } from 'viem';
import { DomainError } from '#shared/errors.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { Relayer } from './relayer.ts';

/** The gas balance under which a lane is reported low (the log line, `/readyz`'s warning, the metric). */
export const minimumGasBalance = parseEther('100');

/** Wei of a decimal amount of the native coin (`0.5`, `150.25`), exactly: up to 18 decimals, more than 0. */
export function parseNativeAmount(text: string): bigint {
  if (!/^\d{1,30}(\.\d{1,18})?$/.test(text)) {
    throw new DomainError('request.invalid', `--amount: "${text.slice(0, 40)}" is not an amount of the native coin (digits, a point, at most 18 decimals)`, { details: 'amount' });
  }
  const wei = parseEther(text);
  if (wei === 0n) throw new DomainError('request.invalid', '--amount must be more than 0', { details: 'amount' });
  return wei;
}

export interface LaneFunding {
  lane: number;
  address: Address;
  amount: string;
  transactionId: string;
  status: string;
}

/**
 * Sends `wei` of the network's native coin from the treasury (lane 0, the platform account) to each
 * other lane, or to `lane` alone: one journaled transaction each (`lane-funding`), so a crash
 * mid-way is finished by recovery like any other and nothing is sent twice.
 */
export async function fundLanes(
  relayer: Pick<Relayer, 'lanes' | 'send'>, network: NetworkName, wei: bigint, lane?: number,
): Promise<LaneFunding[]> {
  const count = relayer.lanes.length;
  if (lane !== undefined && (!Number.isInteger(lane) || lane < 1 || lane >= count)) {
    throw new DomainError('request.invalid', `--lane must be a lane from 1 to ${count - 1} (lane 0 is the treasury itself)`, { details: 'lane' });
  }
  if (count < 2) throw new DomainError('request.invalid', 'RELAYER_LANES is 1: the treasury is the only lane');
  const targets = lane === undefined ? relayer.lanes.map((address, i) => ({ address, i })).slice(1) : [{ address: relayer.lanes[lane]!, i: lane }];
  const funded: LaneFunding[] = [];
  // One after the other: each takes the treasury's next nonce.
  for (const target of targets) {
    const address = getAddress(target.address);
    const sent = await relayer.send(network, {
      to: address, data: '0x', value: wei,
      intent: { kind: 'lane-funding', toAddress: address, amount: wei.toString() },
    });
    funded.push({ lane: target.i, address, amount: formatEther(wei), transactionId: sent.txHash, status: sent.status });
  }
  return funded;
}
