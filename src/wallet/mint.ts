import { encodeFunctionData, type Hex } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { parseTokenAmount } from '#shared/amount.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { parseAddress } from './address.ts';
import { resolveToken } from './token.ts';

/** Treasury issuance: the platform account, VIXP's owner, mints new tokens to an address. */
export async function mint(
  deps: Pick<WalletDeps, 'repo' | 'contracts' | 'relayer'>,
  network: NetworkName,
  params: { to: string; amount: string },
): Promise<{ transactionId: Hex; amountRaw: string }> {
  const to = parseAddress(params.to, 'to');
  const token = await resolveToken(deps, network);
  const value = parseTokenAmount(params.amount, token.decimals);
  const result = await deps.relayer.send(network, {
    to: token.contractAddress,
    data: encodeFunctionData({ abi: vixpTokenAbi, functionName: 'mint', args: [to, value] }),
    intent: { kind: 'mint', toAddress: to, contractAddress: token.contractAddress, amount: value.toString() },
  });
  return { transactionId: result.txHash, amountRaw: value.toString() };
}
