import { keyRefreshSeconds, retiredKeyGraceMs } from '../identity/signing-key-store.ts';
import { DomainError } from '#shared/errors.ts';
import type { CliCommand } from './command.ts';
import { assertExistingPlatform } from './platform-data-dir.ts';

/**
 * `vixpay keys rotate`: a new JWT signing key for every instance of the platform (they take it up
 * within `keyRefreshSeconds`, verify it at once); the keys signing until now keep verifying, and stay
 * in `/.well-known/jwks.json`, until the tokens they signed have expired: each instance counts that
 * from the retirement with its own JWT_TTL_SECONDS, whatever this command's environment says. Needs only the database and
 * the master key (it must be the fleet's): no chain, no running server.
 */
export const keysRotateCommand: CliCommand = {
  summary: 'new JWT signing key for every instance; the old one verifies until its tokens expire',
  options: {},
  run: async ({ config, deps }) => {
    assertExistingPlatform(config);
    const rotation = await deps.rotateSigningKeys(config);
    return {
      kid: rotation.kid,
      retired: rotation.retired,
      retiredAt: new Date(rotation.retiredAt).toISOString(),
      retiredVerifyFor: `JWT_TTL_SECONDS + ${retiredKeyGraceMs(0) / 1000} s of each serving instance`,
      signingWithin: `${keyRefreshSeconds} s on every running instance`,
    };
  },
};

/**
 * `vixpay keys migrate --to pkcs11 [--rotate-wrapping-key]`: every key of a platform that ran with file
 * custody into the HSM token (docs/operations.md "Moving a platform of file custody into the HSM"):
 * the relayer's lanes (the same accounts, as token objects), the wallets' keys (wrapped by the token),
 * every secret the master key sealed (sealed anew by the token's key), then `master.key` and
 * `relayer.key` removed. Each item checked before it replaces the old one (a signature, or the
 * secret opened in the token); a run stopped anywhere is taken up by running it again. Run it with the
 * platform's own settings (file custody's, KEY_CUSTODY=file or pkcs11) and the token's PKCS11_*, the
 * platform stopped; then start it with KEY_CUSTODY=pkcs11. `--rotate-wrapping-key` generates a new
 * wallet wrapping key first and re-wraps every wallet under it.
 */
export const keysMigrateCommand: CliCommand = {
  summary: 'move every key of the platform into the HSM token (--to pkcs11 [--rotate-wrapping-key]); resumable',
  options: { to: { type: 'string' }, 'rotate-wrapping-key': { type: 'boolean' } },
  run: async ({ config, deps, values }) => {
    if (values.to !== 'pkcs11') throw new DomainError('request.invalid', 'keys migrate needs --to pkcs11 (the only custody keys move to)');
    // Its database is what a platform needs here: its key files may be gone already (a run taken up again).
    assertExistingPlatform({ ...config, keyCustody: 'pkcs11' });
    const result = await deps.migrateKeys(config, { rotate: values['rotate-wrapping-key'] === true });
    const { wallets, secrets } = result;
    const failures = [
      ...wallets.failed.map((failure) => `wallet ${failure.address}: ${failure.reason}`),
      ...secrets.failed.map((failure) => `${failure.what} ${failure.id}: ${failure.reason}`),
    ];
    if (failures.length > 0) {
      throw new DomainError('request.invalid', `${wallets.rewrapped} wallets moved under ${wallets.wrappingKey}; ${failures.length} left as they were, which did not open or sign as theirs: ${failures.join('; ')}`);
    }
    return {
      lanes: result.lanes, wrappingKey: wallets.wrappingKey, rewrapped: wallets.rewrapped, movedByOthers: wallets.movedByOthers,
      resealed: secrets.resealed, remaining: wallets.remaining + secrets.remaining, removed: result.removed,
      ...(result.unset.length > 0 && { unset: result.unset }),
      next: result.complete
        ? `every key is in the token: start the platform with KEY_CUSTODY=pkcs11 and the same PKCS11_* settings${result.unset.length > 0 ? `, without ${result.unset.join(' and ')}` : ''}`
        : 'keys were made under file custody meanwhile (an instance still running?): stop it and run the command again',
    };
  },
};
