import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseUnits } from 'viem';
import { addFacilitatorKey, revokeFacilitatorKey } from '../x402/facilitator-keys.ts';
import type { CliCommand } from './command.ts';
import { withPlatform, withStoreRecords } from './command.ts';
import { tokenApi } from './payments-client.ts';
import { endpointOptions, endpointsOf } from './simulator-commands.ts';

/**
 * `vixpay demo x402`: a paid resource of our own, end to end with the published packages (their
 * devDependencies: a clone after `npm install` has them). A resource server built with
 * `@x402/express` whose facilitator is the running platform (a demo facilitator key, revoked at the
 * end), and a client built with `@x402/fetch` and a fresh viem account given 10 VIXP: 402, pay, 200.
 */
export const demoX402Command: CliCommand = {
  summary: '[--http URL]  a resource server (@x402/express) paid by a client (@x402/fetch) through this platform\'s facilitator',
  options: { ...endpointOptions },
  run: async (context) => {
    const endpoints = endpointsOf(context);
    const payer = privateKeyToAccount(generatePrivateKey());
    const payee = privateKeyToAccount(generatePrivateKey()).address;
    const { network, asset } = await withPlatform(context, async (platform) => {
      await platform.wallet.mint(platform.config.paymentNetwork, { to: payer.address, amount: '10' });
      return {
        network: `eip155:${platform.chains[platform.config.paymentNetwork].chainId}` as const,
        asset: platform.contracts[platform.config.paymentNetwork].vixpToken,
      };
    });
    const key = await withStoreRecords(context, (records) => addFacilitatorKey(records.facilitatorKeys, { name: 'vixpay demo x402' }));
    const [{ default: express }, { paymentMiddleware, x402ResourceServer }, { ExactEvmScheme: ServerScheme }, { ExactEvmScheme: ClientScheme }, { HTTPFacilitatorClient }, { wrapFetchWithPaymentFromConfig }] = await Promise.all([
      import('express'), import('@x402/express'), import('@x402/evm/exact/server'), import('@x402/evm/exact/client'), import('@x402/core/server'), import('@x402/fetch'),
    ]);
    const auth = { Authorization: `Bearer ${key.key}` };
    const facilitator = new HTTPFacilitatorClient({ url: `${endpoints.http}/x402`, createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }) });
    const app = express();
    app.use(paymentMiddleware({
      'GET /weather': {
        accepts: { scheme: 'exact', network, payTo: payee, price: { amount: parseUnits('1', 18).toString(), asset, extra: { name: 'VIXP', version: '1' } } },
        description: 'Today\'s weather, 1 VIXP',
      },
    }, new x402ResourceServer(facilitator).register(network, new ServerScheme())));
    app.get('/weather', (_request, response) => { response.json({ weather: 'sunny', temperature: 21 }); });
    const server: Server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/weather`;
      console.log(`resource server ${url} (facilitator ${endpoints.http}/x402), payer ${payer.address} with 10 VIXP, payee ${payee}`);
      const unpaid = await fetch(url);
      console.log(`GET /weather without payment: ${unpaid.status}`);
      const pay = wrapFetchWithPaymentFromConfig(fetch, {
        schemes: [{ network: 'eip155:*', client: new ClientScheme(payer) }],
        spendControls: { allowedAssets: [{ network, asset }] },
      });
      const paid = await pay(url);
      const receipt = paid.headers.get('payment-response');
      const settlement = receipt ? JSON.parse(Buffer.from(receipt, 'base64').toString()) as { transaction?: string } : {};
      console.log(`GET /weather paying 1 VIXP: ${paid.status} ${JSON.stringify(await paid.json())}, settled in ${settlement.transaction ?? '?'}`);
      return {
        status: paid.status, transaction: settlement.transaction,
        balances: {
          payer: (await tokenApi(endpoints, 'getBalance', { address: payer.address })).balance,
          payee: (await tokenApi(endpoints, 'getBalance', { address: payee })).balance,
        },
      };
    } finally {
      server.closeAllConnections();
      server.close();
      await withStoreRecords(context, (records) => revokeFacilitatorKey(records.facilitatorKeys, key.id));
    }
  },
};
