import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DomainError } from '#shared/errors.ts';
import { borrow, disconnect, giveBack, isConnectionLost, pkcs11js, reason, sessionCount, type Connection, type TokenSession } from './pkcs11-sessions.ts';

/** Where the token is: `KEY_CUSTODY=pkcs11`'s three settings. */
export interface TokenOptions {
  /** The HSM's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  module: string;
  /** The label of the token holding the keys. */
  tokenLabel: string;
  /** A file holding the user PIN, read at each login (a changed PIN needs no restart). */
  pinFile: string;
}

export type { TokenSession } from './pkcs11-sessions.ts';

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
