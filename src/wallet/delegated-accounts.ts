import type { Address } from 'viem';
import { LRUCache } from 'lru-cache';
import type { NetworkName } from '#shared/networks.ts';

/**
 * The accounts this process saw delegated to their network's VixpayAccount, so that an account's
 * transfers after its first ask the node nothing more (an `eth_getCode` each otherwise). A custodial
 * account never leaves that delegation by itself: only the platform holds its key. A chain that lost
 * the block carrying it (a node's recent blocks lost) is noticed where an item's outcome is read
 * (resolve-account-transfer.ts), which forgets the account; its next transfer carries the delegation again.
 * Bounded: past `max` accounts the least recently used is asked again.
 */
export interface DelegatedAccounts {
  has(network: NetworkName, contract: Address, account: Address): boolean;
  add(network: NetworkName, contract: Address, account: Address): void;
  forget(network: NetworkName, contract: Address, account: Address): void;
}

export function createDelegatedAccounts(max = 100_000): DelegatedAccounts {
  const seen = new LRUCache<string, true>({ max });
  const key = (network: NetworkName, contract: Address, account: Address) => `${network}:${contract}:${account}`.toLowerCase();
  return {
    has: (...at) => seen.has(key(...at)),
    add(...at) { seen.set(key(...at), true); },
    forget(...at) { seen.delete(key(...at)); },
  };
}
