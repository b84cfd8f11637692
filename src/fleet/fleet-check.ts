import { createHash, hkdfSync, randomUUID } from 'node:crypto';
import type { FleetRepository } from '../store/fleet-repository.ts';

/**
 * What every instance on one database must share, compared by sha256 fingerprints in the `fleet`
 * table: the first instance writes each, a later one that differs refuses to start, naming what
 * differs and the setting to fix, never the secret. Without this an instance with a master key of
 * its own (no MASTER_KEY: a fresh `DATA_DIR/master.key`) or a relayer key of its own starts and fails
 * at first use: it cannot open a key the others sealed, or it signs from an unfunded account.
 */
export type FleetFact = 'master_key' | 'relayer_account';

const fixes: Readonly<Record<FleetFact, string>> = {
  master_key: 'the master key differs from the fleet\'s: give every instance the same MASTER_KEY (or, once `keys migrate --to pkcs11` moved the keys into an HSM, KEY_CUSTODY=pkcs11 with the fleet\'s token)',
  relayer_account: 'the relayer account differs from the fleet\'s: give every instance the same RELAYER_PRIVATE_KEY',
};

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * The master key's fingerprint: sha256 of a key derived from it (HKDF-SHA256, its own label), so
 * the stored value says nothing about the key the vault encrypts with.
 */
export function masterKeyFingerprint(masterKey: Buffer): string {
  return sha256(Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'vixpay fleet fingerprint', 32)));
}

/**
 * The relayer's platform account (lane 0). Its other lanes are derived from its key, so one key makes
 * one set of lanes; how many of them an instance uses (RELAYER_LANES) may change across the fleet.
 */
export function relayerAccountFingerprint(address: string): string {
  return sha256(address.toLowerCase());
}

/** An instance that does not match its fleet; `differs` names each fact. */
export class FleetMismatchError extends Error {
  readonly differs: readonly FleetFact[];

  constructor(differs: FleetFact[]) {
    super(`this instance does not match the others on its database (fleet table): ${differs.map((fact) => fixes[fact]).join('; ')}`);
    this.name = 'FleetMismatchError';
    this.differs = differs;
  }
}

/**
 * Writes this instance's fingerprints where none is stored yet, then compares every one of them
 * with the fleet's. Throws FleetMismatchError naming each that differs.
 */
export async function checkFleet(repository: FleetRepository, mine: Partial<Record<FleetFact, string>>, now: number): Promise<void> {
  const entries = Object.entries(mine) as Array<[FleetFact, string]>;
  for (const [fact, fingerprint] of entries) await repository.claim(fact, fingerprint, now);
  const fleet = await repository.all();
  const differs = entries.filter(([fact, fingerprint]) => fleet.get(fact) !== fingerprint).map(([fact]) => fact);
  if (differs.length > 0) throw new FleetMismatchError(differs);
}

/**
 * The fleet's id: a random UUID the first instance on a database writes (`fleet_id`), shared by every
 * instance of it and by no other deployment. It names what the fleet keeps outside its database:
 * its login-throttle keys in a Redis that other deployments (or test runs) may share.
 */
export async function claimFleetId(repository: FleetRepository, now: number): Promise<string> {
  await repository.claim('fleet_id', randomUUID(), now);
  const id = (await repository.all()).get('fleet_id');
  if (!id) throw new Error('the fleet table holds no fleet_id');
  return id;
}
