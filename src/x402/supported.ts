import type { SupportedResponse } from '@x402/core/types';
import { networkNames } from '#shared/networks.ts';
import type { X402Deps } from './x402-deps.ts';
import { x402NetworkOf } from './x402-networks.ts';
import { acceptedAssets } from './x402-assets.ts';
import { paymentIdentifierKey } from './payment-identifier.ts';

/**
 * GET /x402/supported: scheme `exact`, x402 version 2, on each of our networks (`eip155:<chain id>`),
 * with the assets settled there and the EIP-712 name and version each is signed with (`extra.assets`);
 * the signers are the relayer's lanes (they pay the gas); `extensions`: `payment-identifier` (payment-identifier.ts)
 * when the facilitator keeps payment ids.
 */
export async function supportedKinds(deps: Pick<X402Deps, 'chains' | 'contracts' | 'settlementTokens' | 'relayer' | 'paymentIds'>): Promise<SupportedResponse> {
  const kinds = await Promise.all(networkNames.map(async (network) => ({
    x402Version: 2, scheme: 'exact', network: x402NetworkOf(deps.chains, network),
    extra: { assets: (await acceptedAssets(deps, network)).map(({ address, symbol, decimals, name, version }) => ({ address, symbol, decimals, name, version })) },
  })));
  return { kinds, extensions: deps.paymentIds ? [paymentIdentifierKey] : [], signers: { 'eip155:*': [...deps.relayer.lanes] } };
}
