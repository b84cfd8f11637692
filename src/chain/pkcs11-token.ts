import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Pkcs11js from 'pkcs11js';
import { DomainError } from '#shared/errors.ts';

/** Where the token is: `KEY_CUSTODY=pkcs11`'s three settings. */
export interface TokenOptions {
  /** The HSM's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  module: string;
  /** The label of the token holding the keys. */
  tokenLabel: string;
  /** A file holding the user PIN, read at each login (a changed PIN needs no restart). */
  pinFile: string;
}

/** One logged-in session: use it for one operation at a time (`Pkcs11Token.run` lends it). */
export interface TokenSession {
  readonly p11: Pkcs11js.PKCS11;
  readonly handle: Buffer;
  /** Grows at each new connection: object handles found under an older one are not valid any more. */
  readonly generation: number;
}

export interface Pkcs11Token {
  /**
   * Runs `work` on a free session of its own, connecting (loading the library, logging in) first when
   * needed. A lost connection (session closed, token removed, device error) is dropped and the work
   * run once more on a new one; a token that cannot be had throws DomainError `custody.unavailable`.
   */
  run<T>(work: (session: TokenSession) => Promise<T>): Promise<T>;
  /**
   * Runs synchronous `work` at once on the connection's own session for it (never lent to `run`: a
   * call made in line cannot wait for a free one). Without a connection (not made yet, or lost), or
   * when the connection is lost in `work`, throws DomainError `custody.unavailable` and connects anew
   * in the background: a later call works once the token is back.
   */
  runNow<T>(work: (session: TokenSession) => T): T;
  /** `/readyz`'s `custody` probe: resolves when a session on the token answers. */
  probe(): Promise<void>;
  close(): void;
}

/** The binding, loaded on first use only: file custody (the default) needs neither it nor an HSM. */
let binding: typeof Pkcs11js | undefined;
function pkcs11js(): typeof Pkcs11js {
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
const sessionCount = 4;

/** The token's answers that mean the connection is gone, not that the request was wrong. */
const connectionLost = new Set([
  'CKR_SESSION_HANDLE_INVALID', 'CKR_SESSION_CLOSED', 'CKR_DEVICE_REMOVED', 'CKR_DEVICE_ERROR', 'CKR_TOKEN_NOT_PRESENT',
  'CKR_TOKEN_NOT_RECOGNIZED', 'CKR_SLOT_ID_INVALID', 'CKR_CRYPTOKI_NOT_INITIALIZED', 'CKR_USER_NOT_LOGGED_IN',
  'CKR_GENERAL_ERROR', 'CKR_FUNCTION_FAILED', 'CKR_OBJECT_HANDLE_INVALID', 'CKR_KEY_HANDLE_INVALID', 'CKR_DEVICE_MEMORY',
]);

function isConnectionLost(error: unknown): boolean {
  return error instanceof Error && connectionLost.has(error.message);
}

/** What the token said, for the operator: the PKCS#11 return code or the loader's message, never a PIN. */
function reason(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]!.slice(0, 200) : String(error);
}

