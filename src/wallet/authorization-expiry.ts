import type { NetworkName } from '#shared/networks.ts';
import type { AuthorizationRecord } from '../store/authorization-repository.ts';
import type { WalletDeps } from './wallet-deps.ts';

/** How far a chain's block time may trail the wall clock. */
const clockDriftSeconds = 60n;
// Stryker disable next-line BooleanLiteral,ArrowFunction: equivalent (the value a failed write's catch answers is never read)
const unrecorded = () => false;

/**
 * Ends an authorization or account transfer that the chain has not executed `expired` once no block
 * can execute it any more: the next block's time is at least the head's, and (on a live chain) at
 * least the wall clock less some drift, and past `validBefore` the contract refuses it for good (an
 * account transfer's signed deadline is validBefore − 1, the last second it executes in). Undefined
 * while it still can.
 */
export async function expiredByNow(deps: Pick<WalletDeps, 'authorizations' | 'chains' | 'clock'>, network: NetworkName,
  record: AuthorizationRecord): Promise<{ status: 'expired' } | undefined> {
  const head = await deps.chains[network].client.getBlock({ blockTag: 'latest' });
  const wallClock = BigInt(Math.floor(deps.clock() / 1000)) - clockDriftSeconds;
  const chainTime = head.timestamp > wallClock ? head.timestamp : wallClock;
  if (chainTime < BigInt(record.validBefore)) return undefined;
  await deps.authorizations.finish(record.nonce, 'expired', {}, deps.clock()).catch(unrecorded);
  return { status: 'expired' };
}
