import { numberToHex, type Address } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';
import { accountNonceKeyPrefix, accountTransferKeyPrefix, counterNonceLimit, type CountedNonce } from '../store/authorization-repository.ts';

/**
 * The EIP-3009 nonce of a custodial account's authorization (docs/decisions/settlement.md, "Counter
 * nonces"): a counter per network, token and account, the next one above both the account's highest
 * (`previous`, read under the account's lock by `reserveCounted`) and the clock in microseconds.
 *
 * It is 7 bytes instead of a random 32, so a settlement batch carries 25 bytes less per transfer
 * (what an OP-stack chain's L1 data fee is priced on). Unique forever for its account:
 * - above every nonce the account's rows hold, chosen and inserted in one transaction under the
 *   account's lock (and the row key, which holds it, is unique): no two reservations get one nonce;
 * - a row whose signature may have left the process is never deleted (only a reservation never
 *   journaled is, `release`), so every nonce ever sent is at or below the account's highest;
 * - the clock's microseconds keep it above every nonce issued before now even where the rows are
 *   gone (a restored backup, the key on another platform): an account would have to be given a
 *   thousand nonces in a millisecond to run ahead of the clock, and each takes a database transaction.
 * Its row is keyed by `authorizationKey` (network, token, payer, nonce), as an outside payer's is.
 */
export function nextAuthorizationNonce(previous: bigint | undefined, nowMs: number): bigint {
  const clock = BigInt(Math.floor(nowMs)) * 1000n;
  const next = previous === undefined || previous < clock ? clock : previous + 1n;
  if (next >= counterNonceLimit) throw new Error(`no counter nonce is left above ${previous}`);
  return next;
}

/** The counted nonce of `from`'s next authorization in `token`, and its row's key. */
export function countedNonce(network: NetworkName, token: Address, from: Address, previous: bigint | undefined, nowMs: number): CountedNonce {
  const chainNonce = numberToHex(nextAuthorizationNonce(previous, nowMs), { size: 32 });
  return { chainNonce, nonce: authorizationKey(network, token, from, chainNonce) };
}

/**
 * The nonce of a custodial account's next account transfer (a token without EIP-3009, moved through
 * VixpayAccount: docs/decisions/tokens.md): dense, one sequence per account and network across every
 * token, 0 first, then the highest the account's rows hold + 1 (`previous`, read under the account's
 * lock by `reserveAccountNonce`). Dense, because the contract keeps 256 nonces to a storage word: an
 * account writes a fresh word (22,100 gas instead of 5,000) once per 256 transfers.
 *
 * Never given twice: the row's key is `accountNonceKeyPrefix(network, account)` and the nonce, and
 * that key is the table's primary key, so a second row with one nonce cannot be inserted (the
 * reservation answers `duplicate`); a row whose signature may have left the process is never deleted
 * (only a reservation never journaled is, `release`: its signature was never sent), so the highest
 * row is at or above every nonce ever sent. On chain a nonce executes once whatever is signed with it
 * (VixpayAccount's bitmap); a nonce found used on chain that no row of ours executed (the rows were
 * lost: a restored backup) is an item skipped, never a second transfer.
 */
export function accountNonce(network: NetworkName, from: Address, previous: bigint | undefined): CountedNonce {
  const chainNonce = numberToHex(previous === undefined ? 0n : previous + 1n, { size: 32 });
  return { chainNonce, nonce: `${accountNonceKeyPrefix(network, from)}${chainNonce}` };
}

/** Whether an `authorizations` row is an account transfer's (its key is an `accountNonce` one), not an EIP-3009 authorization's. */
export const isAccountTransferRow = (record: { network: string; nonce: string }): boolean => record.nonce.startsWith(accountTransferKeyPrefix(record.network));
