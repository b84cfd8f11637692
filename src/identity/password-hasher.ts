import { randomBytes } from 'node:crypto';
import { hash, parseOptions, verify, type Algorithm, type Options } from '@node-rs/argon2';

/**
 * OWASP Password Storage Cheat Sheet, argon2id minimum: m=19456 KiB (19 MiB), t=2, p=1.
 * `Algorithm` is an ambient const enum that isolated modules cannot read, hence the literal 2.
 */
export const passwordHashPolicy = {
  algorithm: 2 as Algorithm, // Argon2id
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
} as const satisfies Options;

export interface PasswordHasher {
  /** PHC string (`$argon2id$v=19$m=19456,t=2,p=1$...`); computed on the libuv pool, off the event loop. */
  hash(password: string): Promise<string>;
  /**
   * True when `password` matches `storedHash`. Without a stored hash (unknown user) it still
   * verifies against a dummy hash and answers false, so the time taken does not tell which ids exist.
   */
  verify(storedHash: string | undefined, password: string): Promise<boolean>;
  /** True when a stored hash was made with other parameters than the current policy. */
  needsRehash(storedHash: string): boolean;
}

/** Passwords are compared after NFKC normalisation (NIST SP 800-63B), so composed and decomposed input match. */
function normalise(password: string): string {
  return password.normalize('NFKC');
}

export function createPasswordHasher(policy: Options = passwordHashPolicy): PasswordHasher {
  let dummyHash: Promise<string> | undefined;
  const dummy = () => (dummyHash ??= hash(randomBytes(32).toString('base64url'), policy));

  return {
    hash: (password) => hash(normalise(password), policy),
    async verify(storedHash, password) {
      if (storedHash === undefined) {
        await verify(await dummy(), normalise(password)).catch(() => false);
        return false;
      }
      try {
        return await verify(storedHash, normalise(password));
      } catch {
        return false; // a malformed stored hash never authenticates
      }
    },
    needsRehash(storedHash) {
      try {
        const used = parseOptions(storedHash);
        return used.algorithm !== policy.algorithm || used.memoryCost !== policy.memoryCost
          || used.timeCost !== policy.timeCost || used.parallelism !== policy.parallelism;
      } catch {
        return true;
      }
    },
  };
}
