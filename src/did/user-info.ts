import { DomainError } from '#shared/errors.ts';

/** A flat object of user facts that goes into `credentialSubject`. */
export type UserInfo = Record<string, string | number | boolean>;

export const userInfoLimits = {
  maxKeys: 32,
  keyMaxLength: 64,
  stringMaxLength: 1024,
} as const;

// Letters first: no `__proto__`, no JSON-LD keywords such as `@context`.
const keyPattern = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/**
 * Checks `userInfo` of create-vc: a flat object of 1 to 32 keys, each a name of letters, digits,
 * `_`, `.` and `-`, each value a string (up to 1024 characters), a finite number or a boolean.
 * `sub` and `id` are allowed but replaced by the holder DID (docs/interfaces.md#did-vc-and-vp: `credentialSubject` carries the
 * user info keys, `sub` and `id` = holder).
 */
export function validateUserInfo(value: unknown): UserInfo {
  const problem = (why: string) => new DomainError('request.invalid', `userInfo: ${why}`, { details: 'userInfo' });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw problem('must be an object');
  const entries = Object.entries(value);
  // A credential says something about its subject: did-jwt-vc refuses an empty credentialSubject.
  if (entries.length === 0) throw problem('must have at least one key');
  if (entries.length > userInfoLimits.maxKeys) throw problem(`at most ${userInfoLimits.maxKeys} keys`);
  const info: UserInfo = {};
  for (const [key, item] of entries) {
    if (key.length > userInfoLimits.keyMaxLength || !keyPattern.test(key)) {
      throw problem(`key "${key.slice(0, userInfoLimits.keyMaxLength)}" must be letters, digits, _ . - (starting with a letter, at most ${userInfoLimits.keyMaxLength})`);
    }
    if (typeof item === 'string') {
      if (item.length > userInfoLimits.stringMaxLength) throw problem(`${key}: at most ${userInfoLimits.stringMaxLength} characters`);
    } else if (typeof item === 'number') {
      if (!Number.isFinite(item)) throw problem(`${key}: not a finite number`);
    } else if (typeof item !== 'boolean') {
      throw problem(`${key}: must be a string, number or boolean`);
    }
    Object.defineProperty(info, key, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return info;
}
