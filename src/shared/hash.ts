import { createHash, timingSafeEqual } from 'node:crypto';

/** Lower-case hex SHA-256 of a UTF-8 string: the hash of docs/interfaces.md#key-scheme's key scheme. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Constant-time comparison of two strings (case-sensitive). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
