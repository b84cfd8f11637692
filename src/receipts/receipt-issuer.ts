import { isNetworkName, type NetworkName } from '#shared/networks.ts';
import type { DidAgent } from '../did/did-agent.ts';
import type { SigningIdentity } from '../did/jwt-credentials.ts';

/** The signing identity of a DID whose key the agent holds (the system issuer). */
export async function signingIdentityOf(agent: DidAgent, did: string): Promise<SigningIdentity> {
  const identifier = await agent.didManagerGet({ did });
  const kid = identifier.controllerKeyId ?? identifier.keys[0]?.kid;
  if (!kid) throw new Error(`no key held for ${did}`);
  return { did: identifier.did, key: { kid } };
}

/** A network name read from our own tables. */
export function knownNetwork(network: string): NetworkName {
  if (!isNetworkName(network)) throw new Error(`unknown network ${network}`);
  return network;
}
