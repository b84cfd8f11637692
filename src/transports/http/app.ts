import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Platform } from '../../compose.ts';
import { installHttpErrorHandler } from './errors.ts';
import { jsonRpcRoutes } from './routes/jsonrpc.ts';
import { createDispatcher } from '../jsonrpc/dispatcher.ts';
import { tokenMethods } from '../jsonrpc/methods/token-methods.ts';
import { blockMethods } from '../jsonrpc/methods/block-methods.ts';
import { authRoutes } from './routes/auth.ts';
import { jwksRoutes } from './routes/auth-jwks.ts';
import { payRoutes } from './routes/pay.ts';
import { paymentStatusRoutes } from './routes/payment-status.ts';
import { receiptRoutes } from './routes/receipts.ts';
import { consoleRoutes } from './routes/console.ts';
import { consoleDeps } from './routes/console-deps.ts';
import { createPayService } from '../../pay/idempotent-pay.ts';
import { createIdempotencyRepository } from '../../store/idempotency-repository.ts';
import { createTransferStatusRepository } from '../../store/transfer-status-repository.ts';
import { transferStatusMethods } from '../jsonrpc/methods/transfer-status-methods.ts';
import { didRoutes } from './routes/did.ts';
import { authVpRoutes } from './routes/auth-vp.ts';
import { demoRoutes } from './routes/demo.ts';
import { ipfsRoutes } from './routes/ipfs.ts';
import { ipfsLimits } from '../../ipfs/ipfs-limits.ts';
import { authMeRoutes } from './routes/auth-me.ts';
import { createDidRepository } from '../../did/did-repository.ts';
import { didForAddress } from '../../did/did-identifiers.ts';
import { trustProxyOption } from './client-address.ts';
import { installRequestTimeouts, requestTimeoutsOf } from './request-timeouts.ts';
import { installOpenApi } from './openapi.ts';
import { installObservability, requestIdOptions } from './observability.ts';
import { withRpcMetrics } from '../jsonrpc/rpc-metrics.ts';
import { requestLogSerializer } from './request-log.ts';

/** The HTTP server of every HTTP interface, over a started platform. */
export async function buildHttpApp(platform: Platform): Promise<FastifyInstance> {
  const { config, logger } = platform;
  // Request lines show the URL with the query's credentials redacted (`?access_token=[redacted]`).
  const httpLogger = logger.child({ component: 'http' }, { serializers: { req: requestLogSerializer } });
  const app = Fastify({ loggerInstance: httpLogger as FastifyBaseLogger, bodyLimit: config.httpBodyLimitBytes, trustProxy: trustProxyOption(config.trustProxy), ...requestIdOptions });
  installHttpErrorHandler(app);
  // Slow clients: headers, whole request, idle socket, and a floor on the body's rate (docs/decisions/operating.md "Bounded resources").
  installRequestTimeouts(app, requestTimeoutsOf(config));
  // Before every route: the OpenAPI document lists the routes registered after it.
  await installOpenApi(app);
  // /readyz, /metrics, x-request-id and the request metrics: before every route, so its hooks see them all.
  installObservability(app, platform);

  // Load balancers poll this every few seconds: its request lines are not logged (only its errors).
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok', networks: Object.keys(platform.chains) }));

  const { identity } = platform;
  await app.register(authRoutes, { prefix: '/v2/auth', login: identity.login, websiteLogins: identity.websiteLogins });
  await app.register(jwksRoutes, { jwt: identity.jwt });
  const dids = createDidRepository(platform.store.db);
  await app.register(authMeRoutes, {
    prefix: '/v2/auth', verify: identity.jwt.verifyAccessToken, findUser: (userId) => identity.users.findUser(userId),
    // The DID recorded for the user, or their wallet's did:ethr once create-did has registered it.
    didOf: async (user) => user.did ?? (user.walletAddress && await dids.exists(didForAddress(user.walletAddress)) ? didForAddress(user.walletAddress) : null),
    paymentToken: () => platform.wallet.getTokenInfo(config.paymentNetwork, {}),
  });
  await app.register(didRoutes, {
    prefix: '/v2/did', did: platform.did.service, verifyAccessToken: identity.jwt.verifyAccessToken,
    walletAddressOf: async (userId) => (await identity.users.findUser(userId))?.walletAddress ?? undefined,
  });
  await app.register(authVpRoutes, {
    prefix: '/v2/auth', verifyLoginPresentation: platform.did.verifyLoginPresentation,
    findUserIdByHolder: platform.did.findUserIdByHolder, login: identity.login, websiteLogins: identity.websiteLogins,
  });
  await app.register(ipfsRoutes, {
    prefix: '/v1/ipfs', backend: platform.ipfs, verify: identity.jwt.verifyAccessToken,
    limits: ipfsLimits({
      ...(config.ipfsMaxTotalBytes !== undefined && { maxTotalBytes: config.ipfsMaxTotalBytes }),
      ...(config.ipfsMaxParts !== undefined && { maxParts: config.ipfsMaxParts }),
    }),
  });
  await app.register(demoRoutes, { prefix: '/demo', siteUrl: `http://localhost:${config.httpPort}/demo/login`, waitTimeSeconds: 120 });
  const transfers = createTransferStatusRepository(platform.store.db);
  await app.register(payRoutes, {
    prefix: '/v1/ict',
    verify: identity.jwt.verifyAccessToken,
    pay: createPayService({
      users: identity.users, rateLimiter: identity.rateLimiter, wallet: platform.wallet, network: config.paymentNetwork,
      receiver: config.payReceiverAddress ?? platform.relayer.address,
      keys: createIdempotencyRepository(platform.store.db), transfers, clock: platform.clock,
    }),
  });
  await app.register(paymentStatusRoutes, { prefix: '/v1/ict', payments: platform.payments });
  await app.register(receiptRoutes, {
    prefix: '/v1', receipts: platform.receipts, authenticateStore: (apiKey) => platform.payments.authenticateStore(apiKey),
    verify: identity.jwt.verifyAccessToken, walletAddressOf: async (userId) => (await identity.users.findUser(userId))?.walletAddress ?? undefined,
  });
  // The operator console (docs/console.md): its own login, cookie session and strict CSP.
  await app.register(consoleRoutes, { prefix: '/console', ...consoleDeps(platform) });

  const token = withRpcMetrics({ ...tokenMethods(platform.wallet), ...transferStatusMethods({ transfers }) }, platform.metrics);
  const block = withRpcMetrics(blockMethods(platform.blocks), platform.metrics);
  const batchLimit = config.jsonRpcBatchLimit;
  const chainApi = createDispatcher({ methods: { ...token, ...block }, batchLimit });
  await app.register(jsonRpcRoutes, {
    hostLabels: config.hostLabels,
    endpoints: {
      '/token': createDispatcher({ methods: token, batchLimit }),
      '/block': createDispatcher({ methods: block, batchLimit }),
      '/v1/chain': chainApi,
      '/v1/chain/erc20': chainApi,
    },
  });
  return app;
}
