import type { LocalAccount } from 'viem';
import type { ChainClients } from './chain-clients.ts';
import type { Logger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';

/** A lane needs this much native balance to be used on a node we do not run (gas of a full batch, roughly). */
const laneMinimumGasWei = 10n ** 16n;

/** One relayer account and the settlement batches it carries: each lane has its own nonce sequence. */
export interface Lane {
  account: LocalAccount;
  /** Batches of this lane being journaled and broadcast (their receipt waits do not count). */
  preparing: number;
  /** Batches sent and not answered yet. */
  inFlight: number;
}

/**
 * The lanes usable on each network, learnt once per network (again after a failure): on a node we
 * do not run, only those with gas money (the first, the platform account, always).
 */
export function createLanes(deps: { chains: ChainClients; lanes: readonly LocalAccount[]; logger: Logger }): (network: NetworkName) => Promise<Lane[]> {
  const { chains, logger } = deps;
  const lanesByNetwork = new Map<NetworkName, Promise<Lane[]>>();
  return (network) => {
    let lanes = lanesByNetwork.get(network);
    if (!lanes) {
      const newLane = (account: LocalAccount): Lane => ({ account, preparing: 0, inFlight: 0 });
      lanes = (async () => {
        const [first, ...others] = deps.lanes;
        if (chains[network].managed || !first) return deps.lanes.map(newLane);
        const funded = await Promise.all(others.map(async (account) =>
          (await chains[network].client.getBalance({ address: account.address }).catch(() => 0n)) >= laneMinimumGasWei));
        const unfunded = others.filter((_, i) => !funded[i]).map((a) => a.address);
        if (unfunded.length > 0) logger.warn({ network, unfunded }, 'relayer lanes without gas are not used: fund them');
        return [first, ...others.filter((_, i) => funded[i])].map(newLane);
      })();
      lanesByNetwork.set(network, lanes);
      lanes.catch(() => lanesByNetwork.delete(network));
    }
    return lanes;
  };
}

/** A lane not preparing a batch, the one with the fewest batches in flight; none when all are preparing. */
export function freeLane(lanes: Lane[]): Lane | undefined {
  let best: Lane | undefined;
  for (const lane of lanes) {
    if (lane.preparing === 0 && (!best || lane.inFlight < best.inFlight)) best = lane;
  }
  return best;
}
