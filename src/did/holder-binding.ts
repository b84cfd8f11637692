import type { Db } from '../store/db.ts';
import { addressOfDid } from './did-identifiers.ts';

/** The user a VP holder logs in as, or undefined when none is bound to it. */
export type FindUserIdByHolder = (holderDid: string) => Promise<string | undefined>;

/**
 * The binding of a holder DID to a user (docs/did-api.md "VP login"): the user whose `did` is that
 * DID when one was recorded, otherwise the user whose custodial wallet address is the address of
 * `did:ethr:<address>`. create-did proves the wallet's secretKey and create-vc only issues to the
 * caller's own wallet DID, so the DID and the user's wallet are one key.
 */
export function createHolderBinding(db: Db): FindUserIdByHolder {
  return async (holderDid) => {
    const byDid = await db.selectFrom('users').select('id').where('did', '=', holderDid).executeTakeFirst();
    if (byDid) return byDid.id;
    const address = addressOfDid(holderDid);
    if (!address) return undefined;
    const rows = await db.selectFrom('users').select('id').where('wallet_address', '=', address).limit(2).execute();
    // A wallet shared by two users binds to neither: a login must name exactly one user.
    return rows.length === 1 ? rows[0]!.id : undefined;
  };
}
