// The seller of docs/x402.md: GET /weather costs PRICE, verified and settled by the platform's facilitator.
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';

const facilitatorUrl = process.env.FACILITATOR_URL ?? 'http://localhost:8080/x402';
const key = process.env.VIXPAY_FACILITATOR_KEY; // from `npx vixpay facilitator-key add`
const network = (process.env.NETWORK ?? 'eip155:31337') as `eip155:${number}`; // the network table above
const asset = process.env.ASSET; // the token's address on that network (GET /x402/supported)
const payTo = process.env.PAY_TO; // the address paid
const price = process.env.PRICE ?? '10000000000000000'; // atomic units: 0.01 of an 18-decimal token
if (!key || !asset || !payTo) throw new Error('set VIXPAY_FACILITATOR_KEY, ASSET and PAY_TO');

const auth = { Authorization: `Bearer ${key}` };
const facilitator = new HTTPFacilitatorClient({
  url: facilitatorUrl,
  createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
});
const server = new x402ResourceServer(facilitator).register(network, new ExactEvmScheme());
// A payment is its payer and nonce: what GET /x402/settlements/{payer}/{nonce} looks up.
server.onAfterSettle(async ({ paymentPayload, result }) => {
  const { authorization } = paymentPayload.payload as { authorization: { from: string; nonce: string } };
  console.log(`settled ${result.transaction} payer ${authorization.from} nonce ${authorization.nonce}`);
});

const app = express();
app.use(paymentMiddleware({
  'GET /weather': {
    accepts: {
      scheme: 'exact', network, payTo, maxTimeoutSeconds: 120,
      // extra: the token's EIP-712 name and version (GET /x402/supported lists them).
      price: { amount: price, asset, extra: { name: 'VIXP', version: '1' } },
    },
    description: 'Today\'s weather',
    // Optional: lets a buyer send a payment id (the payment-identifier extension, below).
    extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() },
  },
}, server));
app.get('/weather', (_request, response) => { response.json({ weather: 'sunny', temperature: 21 }); });
const port = Number(process.env.PORT ?? 4021);
app.listen(port, '127.0.0.1', () => console.log(`seller: http://127.0.0.1:${port}/weather costs ${price} of ${asset} on ${network}`));
