import { addressOfDid } from './did-identifiers.ts';

/** The user a VP holder logs in as, or undefined when none is bound to it. */
export type FindUserIdByHolder = (holderDid: string) => Promise<string | undefined>;

/** The users' records the binding reads (store/holder-lookup.ts). */
export interface HolderLookup {
  /** The user whose recorded `did` is this DID. */
  userIdByDid(did: string): Promise<string | undefined>;
  /** Up to two users whose custodial wallet is this address. */
  userIdsByWallet(address: string): Promise<string[]>;
}

/**
 * The binding of a holder DID to a user (docs/did-api.md "VP login"): the user whose `did` is that
 * DID when one was recorded, otherwise the user whose custodial wallet address is the address of
 * `did:ethr:<address>`. create-did proves the wallet's secretKey and create-vc only issues to the
 * caller's own wallet DID, so the DID and the user's wallet are one key.
 */
export function createHolderBinding(users: HolderLookup): FindUserIdByHolder {
  return async (holderDid) => {
    const byDid = await users.userIdByDid(holderDid);
    if (byDid) return byDid;
    const address = addressOfDid(holderDid);
    if (!address) return undefined;
    const ids = await users.userIdsByWallet(address);
    // A wallet shared by two users binds to neither: a login must name exactly one user.
    return ids.length === 1 ? ids[0] : undefined;
  };
}
