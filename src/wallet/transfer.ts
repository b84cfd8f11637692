import { encodeFunctionData, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { NetworkName } from '../chain/networks.ts';
import { vixpTokenAbi } from '../chain/artifacts/vixp-token.ts';
import { parseTokenAmount } from '../shared/amount.ts';
import { DomainError } from '../shared/errors.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { parseAddress } from './address.ts';
import { checkTempKey, consumeTempKeyWithin } from './temp-key.ts';
import { assertSignedBy } from './signed-request.ts';
import { resolveToken } from './token.ts';

export interface TransferParameters {
  fromAddress: string;
  toAddress: string;
  /** Decimal string in token units; signed exactly as sent. */
  amount: string;
  tempKey: string;
  hashKey: string;
  signature: string;
  contractAddress?: string;
  /** Our own reference journaled with the transaction (e.g. a payment id). */
  reference?: string;
}

export interface TransferReturnType {
  transactionId: Hex;
  /** `confirmed`, or `signed` when the chain had not mined it within the wait (recovery finishes it). */
  status: 'confirmed' | 'signed';
  amountRaw: string;
  contractAddress: string;
}

/** How long an EIP-3009 authorization stays valid on chain. */
const authorizationLifetimeSeconds = 3600n;

/**
 * Moves tokens from a custodial account: checks temp key, hashKey and the signature over
 * `from|to|amount|tempKey|hashKey`, then has the account sign an EIP-3009 authorization whose
 * nonce is the temp key's hash, which the relayer submits and pays gas for. The temp key is
 * consumed in the same database transaction that journals the signed relayer transaction, so a
 * replay fails here, and the authorization nonce makes a second transfer impossible on chain too.
 */
export async function transfer(deps: WalletDeps, network: NetworkName, params: TransferParameters): Promise<TransferReturnType> {
  const from = parseAddress(params.fromAddress, 'fromAddress');
  const to = parseAddress(params.toAddress, 'toAddress');
  const token = await resolveToken(deps, network, params.contractAddress);
  const value = parseTokenAmount(params.amount, token.decimals);
  const key = await checkTempKey(deps, { address: from, keyType: 'transfer', tempKey: params.tempKey, hashKey: params.hashKey });
  await assertSignedBy(from, [params.fromAddress, params.toAddress, params.amount, params.tempKey, params.hashKey], params.signature);

  const { client, chainId } = deps.chains[network];
  const balance = await client.readContract({ address: token.contractAddress, abi: vixpTokenAbi, functionName: 'balanceOf', args: [from] });
  if (balance < value) throw new DomainError('wallet.insufficient_balance', 'balance is below the amount');

  const holder = privateKeyToAccount(deps.vault.decrypt(key.privateKeyEnc) as Hex);
  const nonce = `0x${key.keyHash}` as Hex;
  const validBefore = BigInt(Math.floor(deps.clock() / 1000)) + authorizationLifetimeSeconds;
  const authorization = await holder.signTypedData({
    domain: { name: token.name, version: '1', chainId, verifyingContract: token.contractAddress },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: { from, to, value, validAfter: 0n, validBefore, nonce },
  });
  const data = encodeFunctionData({
    abi: vixpTokenAbi, functionName: 'transferWithAuthorization',
    args: [from, to, value, 0n, validBefore, nonce, authorization],
  });
  const result = await deps.relayer.send(network, {
    to: token.contractAddress,
    data,
    intent: { kind: 'transfer', reference: params.reference, fromAddress: from, toAddress: to, contractAddress: token.contractAddress, amount: value.toString() },
    withinJournal: consumeTempKeyWithin(deps, key.keyHash),
  });
  return {
    transactionId: result.txHash,
    status: result.status === 'confirmed' ? 'confirmed' : 'signed',
    amountRaw: value.toString(),
    contractAddress: token.contractAddress,
  };
}
