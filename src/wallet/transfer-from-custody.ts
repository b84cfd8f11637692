import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { keysOf } from './wallet-keys.ts';
import { parseAddress } from './address.ts';
import { issueTempKey } from './temp-key.ts';
import { signedMessage } from './signed-request.ts';
import { transfer, type TransferReturnType } from './transfer.ts';

export interface TransferFromCustodyParameters {
  fromAddress: string;
  toAddress: string;
  amount: string;
  contractAddress?: string;
  reference?: string;
}

/**
 * A transfer the platform itself initiates from a custodial account it holds (a store's settlement
 * account for refunds and reward payouts, a user's account when a claimed reward is cancelled). It
 * walks the same scheme an app does (temp key, hashKey from the stored secretKey, EIP-191 signature)
 * and then the ordinary `transfer`, so the temp key, journal and relayer rules all still apply.
 * Never exposed through the JSON-RPC methods.
 */
export async function transferFromCustody(
  deps: WalletDeps,
  network: NetworkName,
  params: TransferFromCustodyParameters,
): Promise<TransferReturnType> {
  const fromAddress = parseAddress(params.fromAddress, 'fromAddress');
  const toAddress = parseAddress(params.toAddress, 'toAddress');
  const account = await deps.repo.findAccount(fromAddress);
  if (!account) throw new DomainError('wallet.unknown_address', 'the platform holds no account with this address');
  const { tempKey } = await issueTempKey(deps, { address: fromAddress, keyType: 'transfer' });
  const hashKey = sha256Hex(`${tempKey}|${deps.vault.decrypt(account.secretKeyEnc)}`);
  const holder = keysOf(deps).account(account.privateKeyEnc, fromAddress);
  const signature = await holder.signMessage({ message: signedMessage([fromAddress, toAddress, params.amount, tempKey, hashKey]) });
  return transfer(deps, network, {
    fromAddress, toAddress, amount: params.amount, tempKey, hashKey, signature,
    ...(params.contractAddress !== undefined && { contractAddress: params.contractAddress }),
    ...(params.reference !== undefined && { reference: params.reference }),
  });
}
