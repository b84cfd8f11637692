// The buyer of docs/x402.md: GET /weather, paying the 402 with @x402/fetch and @x402/evm 2.27.0.
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';

const account = privateKeyToAccount(process.env.BUYER_PRIVATE_KEY as `0x${string}`); // any viem account holding the token
const network = (process.env.NETWORK ?? 'eip155:31337') as `eip155:${number}`;
const asset = process.env.ASSET; // the token the seller asks for
const url = process.env.URL ?? 'http://127.0.0.1:4021/weather';
if (!asset) throw new Error('set BUYER_PRIVATE_KEY and ASSET');

const client = x402Client.fromConfig({
  schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(account) }],
  // The client pays only well-known assets (USDC) unless told: allow this one.
  spendControls: { allowedAssets: [{ network, asset }] },
});
// The signed authorization's nonce names the payment on the platform, with the payer's address.
client.onAfterPaymentCreation(async ({ paymentPayload }) => {
  const { authorization } = paymentPayload.payload as { authorization: { from: string; nonce: string; value: string } };
  console.log(`signed ${authorization.value} atomic units from ${authorization.from}, nonce ${authorization.nonce}`);
});
const pay = wrapFetchWithPayment(fetch, client);

const response = await pay(url);
console.log(`${response.status} ${JSON.stringify(await response.json())}`);
if (response.status !== 200) process.exit(1);
const settlement = decodePaymentResponseHeader(response.headers.get('payment-response') ?? '');
console.log(`settled in ${settlement.transaction} on ${settlement.network}`);
