import type { NetworkName } from '#shared/networks.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { formatTokenAmount } from '#shared/amount.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { parseAddress } from './address.ts';
import { resolveToken } from './token.ts';

export interface GetBalanceParameters {
  address: string;
  contractAddress?: string;
}

export interface GetBalanceReturnType {
  balance: string;
  balanceRaw: string;
  tokenSymbol: string;
  contractAddress: string;
}

/** Token balance of any address, as a decimal string in token units and in base units. */
export async function getBalance(
  deps: Pick<WalletDeps, 'repo' | 'contracts' | 'chains'>,
  network: NetworkName,
  params: GetBalanceParameters,
): Promise<GetBalanceReturnType> {
  const address = parseAddress(params.address, 'address');
  const token = await resolveToken(deps, network, params.contractAddress);
  const units = await deps.chains[network].client.readContract({
    address: token.contractAddress, abi: vixpTokenAbi, functionName: 'balanceOf', args: [address],
  });
  return {
    balance: formatTokenAmount(units, token.decimals),
    balanceRaw: units.toString(),
    tokenSymbol: token.symbol,
    contractAddress: token.contractAddress,
  };
}
