import type { Hex } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { parseTokenAmount } from '#shared/amount.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { parseAddress } from './address.ts';
import { checkTempKey } from './temp-key.ts';
import { assertSignedBy } from './signed-request.ts';
import { resolveToken } from './token.ts';
import { authorizeTransfer } from './authorize-transfer.ts';
import { retryUnsentOf } from './unsent-reservations.ts';
import { sha256Hex } from '#shared/hash.ts';

export interface TransferParameters {
  fromAddress: string;
  toAddress: string;
  /** Decimal string in token units; signed exactly as sent. */
  amount: string;
  tempKey: string;
  hashKey: string;
  signature: string;
  contractAddress?: string;
  /**
   * The operation this transfer belongs to (e.g. a payment attempt), unique per network: it
   * derives the authorization nonce. A token-API transfer is its own operation (its temp key).
   */
  reference?: string;
}

export interface TransferReturnType {
  /** `settled`: executed on chain; `pending`: sent and not settled either way yet (the node is down or slow). */
  status: 'settled' | 'pending';
  /** The transaction that carries it: executed it when settled, sent it when pending. */
  transactionId: Hex;
  amountRaw: string;
  contractAddress: string;
}

/**
 * Moves tokens from a custodial account: checks temp key, hashKey and the signature over
 * `from|to|amount|tempKey|hashKey`, then `authorizeTransfer` reserves the funds (consuming the
 * temp key in the same database transaction, so a replay is refused), signs the EIP-3009
 * authorization and has the relayer submit it and pay the gas.
 */
export async function transfer(deps: WalletDeps, network: NetworkName, params: TransferParameters): Promise<TransferReturnType> {
  const from = parseAddress(params.fromAddress, 'fromAddress');
  const to = parseAddress(params.toAddress, 'toAddress');
  const token = await resolveToken(deps, network, params.contractAddress);
  const value = parseTokenAmount(params.amount, token.decimals);
  // A first attempt the full disk stopped before anything was sent gives its temp key back now.
  await retryUnsentOf(deps.authorizations, network, params.reference ?? `transfer:${sha256Hex(params.tempKey)}`);
  const key = await checkTempKey(deps, { address: from, keyType: 'transfer', tempKey: params.tempKey, hashKey: params.hashKey });
  await assertSignedBy(from, [params.fromAddress, params.toAddress, params.amount, params.tempKey, params.hashKey], params.signature);
  deps.faults?.at('transfer.before-authorize');

  const { status, transactionId } = await authorizeTransfer(deps, network, {
    token, from, to, value, reference: params.reference ?? `transfer:${key.keyHash}`, privateKeyEnc: key.privateKeyEnc,
    tempKeyHash: key.keyHash,
  });
  deps.faults?.at('transfer.after-settle');
  return { status, transactionId, amountRaw: value.toString(), contractAddress: token.contractAddress };
}
