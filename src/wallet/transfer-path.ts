import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import type { TransferPath } from '../store/settlement-token-repository.ts';
import type { ResolvedToken } from './token.ts';

/**
 * The one place that decides how a custodial account moves `token` on `network` (docs/decisions/tokens.md,
 * "Custodial VIXP on the account path"): through the account contract it delegates to (EIP-7702)
 * wherever the network's node runs it (`EIP7702_<NETWORK>`, on by default: every network we name has
 * it), for every token, those with EIP-3009 too (VIXP, USDC). An account transfer costs less gas than
 * the same token's EIP-3009 authorization: its nonce shares a storage word with 255 others instead of
 * writing a fresh slot, and it is a plain `transfer`; only an account's first one carries its
 * delegation. On a network without EIP-7702 a token with EIP-3009 takes that path, and one without it
 * cannot move (`vixpay token allow` refuses it there; this is the same refusal for one allowed before
 * the setting was turned off). x402 payers hold their own keys and always pay by EIP-3009 (src/x402).
 */
export function custodialTransferPath(network: NetworkName, token: Pick<ResolvedToken, 'symbol' | 'eip3009'>, eip7702: Readonly<Record<NetworkName, boolean>>): TransferPath {
  if (eip7702[network]) return 'account';
  if (token.eip3009) return 'eip3009';
  throw new DomainError('token.needs_eip7702', `${token.symbol} has no EIP-3009 and EIP7702_${network.toUpperCase()} is off: the platform cannot move it from custodial accounts`);
}