interface Connection {
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

/**
 * A PKCS#11 token through pkcs11js: a few logged-in sessions lent one operation at a time, and a
 * new connection made on demand after the old one was lost (no restart: the next call reconnects).
 * A library is initialised once per process (PKCS#11): open one token per module in a process.
 */
export function openPkcs11Token(options: TokenOptions): Pkcs11Token {
  let connection: Promise<Connection> | undefined;
  let generation = 0;
  let refusedPin: string | undefined;
  /** The previous connection's finalisation: the library is process-wide, so a new one initialises after it. */
  let retired: Promise<void> = Promise.resolve();
  /** The connection made last (closed or not). */
  let live: Connection | undefined;
  /** Set by close: runNow then connects no more. */
  let shut = false;

  async function connect(): Promise<Connection> {
    const lib = pkcs11js();
    const p11 = new lib.PKCS11();
    try {
      p11.load(options.module);
    } catch (error) {
      throw new DomainError('custody.unavailable', `the PKCS#11 library ${options.module} does not load (${reason(error)})`, { cause: error });
    }
    try {
      // Signatures run on libuv's threads, several sessions at once: the library must lock (NULL args would promise one thread).
      p11.C_Initialize({ flags: lib.CKF_OS_LOCKING_OK });
      const slot = p11.C_GetSlotList(true).find((candidate) => p11.C_GetTokenInfo(candidate).label.trim() === options.tokenLabel);
      if (!slot) throw new Error(`no token labelled "${options.tokenLabel}"`);
      const pin = readFileSync(options.pinFile, 'utf8').trim();
      // A PIN the token refused is not tried again until the file changes: an HSM locks its user
      // after a few wrong PINs, and every request would otherwise try once more.
      const pinHash = createHash('sha256').update(pin).digest('hex');
      if (pinHash === refusedPin) throw new Error(`the PIN in ${options.pinFile} was refused (CKR_PIN_INCORRECT): not tried again until the file changes`);
      const open = () => p11.C_OpenSession(slot, lib.CKF_SERIAL_SESSION | lib.CKF_RW_SESSION);
      const first = open();
      try {
        p11.C_Login(first, lib.CKU_USER, pin);
      } catch (error) {
        // Another application of this process already logged the token in: the login is per token.
        if (error instanceof Error && error.message === 'CKR_PIN_INCORRECT') refusedPin = pinHash;
        if (!(error instanceof Error && error.message === 'CKR_USER_ALREADY_LOGGED_IN')) throw error;
      }
      generation += 1;
      const handles = [first, ...Array.from({ length: sessionCount - 1 }, open)];
      return {
        p11, slot, free: handles.map((handle) => ({ p11, handle, generation })), own: { p11, handle: open(), generation }, open,
        waiting: [], generation, closed: false, lent: 0,
      };
    } catch (error) {
      disconnect(p11);
      throw new DomainError('custody.unavailable', `the PKCS#11 token "${options.tokenLabel}" is unavailable (${reason(error)})`, { cause: error });
    }
  }

  function disconnect(p11: Pkcs11js.PKCS11): void {
    for (const step of [() => p11.C_Finalize(), () => p11.close()]) {
      try { step(); } catch { /* already gone */ }
    }
  }

  function current(): Promise<Connection> {
    if (!connection) {
      connection = retired.then(connect).then((made) => (live = made));
      connection.catch(() => { connection = undefined; });
    }
    return connection;
  }

  /**
   * Forgets `lost` (when it is still the current connection): the next call connects anew, after the
   * library is finalised, which waits for the calls still running in it on other sessions.
   */
  function drop(lost: Connection): void {
    if (lost.closed) return;
    lost.closed = true;
    for (const resume of lost.waiting.splice(0)) resume(undefined as never);
    if (generation === lost.generation) connection = undefined;
    retired = new Promise((resolve) => {
      lost.retire = () => {
        lost.retire = undefined;
        disconnect(lost.p11);
        resolve();
      };
      if (lost.lent === 0) lost.retire();
    });
  }

  /** A free session (counted as lent), or one handed over by giveBack (which counts it), or none once dropped. */
  async function borrow(conn: Connection): Promise<TokenSession | undefined> {
    const session = conn.free.pop();
    if (!session) return new Promise((resolve) => conn.waiting.push(resolve));
    conn.lent += 1;
    return session;
  }

  function giveBack(conn: Connection, session: TokenSession): void {
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

  /** Whether the connection still answers on runNow's session (after a code that may mean either). */
  function answers(conn: Connection): boolean {
    try {
      conn.p11.C_GetSessionInfo(conn.own.handle);
      return true;
    } catch {
      return false;
    }
  }

  async function attempt<T>(work: (session: TokenSession) => Promise<T>): Promise<{ done: T } | { lost: unknown }> {
    const conn = await current();
    const session = await borrow(conn);
    if (!session) return { lost: new Error('connection closed while waiting') };
    try {
      return { done: await work(session) };
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      drop(conn);
      return { lost: error };
    } finally {
      giveBack(conn, session);
    }
  }

  return {
    async run(work) {
      const first = await attempt(work);
      if ('done' in first) return first.done;
      const second = await attempt(work);
      if ('done' in second) return second.done;
      throw new DomainError('custody.unavailable', `the PKCS#11 token "${options.tokenLabel}" is unavailable (${reason(second.lost)})`, { cause: second.lost });
    },
    runNow(work) {
      const conn = live && !live.closed ? live : undefined;
      const unavailable = (why: unknown) => {
        if (!shut) void current().catch(() => undefined);
        return new DomainError('custody.unavailable', `the PKCS#11 token "${options.tokenLabel}" is unavailable (${reason(why)})`, { cause: why });
      };
      if (!conn) throw unavailable(new Error('not connected'));
      try {
        return work(conn.own);
      } catch (error) {
        if (!isConnectionLost(error) || answers(conn)) {
          // The session still answers: the refusal was the call's (SoftHSM2 answers a GCM tag that does not
          // match with CKR_GENERAL_ERROR). Refused half-way, it may leave its operation active on the
          // session (SoftHSM2 does): a new session for the next.
          try {
            const fresh = conn.open();
            try { conn.p11.C_CloseSession(conn.own.handle); } catch { /* gone already */ }
            conn.own = { p11: conn.p11, handle: fresh, generation: conn.generation };
          } catch { /* the next call finds out */ }
          throw error;
        }
        drop(conn);
        throw unavailable(error);
      }
    },
    async probe() {
      await this.run(async ({ p11, handle }) => { p11.C_GetSessionInfo(handle); });
    },
    close() {
      shut = true;
      // One being made is dropped once made; the one made last at once (after its calls in flight).
      void connection?.then(drop, () => undefined);
      connection = undefined;
      if (live) drop(live);
    },
  };
}
