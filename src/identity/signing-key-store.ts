import { existsSync, readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import type { Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import { generateSigningJwk, signingKeySetFromJwks, type SigningKeySet } from './signing-keys.ts';
import type { SigningKeyRepository, SigningKeyRow } from '../store/signing-key-repository.ts';

/**
 * The JWT signing keys of every instance, in the database (`jwt_signing_keys`), each private JWK
 * sealed with the master key. The newest key not retired signs; `vixpay keys rotate` adds a new one
 * and retires the others, which keep verifying (and stay in `/.well-known/jwks.json`) until every
 * token they may have signed has expired. Instances reload the keys every `keyRefreshSeconds`, and
 * at once for each JWKS request and each token naming a key they do not know yet.
 */
export interface SigningKeySource {
  /** The keys as last loaded. */
  current(): SigningKeySet;
  /**
   * Resolves once `current()` holds what the database held when this was called: a load that
   * began after the call. Calls that arrive while a load runs share the next one (one query for
   * however many wait), so a flood of JWKS requests or unknown kids runs one load at a time.
   */
  refresh(): Promise<void>;
  close(): void;
}

export const keyRefreshSeconds = 30;

export interface SigningKeyStoreDeps {
  repository: SigningKeyRepository;
  vault: KeyVault;
  clock: Clock;
}

/** How long a retired key keeps verifying: a token's lifetime, plus instances still signing with it until their next reload. */
export const retiredKeyGraceMs = (ttlSeconds: number) => (ttlSeconds + 2 * keyRefreshSeconds + 5) * 1000;

/**
 * Until when this instance keeps a retired key: `verify_until` as the rotation wrote it, and at least
 * this instance's own token lifetime (plus reload slack) after the retirement. The rotation may run
 * anywhere (`vixpay keys rotate` with another JWT_TTL_SECONDS than the servers'): the instances that
 * issued the tokens are the ones that know how long they live.
 */
const verifiesUntil = (row: SigningKeyRow, ttlSeconds: number): number =>
  Math.max(Number(row.verify_until ?? 0), Number(row.retired_at ?? 0) + retiredKeyGraceMs(ttlSeconds));

const isLive = (row: SigningKeyRow, ttlSeconds: number, now: number) => row.retired_at === null || verifiesUntil(row, ttlSeconds) > now;

/** The key set of `rows` at `now`: the newest active key signs; active and not-yet-expired retired keys verify. */
async function keySetFromRows(rows: readonly SigningKeyRow[], vault: KeyVault, now: number, ttlSeconds: number): Promise<SigningKeySet> {
  const live = rows.filter((row) => isLive(row, ttlSeconds, now));
  const active = live.find((row) => row.retired_at === null);
  if (!active) throw new Error('no active JWT signing key in the database (jwt_signing_keys): run `vixpay keys rotate`');
  const ordered = [active, ...live.filter((row) => row !== active)];
  const jwks = ordered.map((row, index) => {
    let jwk: JWK;
    try {
      jwk = JSON.parse(vault.decrypt(row.private_jwk_enc)) as JWK;
    } catch (error) {
      throw new Error(`cannot open JWT signing key ${row.kid} with this instance's master key (MASTER_KEY differs from the fleet's?)`, { cause: error });
    }
    // Only the signer needs its private part in memory.
    return index === 0 ? jwk : { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: jwk.kid } as JWK;
  });
  return signingKeySetFromJwks(jwks);
}

const rowOf = (jwk: JWK, vault: KeyVault, now: number, retired?: { verifyUntil: number }): SigningKeyRow => ({
  kid: jwk.kid as string,
  public_jwk: JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: jwk.kid }),
  private_jwk_enc: vault.encrypt(JSON.stringify(jwk)),
  created_at: now,
  retired_at: retired ? now : null,
  verify_until: retired ? retired.verifyUntil : null,
});

/**
 * Opens the fleet's signing keys; the caller holds the startup lock, so the first instance alone
 * creates them: from `importFile` (`DATA_DIR/jwt-signing-key.json` of an install from before the
 * keys moved to the database, first key signing, the others verifying for `ttlSeconds`), else a new
 * Ed25519 key. A key file whose signing key is not among the fleet's is refused: that instance's
 * tokens would be refused by every other.
 */
