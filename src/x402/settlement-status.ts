import type { Address } from 'viem';
import { getAddress, isAddress } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import type { FacilitatorKeyRecord } from '../store/facilitator-key-repository.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
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

/** The facilitator key a lookup is made with. */
export type AskingKey = Pick<FacilitatorKeyRecord, 'id' | 'tid'>;

/**
 * The settlement of `payer` with `nonce` if `key` may read it: the key that settled it, or another
 * key of the same store (the key's `tid`, when it names one). Undefined otherwise, as when there is
 * none: another resource server learns nothing of it, not even that it exists.
 */
export async function ownSettlement(deps: Pick<X402Deps, 'settlements' | 'keys'>, payer: string, nonce: string, key: AskingKey): Promise<X402SettlementRecord | undefined> {
  if (!isAddress(payer, { strict: false })) return undefined;
  // Stryker disable next-line Regex,ConditionalExpression,BooleanLiteral: equivalent, a nonce not of this form is in no record: the lookup below finds nothing (this spares it)
  if (!/^0x[0-9a-fA-F]{64}$/.test(nonce)) return undefined;
  // One per network and token at most (a nonce is its payer's and token's): the newest the key may read.
  const records = await deps.settlements.findByPayerNonce(getAddress(payer), nonce.toLowerCase());
  for (const record of records) {
    if (record.keyId === key.id) return record;
    if (key.tid !== null && (await deps.keys.find(record.keyId))?.tid === key.tid) return record;
  }
  return undefined;
}

/** GET /x402/settlements/:payer/:nonce: where an accepted settlement stands; undefined when none was accepted (or `key` may not read it). */
export async function settlementStatus(deps: X402Deps, payer: string, nonce: string, key: AskingKey): Promise<X402SettlementStatus | undefined> {
  let record = await ownSettlement(deps, payer, nonce, key);
  if (!record) return undefined;
  if ((await observeSettlement(deps, record)) === 'ended') record = (await deps.settlements.find(record.id)) ?? record;
  const transaction = record.txHash ?? (await deps.authorizations.find(record.id))?.txHash ?? '';
  return {
    status: record.status === 'accepted' ? 'pending' : record.status, payer: record.payer as Address, nonce: record.nonce,
    network: x402NetworkOf(deps.chains, record.network as NetworkName), transaction,
    ...(record.errorReason && { errorReason: record.errorReason }),
  };
}

/**
 * GET /x402/settlements/:payer/:nonce/receipt: the receipt issued when it was recorded settled;
 * undefined when `key` may not read it, or it is not settled (or its receipt not issued yet: the
 * sweep issues one that failed at settlement within seconds).
 */
export async function settlementReceipt(deps: X402Deps, payer: string, nonce: string, key: AskingKey): Promise<Record<string, unknown> | undefined> {
  const record = await ownSettlement(deps, payer, nonce, key);
  if (record?.status !== 'settled') return undefined;
  return deps.receipts?.find(record.id);
}
