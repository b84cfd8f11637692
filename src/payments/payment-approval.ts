import { formatTokenAmount } from '#shared/amount.ts';
import type { PaymentApproval } from '../pairing/session-events.ts';
import type { PaymentRecord } from '../store/payment-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';

/** END_PAY of an approved payment, as a POS retry of its tran_no receives it. */
export async function approvalOf(deps: Pick<PaymentDeps, 'wallet' | 'network'>, payment: PaymentRecord): Promise<PaymentApproval> {
  const token = await deps.wallet.getTokenInfo(deps.network, { ...(payment.contractAddress && { contractAddress: payment.contractAddress }) });
  return {
    tranNo: payment.tranNo, contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, userAddress: payment.userAddress ?? '',
    tokenAmount: formatTokenAmount(BigInt(payment.tokenAmount ?? '0'), token.decimals), transferTransactionId: payment.transferTransactionId ?? '',
    approvalNo: payment.approvalNo ?? '', approvalDate: payment.approvalDate ?? '', exchangeDateIndex: payment.exchangeDateIndex ?? '',
    exchangeRate: payment.exchangeRate ?? '', exchangeAmount: payment.exchangeAmount, exchangeCurrency: payment.exchangeCurrency,
  };
}
