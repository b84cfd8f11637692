import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';

/** The store whose POS API key this is (looked up by its SHA-256); `request.unauthorized` otherwise. */
export async function authenticateStore(deps: Pick<PaymentDeps, 'merchants'>, apiKey: string): Promise<StoreRecord> {
  const store = apiKey ? await deps.merchants.findStoreByApiKeyHash(sha256Hex(apiKey)) : undefined;
  if (!store) throw new DomainError('request.unauthorized', 'unknown POS API key');
  return store;
}
