import type { Db } from './db.ts';
import type { HolderLookup } from '../did/holder-binding.ts';

/** The users a VP holder DID may bind to (did/holder-binding.ts). */
export function createHolderLookup(db: Db): HolderLookup {
  return {
    async userIdByDid(did) {
      return (await db.selectFrom('users').select('id').where('did', '=', did).executeTakeFirst())?.id;
    },
    async userIdsByWallet(address) {
      return (await db.selectFrom('users').select('id').where('wallet_address', '=', address).limit(2).execute()).map((row) => row.id);
    },
  };
}
