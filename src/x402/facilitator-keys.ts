import { randomBytes } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import type { Clock } from '#shared/clock.ts';
import type { FacilitatorKeyRecord, FacilitatorKeyRepository } from '../store/facilitator-key-repository.ts';

export interface FacilitatorKeyDeps {
  keys: FacilitatorKeyRepository;
  clock: Clock;
}

/** Requests per second a key may make unless `--rate` says otherwise (a burst of 10 seconds' worth). */
export const defaultKeyRatePerSecond = 50;

/**
 * `vixpay facilitator-key add`: a new API key for a resource server, shown once (only its SHA-256 is
 * kept). `tid` names the store whose webhook endpoints receive the key's `x402.*` events.
 */
export async function addFacilitatorKey(deps: FacilitatorKeyDeps, input: { name: string; tid?: string | undefined; ratePerSecond?: number | undefined }): Promise<FacilitatorKeyRecord & { key: string }> {
  const name = input.name.trim();
  if (!name || name.length > 100) throw new DomainError('request.invalid', 'the key needs a name of 1 to 100 characters');
  const ratePerSecond = input.ratePerSecond ?? defaultKeyRatePerSecond;
  if (!Number.isInteger(ratePerSecond) || ratePerSecond < 1 || ratePerSecond > 100_000) throw new DomainError('request.invalid', '--rate is requests per second, 1 to 100000');
  const key = `vxf_${randomBytes(32).toString('base64url')}`;
  const record: FacilitatorKeyRecord = {
    id: `fk_${randomBytes(8).toString('hex')}`, name, tid: input.tid ?? null, ratePerSecond, createdAt: deps.clock(), revokedAt: null,
  };
  await deps.keys.insert({ ...record, keyHash: sha256Hex(key) });
  return { ...record, key };
}

export const listFacilitatorKeys = (deps: FacilitatorKeyDeps) => deps.keys.list();

/** `vixpay facilitator-key revoke ID`: the key is refused from its next request on. */
export async function revokeFacilitatorKey(deps: FacilitatorKeyDeps, id: string): Promise<FacilitatorKeyRecord> {
  if (!(await deps.keys.revoke(id, deps.clock()))) {
    const existing = await deps.keys.find(id);
    if (!existing) throw new DomainError('request.not_found', `no facilitator key ${id.slice(0, 64)}`);
    return existing;
  }
  const revoked = await deps.keys.find(id);
  if (!revoked) throw new DomainError('request.not_found', `no facilitator key ${id.slice(0, 64)}`);
  return revoked;
}

/** The key a request presents (`Authorization: Bearer vxf_…`), if it exists and is not revoked. */
export async function authenticateFacilitatorKey(deps: Pick<FacilitatorKeyDeps, 'keys'>, key: string): Promise<FacilitatorKeyRecord | undefined> {
  if (!key.startsWith('vxf_') || key.length > 100) return undefined;
  const record = await deps.keys.findByHash(sha256Hex(key));
  return record && record.revokedAt === null ? record : undefined;
}
