import type { Address } from 'viem';
import { getAddress, isAddress } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import type { X402Deps } from './x402-deps.ts';
import { observeSettlement } from './observe-settlement.ts';
import { x402NetworkOf } from './x402-networks.ts';

export interface X402SettlementStatus {
  status: 'pending' | 'settled' | 'failed';
  payer: Address;
  nonce: string;
  network: string;
  /** The transaction that carried it (or carries it, while pending), '' before it was sent. */
  transaction: string;
  errorReason?: string;
}

/** GET /x402/settlements/:payer/:nonce: where an accepted settlement stands; undefined when none was accepted. */
export async function settlementStatus(deps: X402Deps, payer: string, nonce: string): Promise<X402SettlementStatus | undefined> {
  if (!isAddress(payer, { strict: false }) || !/^0x[0-9a-fA-F]{64}$/.test(nonce)) return undefined;
  let record = await deps.settlements.find(nonce.toLowerCase());
  if (!record || record.payer !== getAddress(payer)) return undefined;
  if ((await observeSettlement(deps, record)) === 'ended') record = (await deps.settlements.find(record.nonce)) ?? record;
  const transaction = record.txHash ?? (await deps.authorizations.find(record.nonce))?.txHash ?? '';
  return {
    status: record.status === 'accepted' ? 'pending' : record.status, payer: record.payer as Address, nonce: record.nonce,
    network: x402NetworkOf(deps.chains, record.network as NetworkName), transaction,
    ...(record.errorReason && { errorReason: record.errorReason }),
  };
}
