import { keyRefreshSeconds, retiredKeyGraceMs } from '../identity/signing-key-store.ts';
import { DomainError } from '#shared/errors.ts';
import type { CliCommand } from './commands.ts';
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
 * `vixpay keys migrate --to pkcs11 [--rotate-wrapping-key]`: every custodial wallet's key moved under
 * the HSM token's wrapping key: those sealed with the master key (file custody) wrapped by the token,
 * those under an older wrapping key wrapped again inside it; `--rotate-wrapping-key` generates a new
 * wrapping key first. One wallet at a time, each checked by a signature before it replaces the old
 * form: a run stopped anywhere is taken up by running it again. Needs the database, the master key and
 * the token's settings (KEY_CUSTODY=pkcs11, PKCS11_*); the platform may keep serving meanwhile.
 */
export const keysMigrateCommand: CliCommand = {
  summary: 'move every wallet key under the HSM token\'s wrapping key (--to pkcs11 [--rotate-wrapping-key]); resumable',
  options: { to: { type: 'string' }, 'rotate-wrapping-key': { type: 'boolean' } },
  run: async ({ config, deps, values }) => {
    if (values.to !== 'pkcs11') throw new DomainError('request.invalid', 'keys migrate needs --to pkcs11 (the only custody wallets move to)');
    assertExistingPlatform(config);
    const result = await deps.migrateWalletKeys(config, { rotate: values['rotate-wrapping-key'] === true });
    if (result.failed.length > 0) {
      const list = result.failed.map((failure) => `${failure.address}: ${failure.reason}`).join('; ');
      throw new DomainError('request.invalid', `${result.rewrapped} wallets moved under ${result.wrappingKey}; ${result.failed.length} left as they were, which did not sign for their address: ${list}`);
    }
    return {
      wrappingKey: result.wrappingKey, rewrapped: result.rewrapped, movedByOthers: result.movedByOthers, remaining: result.remaining,
      ...(result.remaining > 0 && { next: 'wallets were made under another key meanwhile (an instance still on file custody?): run the command again' }),
    };
  },
};
