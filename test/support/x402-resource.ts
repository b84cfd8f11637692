import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import type { Address } from 'viem';
import type { ClientEvmSigner } from '@x402/evm';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import type { Platform } from '../../src/compose/platform.ts';
import type { TestPlatform } from './platform.ts';
import { addFacilitatorKey } from '../../src/x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../../src/store/facilitator-key-repository.ts';
import type { NetworkName } from '../../src/shared/networks.ts';

export interface PaidResource {
  url: string;
  /** How often the handler ran (its answer is sent only once the payment is settled). */
  served: number;
  close(): Promise<void>;
}

/**
 * A resource server built with the published packages (`@x402/express`): `GET /weather` costs
 * `amount` of `asset` paid to `payTo`, verified and settled by the facilitator at `facilitatorUrl`
 * with the facilitator key `apiKey`. `settleHeaders`: sent with each settle beside the key (`Prefer:
 * wait=N`); `extensions`: the route's declared extensions (the payment-identifier's); `extra`: more of the
 * requirements' `extra` (`assetTransferMethod`); `served` counts the handler's runs.
 */
export async function startPaidResource(options: {
  facilitatorUrl: string; apiKey: string; network: `eip155:${number}`; asset: string; amount: string; payTo: string; maxTimeoutSeconds?: number;
  settleHeaders?: Record<string, string>; extensions?: Record<string, unknown>; extra?: Record<string, unknown>;
}): Promise<PaidResource> {
  const auth = { Authorization: `Bearer ${options.apiKey}` };
  const facilitator = new HTTPFacilitatorClient({
    url: options.facilitatorUrl, createAuthHeaders: async () => ({ verify: auth, settle: { ...auth, ...options.settleHeaders }, supported: auth }),
  });
  const resourceServer = new x402ResourceServer(facilitator).register(options.network, new ExactEvmServerScheme());
  const app = express();
  app.use(paymentMiddleware({
    'GET /weather': {
      accepts: {
        scheme: 'exact', network: options.network, payTo: options.payTo, maxTimeoutSeconds: options.maxTimeoutSeconds ?? 120,
        price: { amount: options.amount, asset: options.asset, extra: { name: 'VIXP', version: '1', ...options.extra } },
      },
      description: 'Today\'s weather',
      ...(options.extensions && { extensions: options.extensions }),
    },
  }, resourceServer));
  const resource: PaidResource = { url: '', served: 0, close: async () => {} };
  app.get('/weather', (_request, response) => { resource.served++; response.json({ weather: 'sunny', temperature: 21 }); });
  const server: Server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const { port } = server.address() as AddressInfo;
  resource.url = `http://127.0.0.1:${port}/weather`;
  resource.close = () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return resource;
}

/**
 * `fetch` that pays 402 answers with `account` (a key, or a smart wallet's signer) (`@x402/fetch` and the `exact` EVM client scheme),
 * allowed to spend `asset` on `network` (the client pays only well-known assets unless told);
 * `sent` collects the payment header of every paid request.
 */
export function payingFetch(account: ClientEvmSigner, allowed: { network: `eip155:${number}`; asset: string }, sent: string[] = []): typeof fetch {
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const header = request.headers.get('payment-signature');
    if (header) sent.push(header);
    return fetch(request);
  };
  return wrapFetchWithPaymentFromConfig(recording, {
    schemes: [{ network: 'eip155:*', client: new ExactEvmClientScheme(account) }],
    spendControls: { allowedAssets: [{ network: allowed.network, asset: allowed.asset }] },
  });
}

/**
 * The test platform's facilitator listening on a free port, with a key of its own (`name`, and the
 * store `tid` when given; 1,000 requests a second): its URL, the key, and the ethereum network and
 * its VIXP as a resource server names them.
 */
export async function listeningFacilitator(t: TestPlatform, key: { name: string; tid?: string }) {
  const facilitatorUrl = `${await t.app.listen({ port: 0, host: '127.0.0.1' })}/x402`;
  const { key: apiKey } = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(t.platform.store.db), clock: Date.now }, { ...key, ratePerSecond: 1000 });
  const network: `eip155:${number}` = `eip155:${t.platform.chains.ethereum.chainId}`;
  return { facilitatorUrl, apiKey, network, vixp: t.platform.contracts.ethereum.vixpToken };
}

/** `address`'s VIXP on the platform's `network`, in base units. */
export const vixpBalanceOf = (platform: Platform, address: Address, network: NetworkName = 'ethereum') =>
  platform.chains[network].client.readContract({ address: platform.contracts[network].vixpToken, abi: vixpTokenAbi, functionName: 'balanceOf', args: [address] });

/** A new payer holding `amount` whole VIXP, minted by the platform on `network`. */
export async function fundedPayer(platform: Platform, amount: string, network: NetworkName = 'ethereum'): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await platform.wallet.mint(network, { to: account.address, amount });
  return account;
}