export async function openSigningKeys(deps: SigningKeyStoreDeps & { importFile: string; ttlSeconds: number }): Promise<SigningKeySource> {
  const { repository, vault, clock } = deps;
  let rows = await repository.list();
  const fileKeys = existsSync(deps.importFile) ? readKeyFile(deps.importFile) : undefined;
  if (rows.length === 0) {
    const now = clock();
    const [first, ...older] = fileKeys ?? [await generateSigningJwk()];
    const verifyUntil = now + retiredKeyGraceMs(deps.ttlSeconds);
    // Validated (kid = thumbprint, the first with its private part) before anything is written.
    await signingKeySetFromJwks([first as JWK, ...older]);
    for (const jwk of older) await repository.insert(rowOf(jwk, vault, now, { verifyUntil }));
    await repository.insert(rowOf(first as JWK, vault, now));
    rows = await repository.list();
  } else if (fileKeys?.[0]?.kid && !rows.some((row) => row.kid === fileKeys[0]?.kid)) {
    throw new Error(`${deps.importFile} holds JWT signing key ${fileKeys[0].kid}, which is not one of the fleet's keys (jwt_signing_keys): `
      + 'tokens it signs would be refused by the other instances; remove the file (the fleet\'s keys are in the database)');
  }
  let keys = await keySetFromRows(rows, vault, clock(), deps.ttlSeconds);
  // The rows and the time a key set was made of: unchanged, the same set (no decryption again).
  const shapeOf = (list: readonly SigningKeyRow[], now: number) =>
    JSON.stringify(list.map((row) => [row.kid, row.retired_at, row.verify_until, isLive(row, deps.ttlSeconds, now)]));
  let shape = shapeOf(rows, clock());
  const load = async () => {
    const now = clock();
    const list = await repository.list();
    const next = shapeOf(list, now);
    if (next === shape) return;
    keys = await keySetFromRows(list, vault, now, deps.ttlSeconds);
    shape = next;
  };
  // One load at a time, and one queued behind it for every call that arrives meanwhile (a load
  // already running may have read before the call: `vixpay keys rotate` commits in another process).
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    if (!running) {
      running = load().finally(() => { running = undefined; });
      return running;
    }
    queued ??= running.catch(() => undefined).then(() => {
      queued = undefined;
      return refresh();
    });
    return queued;
  };
  const timer = setInterval(() => { refresh().catch(() => undefined); }, keyRefreshSeconds * 1000);
  timer.unref();
  return {
    current: () => keys,
    refresh,
    close: () => clearInterval(timer),
  };
}

function readKeyFile(file: string): JWK[] {
  let parsed: { keys?: unknown };
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as { keys?: unknown };
  } catch (error) {
    throw new Error(`cannot read JWT signing keys from ${file}`, { cause: error });
  }
  if (!Array.isArray(parsed.keys) || parsed.keys.length === 0) throw new Error(`${file} must hold {"keys": [JWK, ...]}`);
  return parsed.keys as JWK[];
}

export interface RotationResult {
  /** The new signing key. */
  kid: string;
  /** Keys that now only verify. */
  retired: string[];
  /** Epoch ms: when they were retired. */
  retiredAt: number;
  /** Epoch ms: the floor written in `verify_until` (each instance keeps them at least its own token lifetime). */
  verifyUntil: number;
}

/**
 * A new signing key for every instance (each takes it up within `keyRefreshSeconds`); the keys
 * signing until now keep verifying for a token lifetime and that reload interval: each instance
 * counts its own lifetime from `retired_at`, and `ttlSeconds` here (the rotating process's) only
 * sets the floor written in `verify_until`.
 */
export async function rotateSigningKeys(deps: SigningKeyStoreDeps & { ttlSeconds: number }): Promise<RotationResult> {
  const before = await deps.repository.list();
  const active = before.filter((row) => row.retired_at === null).map((row) => row.kid);
  // Proves this master key opens the current keys before a key sealed with it is added.
  if (before.length > 0) await keySetFromRows(before, deps.vault, deps.clock(), deps.ttlSeconds);
  const now = deps.clock();
  const jwk = await generateSigningJwk();
  const verifyUntil = now + retiredKeyGraceMs(deps.ttlSeconds);
  await deps.repository.insert(rowOf(jwk, deps.vault, now));
  await deps.repository.retireAllBut(jwk.kid as string, now, verifyUntil);
  return { kid: jwk.kid as string, retired: active, retiredAt: now, verifyUntil };
}
