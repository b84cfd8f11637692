// docs/x402.md's buyer with a payment id (the payment-identifier extension): asking again is safe.
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { privateKeyToAccount } from 'viem/accounts';

const account = privateKeyToAccount(process.env.BUYER_PRIVATE_KEY as `0x${string}`);
const network = (process.env.NETWORK ?? 'eip155:31337') as `eip155:${number}`;
const asset = process.env.ASSET;
const url = process.env.URL ?? 'http://127.0.0.1:4021/weather';
if (!asset) throw new Error('set BUYER_PRIVATE_KEY and ASSET');

const client = x402Client.fromConfig({
  schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(account) }],
  spendControls: { allowedAssets: [{ network, asset }] },
});
// One id per purchase, added before the payment is signed; kept by the platform 24 hours.
const id = generatePaymentId();
client.onBeforePaymentCreation(async ({ paymentRequired }) => {
  paymentRequired.extensions = appendPaymentIdentifierToExtensions(paymentRequired.extensions ?? {}, id);
});
// Keep the PAYMENT-SIGNATURE header sent, to send the same payment again (never sign a new one).
let header = '';
const recording: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  header = request.headers.get('payment-signature') ?? header;
  return fetch(request);
};
const pay = wrapFetchWithPayment(recording, client);

const first = await pay(url);
const settled = (response: Response) => decodePaymentResponseHeader(response.headers.get('payment-response') ?? '');
console.log(`payment ${id}: ${first.status}, settled in ${first.status === 200 ? settled(first).transaction : '(not yet)'}`);
// Lost the answer, or told settlement_pending? The same header again: the same payment, charged once.
const again = await fetch(url, { headers: { 'payment-signature': header } });
console.log(`the same payment again: ${again.status}, settled in ${again.status === 200 ? settled(again).transaction : '(not yet)'}`);
