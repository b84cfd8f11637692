import type { Address } from 'viem';
import type { TokenSession } from './pkcs11-token.ts';

/** A wallet key unwrapped in the token: the session object's handle (never the key), for one connection. */
export interface Unwrapped {
  generation: number;
  /** The unwrapping in flight, then its handle: signatures of the same key meanwhile wait for it instead of unwrapping again. */
  handle: Promise<Buffer>;
  /** Set once unwrapped: what eviction destroys. */
  object?: Buffer | undefined;
  /** Signatures using it now: an evicted key is destroyed when the last of them ends. */
  users: number;
  evicted: boolean;
  /** The address a signature of it recovered to, and its public key: the next ones are compared to the key, unhashed. */
  signer?: { address: Address; publicKey: Uint8Array } | undefined;
}

/**
 * The wallet keys kept unwrapped in the token after their signature, by stored form, least recently
 * used first, for one connection (a new connection starts empty: the token destroyed the old one's
 * session objects with its sessions). Beyond `keep` the least recently used is destroyed once no
 * signature uses it; 0 destroys each after its signature.
 */
export function unwrappedKeys(keep: number, unwrap: (session: TokenSession, label: string, wrapped: Buffer) => Promise<Buffer>) {
  let kept = new Map<string, Unwrapped>();
  let keptGeneration = -1;
  /** Destroys an evicted key no signature uses any more, on a session of its connection (a lost one took it already). */
  const destroy = (session: TokenSession, entry: Unwrapped) => {
    if (!entry.object || entry.generation !== session.generation) return;
    try {
      session.p11.C_DestroyObject(session.handle, entry.object);
    } catch { /* the connection is going: its session objects go with it */ }
    entry.object = undefined;
  };
  return {
    /** The key of `sealed` unwrapped in the token, counted as used until `release`: kept, or unwrapped now and kept. */
    acquire(session: TokenSession, sealed: string, label: string, wrapped: Buffer): Unwrapped {
      if (keptGeneration !== session.generation) {
        kept = new Map();
        keptGeneration = session.generation;
      }
      let entry = kept.get(sealed);
      if (entry) {
        kept.delete(sealed); // moved to the most recently used end
      } else {
        const made: Unwrapped = { generation: session.generation, handle: Promise.resolve(Buffer.alloc(0)), users: 0, evicted: false };
        made.handle = unwrap(session, label, wrapped).then((object) => (made.object = object));
        // A failed unwrapping is not kept (its signatures get the error, and the next one tries again).
        made.handle.catch(() => {
          if (kept.get(sealed) === made) kept.delete(sealed);
        });
        entry = made;
      }
      kept.set(sealed, entry);
      entry.users += 1;
      for (const [oldest, evicted] of kept) {
        if (kept.size <= keep) break;
        kept.delete(oldest);
        evicted.evicted = true;
        if (evicted.users === 0) destroy(session, evicted);
      }
      return entry;
    },
    release(session: TokenSession, entry: Unwrapped): void {
      entry.users -= 1;
      if (entry.evicted && entry.users === 0) destroy(session, entry);
    },
    /** A key whose handle the token does not know any more (an HSM that lost its session objects): unwrapped anew next time. */
    forget(sealed: string, entry: Unwrapped): void {
      if (kept.get(sealed) === entry) kept.delete(sealed);
    },
  };
}
