import { getAddress } from 'viem';
import { formatTokenAmount } from '#shared/amount.ts';
import { formatDateTime } from '../commerce/platform-dates.ts';
import { didForAddress } from '../did/did-identifiers.ts';
import type { ReceiptSource } from '../store/receipt-repository.ts';

/** `type` of every receipt credential. */
export const receiptCredentialType = ['VerifiableCredential', 'VixpayReceipt'];

/** What a receipt is of: an approved payment, a refund (cancellation) or a reward claim. */
export type ReceiptKind = ReceiptSource['kind'];

/**
 * The `credentialSubject` of a receipt (docs/receipts.md): the account it is for as `id`
 * (`did:ethr:<address>`) and the transfer it attests: `amount` of `token` (`tokenContract`) moved
 * `from` -> `to` by transaction `transactionId` on `network` (`chainId`), with the approval
 * (or cancellation) number and date the POS was given.
 */
export interface ReceiptSubject {
  id: string;
  kind: ReceiptKind;
  tid: string;
  /** Payment and cancellation receipts. */
  tranNo?: string;
  /** Reward claim receipts. */
  rewardId?: string;
  /** x402 payment receipts: the EIP-3009 authorization's nonce (docs/x402.md). */
  nonce?: string;
  amount: string;
  token: string;
  tokenContract: string;
  network: string;
  chainId: number;
  from: string;
  to: string;
  transactionId: string;
  /** Approval number of a payment, cancellation number of a cancellation; absent for a reward claim. */
  approvalNo?: string;
  /** `yyyyMMddHHmmss` in the platform's time zone (a reward claim: when it was paid). */
  approvalDate: string;
  /** For a cancellation: the approval number of the payment refunded. */
  paymentApprovalNo?: string;
  exchangeAmount?: string;
  exchangeCurrency: string;
}

export function receiptSubject(
  source: ReceiptSource, token: { decimals: number }, chainId: number, timeZone: string,
): ReceiptSubject {
  const approvalDate = source.approvalDate ?? (source.claimedAt === null ? '' : formatDateTime(source.claimedAt, timeZone));
  return {
    id: didForAddress(source.userAddress),
    kind: source.kind,
    tid: source.tid,
    ...(source.kind === 'reward_claim' ? { rewardId: source.reference } : source.kind === 'x402' ? { nonce: source.reference } : { tranNo: source.reference }),
    amount: formatTokenAmount(BigInt(source.tokenAmount), token.decimals),
    token: source.tokenSymbol,
    tokenContract: getAddress(source.contractAddress),
    network: source.network,
    chainId,
    from: getAddress(source.fromAddress),
    to: getAddress(source.toAddress),
    transactionId: source.transactionId,
    ...(source.approvalNo !== null && { approvalNo: source.approvalNo }),
    approvalDate,
    ...(source.paymentApprovalNo !== null && { paymentApprovalNo: source.paymentApprovalNo }),
    ...(source.exchangeAmount !== null && { exchangeAmount: source.exchangeAmount }),
    exchangeCurrency: source.exchangeCurrency,
  };
}
