import type * as Pkcs11js from 'pkcs11js';
import { createRequire } from 'node:module';
import { DomainError } from '#shared/errors.ts';

// A PKCS#11 connection's parts for src/chain/pkcs11-token.ts: the binding, what the token's answers
// mean, and its sessions lent one operation at a time.

/** One logged-in session: use it for one operation at a time (`Pkcs11Token.run` lends it). */
export interface TokenSession {
  readonly p11: Pkcs11js.PKCS11;
  readonly handle: Buffer;
  /** Grows at each new connection: object handles found under an older one are not valid any more. */
  readonly generation: number;
}

/** The binding, loaded on first use only: file custody (the default) needs neither it nor an HSM. */
let binding: typeof Pkcs11js | undefined;
export function pkcs11js(): typeof Pkcs11js {
  if (!binding) {
    try {
      binding = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
    } catch (cause) {
      throw new DomainError('custody.unavailable', 'the PKCS#11 binding (npm package pkcs11js) is not installed or did not build: run npm install with a C++ compiler', { cause });
    }
  }
  return binding;
}

/** Sessions open at once: signatures of different lanes run in parallel in the token (libuv threads). */
export const sessionCount = 4;

/** The token's answers that mean the connection is gone, not that the request was wrong. */
const connectionLost = new Set([
  'CKR_SESSION_HANDLE_INVALID', 'CKR_SESSION_CLOSED', 'CKR_DEVICE_REMOVED', 'CKR_DEVICE_ERROR', 'CKR_TOKEN_NOT_PRESENT',
  'CKR_TOKEN_NOT_RECOGNIZED', 'CKR_SLOT_ID_INVALID', 'CKR_CRYPTOKI_NOT_INITIALIZED', 'CKR_USER_NOT_LOGGED_IN',
  'CKR_GENERAL_ERROR', 'CKR_FUNCTION_FAILED', 'CKR_OBJECT_HANDLE_INVALID', 'CKR_KEY_HANDLE_INVALID', 'CKR_DEVICE_MEMORY',
]);

export function isConnectionLost(error: unknown): boolean {
  return error instanceof Error && connectionLost.has(error.message);
}

/** What the token said, for the operator: the PKCS#11 return code or the loader's message, never a PIN. */
export function reason(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]!.slice(0, 200) : String(error);
}

export interface Connection {
  p11: Pkcs11js.PKCS11;
  slot: Buffer;
  free: TokenSession[];
  /** The session of `runNow`, used in line only (one call at a time, on the event loop); replaced after a failed call. */
  own: TokenSession;
  open(): Buffer;
  waiting: Array<(session: TokenSession) => void>;
  generation: number;
  closed: boolean;
  /** Sessions lent out: a dropped connection is finalised only once none is (a call may still be in the library). */
  lent: number;
  /** Set once dropped: finalises the library, when the last lent session comes back. */
  retire?: (() => void) | undefined;
}

export function disconnect(p11: Pkcs11js.PKCS11): void {
  for (const step of [() => p11.C_Finalize(), () => p11.close()]) {
    try { step(); } catch { /* already gone */ }
  }
}


/** A free session (counted as lent), or one handed over by giveBack (which counts it), or none once dropped. */
export async function borrow(conn: Connection): Promise<TokenSession | undefined> {
  const session = conn.free.pop();
  if (!session) return new Promise((resolve) => conn.waiting.push(resolve));
  conn.lent += 1;
  return session;
}

export function giveBack(conn: Connection, session: TokenSession): void {
  conn.lent -= 1;
  if (conn.closed) {
    if (conn.lent === 0) conn.retire?.();
    return;
  }
  const next = conn.waiting.shift();
  if (next) {
    conn.lent += 1;
    next(session);
  } else conn.free.push(session);
}
