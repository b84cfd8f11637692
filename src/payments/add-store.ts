import { randomBytes } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import type { PaymentDeps } from './payment-deps.ts';

export interface AddStoreReturnType {
  tid: string;
  name: string;
  settlementAddress: string;
  /** The POS's `authorization: Bearer` key. Shown once; only its hash is stored. */
  apiKey: string;
}

const tidPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** Registers a store with a new custodial settlement account and a POS API key. */
export async function addStore(
  deps: Pick<PaymentDeps, 'merchants' | 'wallet' | 'clock'>,
  params: { tid: string; name: string },
): Promise<AddStoreReturnType> {
  if (!tidPattern.test(params.tid)) throw new DomainError('request.invalid', 'tid must be 1 to 64 letters, digits, "-" or "_"', { details: 'tid' });
  const name = params.name.trim();
  if (name.length === 0 || name.length > 100) throw new DomainError('request.invalid', 'name must be 1 to 100 characters', { details: 'name' });
  if (await deps.merchants.findStore(params.tid)) throw new DomainError('request.invalid', `tid ${params.tid} is already registered`, { details: 'tid' });
  const { address } = await deps.wallet.createAddress();
  const apiKey = `vxp_${randomBytes(32).toString('base64url')}`;
  const inserted = await deps.merchants.insertStore({ tid: params.tid, name, settlementAddress: address, apiKeyHash: sha256Hex(apiKey) }, deps.clock());
  if (!inserted) throw new DomainError('request.invalid', `tid ${params.tid} is already registered`, { details: 'tid' });
  return { tid: params.tid, name, settlementAddress: address, apiKey };
}
