import { sql } from 'kysely';
import type { Store } from './db.ts';

/**
 * PostgreSQL session advisory locks, named per schema (`vixpay:<schema>:<name>`), so that the
 * instances of one platform coordinate while platforms in other schemas of the same database (test
 * runs, tenants) never wait for each other. Each lock lives on one connection reserved from the
 * store's pool until released; a process that dies loses its connection and with it its locks, at
 * once. On SQLite (one process per DATA_DIR) every lock is granted at once and does nothing.
 */
export interface HeldLock {
  release(): Promise<void>;
  /**
   * Resolves with the error when the lock's connection was lost (PostgreSQL restarted, the connection
   * terminated): the lock is then no longer held. Never resolves for a lock released or on SQLite.
   */
  lost: Promise<Error>;
}

export type LockMode = 'exclusive' | 'shared';

const noLock: HeldLock = { release: async () => undefined, lost: new Promise(() => undefined) };
/** How often a held lock's connection is checked: a lost connection took its lock with it. */
const heartbeatMs = 5000;

/** Waits for the exclusive lock `name` (e.g. `startup`: one instance at a time sets up the platform). */
export async function acquireLock(store: Store, name: string): Promise<HeldLock> {
  const held = await holdConnection(store, name, 'exclusive', false);
  if (!held) throw new Error(`advisory lock ${name} not granted`);
  return held;
}

/** The lock `name` in `mode` if nobody holds it in a conflicting mode now; otherwise undefined. */
export async function tryLock(store: Store, name: string, mode: LockMode): Promise<HeldLock | undefined> {
  return holdConnection(store, name, mode, true);
}

async function holdConnection(store: Store, name: string, mode: LockMode, tryOnly: boolean): Promise<HeldLock | undefined> {
  if (store.dialect !== 'postgres') return noLock;
  const granted = Promise.withResolvers<HeldLock | undefined>();
  const released = Promise.withResolvers<'released'>();
  const lost = Promise.withResolvers<Error>();
  const finished = store.db.connection().execute(async (connection) => {
    const key = sql`hashtextextended('vixpay:' || current_schema() || ${`:${name}`}, 0)`;
    const suffix = mode === 'shared' ? '_shared' : '';
    const lock = sql.raw(`pg_${tryOnly ? 'try_' : ''}advisory_lock${suffix}`);
    const unlock = sql.raw(`pg_advisory_unlock${suffix}`);
    // pg_advisory_lock* wait and answer nothing; pg_try_advisory_lock* answer whether they got it.
    const got = tryOnly
      ? (await sql<{ ok: boolean }>`select ${lock}(${key}) as ok`.execute(connection)).rows[0]?.ok === true
      : (await sql`select ${lock}(${key})`.execute(connection), true);
    if (!got) {
      granted.resolve(undefined);
      return;
    }
    granted.resolve({
      release: async () => {
        released.resolve('released');
        await finished.catch(() => undefined);
      },
      lost: lost.promise,
    });
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const beat = new Promise<'beat'>((resolve) => { timer = setTimeout(() => resolve('beat'), heartbeatMs); });
      const next = await Promise.race([released.promise, beat]);
      clearTimeout(timer);
      if (next === 'released') break;
      await sql`select 1`.execute(connection);
    }
    await sql`select ${unlock}(${key})`.execute(connection);
  });
  finished.catch((error: unknown) => {
    granted.reject(error);
    lost.resolve(error instanceof Error ? error : new Error(String(error)));
  });
  return granted.promise;
}
