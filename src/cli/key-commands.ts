import { keyRefreshSeconds, retiredKeyGraceMs } from '../identity/signing-key-store.ts';
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
