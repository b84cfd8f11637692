import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { HttpDeps } from './http-deps.ts';
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
import { statementRoutes } from './routes/statements.ts';
import { consoleRoutes } from './routes/console.ts';
import { x402Routes } from './routes/x402.ts';
import { transferStatusMethods } from '../jsonrpc/methods/transfer-status-methods.ts';
import { didRoutes } from './routes/did.ts';
import { authVpRoutes } from './routes/auth-vp.ts';
import { demoRoutes } from './routes/demo.ts';
import { ipfsRoutes } from './routes/ipfs.ts';
import { ipfsLimits } from '../../ipfs/ipfs-limits.ts';
import { authMeRoutes } from './routes/auth-me.ts';
import { trustProxyOption } from './client-address.ts';
import { installRequestTimeouts, requestTimeoutsOf } from './request-timeouts.ts';
import { installOpenApi } from './openapi.ts';
import { installObservability, requestIdOptions } from './observability.ts';
import { withRpcMetrics } from '../jsonrpc/rpc-metrics.ts';
import { requestLogSerializer } from './request-log.ts';

/** The HTTP server of every HTTP interface, over a started deps. */
export async function buildHttpApp(deps: HttpDeps): Promise<FastifyInstance> {
  const { config, logger } = deps;
  // Request lines show the URL with the query's credentials redacted (`?access_token=[redacted]`).
  const httpLogger = logger.child({ component: 'http' }, { serializers: { req: requestLogSerializer } });
  const app = Fastify({ loggerInstance: httpLogger as FastifyBaseLogger, bodyLimit: config.httpBodyLimitBytes, trustProxy: trustProxyOption(config.trustProxy), ...requestIdOptions });
  installHttpErrorHandler(app);
  // Slow clients: headers, whole request, idle socket, and a floor on the body's rate (docs/decisions/operating.md "Bounded resources").
  installRequestTimeouts(app, requestTimeoutsOf(config));
  // Before every route: the OpenAPI document lists the routes registered after it.
  await installOpenApi(app);
  // /readyz, /metrics, x-request-id and the request metrics: before every route, so its hooks see them all.
  installObservability(app, deps);

  // Load balancers poll this every few seconds: its request lines are not logged (only its errors).
  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok', networks: Object.keys(deps.chains) }));

  const { identity } = deps;
  await app.register(authRoutes, { prefix: '/v2/auth', login: identity.login, websiteLogins: identity.websiteLogins });
  await app.register(jwksRoutes, { jwt: identity.jwt });
  await app.register(authMeRoutes, {
    prefix: '/v2/auth', verify: identity.jwt.verifyAccessToken, findUser: (userId) => identity.users.findUser(userId),
    // The DID recorded for the user, or their wallet's did:ethr once create-did has registered it.
    didOf: async (user) => user.did ?? (user.walletAddress && await deps.did.isRegistered(deps.did.didForAddress(user.walletAddress)) ? deps.did.didForAddress(user.walletAddress) : null),
    paymentToken: () => deps.wallet.getTokenInfo(config.paymentNetwork, {}),
  });
  await app.register(didRoutes, {
    prefix: '/v2/did', did: deps.did.service, verifyAccessToken: identity.jwt.verifyAccessToken,
    walletAddressOf: async (userId) => (await identity.users.findUser(userId))?.walletAddress ?? undefined,
  });
  await app.register(authVpRoutes, {
    prefix: '/v2/auth', verifyLoginPresentation: deps.did.verifyLoginPresentation,
    findUserIdByHolder: deps.did.findUserIdByHolder, login: identity.login, websiteLogins: identity.websiteLogins,
  });
  await app.register(ipfsRoutes, {
    prefix: '/v1/ipfs', backend: deps.ipfs, verify: identity.jwt.verifyAccessToken,
    limits: ipfsLimits({
      ...(config.ipfsMaxTotalBytes !== undefined && { maxTotalBytes: config.ipfsMaxTotalBytes }),
      ...(config.ipfsMaxParts !== undefined && { maxParts: config.ipfsMaxParts }),
    }),
  });
  await app.register(demoRoutes, { prefix: '/demo', siteUrl: `http://localhost:${config.httpPort}/demo/login`, waitTimeSeconds: 120 });
  await app.register(payRoutes, { prefix: '/v1/ict', verify: identity.jwt.verifyAccessToken, pay: deps.pay });
  await app.register(paymentStatusRoutes, { prefix: '/v1/ict', payments: deps.payments });
  await app.register(receiptRoutes, {
    prefix: '/v1', receipts: deps.receipts, authenticateStore: (apiKey) => deps.payments.authenticateStore(apiKey),
    verify: identity.jwt.verifyAccessToken, walletAddressOf: async (userId) => (await identity.users.findUser(userId))?.walletAddress ?? undefined,
  });
  await app.register(statementRoutes, { prefix: '/v1', statements: deps.statements, authenticateStore: (apiKey) => deps.payments.authenticateStore(apiKey) });
  // The operator console (docs/console.md): its own login, cookie session and strict CSP.
  await app.register(consoleRoutes, { prefix: '/console', ...deps.console, statements: deps.statements });
  // The x402 facilitator (docs/x402.md): resource servers verify and settle HTTP 402 payments here.
  await app.register(x402Routes, { prefix: '/x402', ...deps.x402 });

  const token = withRpcMetrics({ ...tokenMethods(deps.wallet), ...transferStatusMethods(deps.transferStatuses) }, deps.metrics);
  const block = withRpcMetrics(blockMethods(deps.blocks), deps.metrics);
  const batchLimit = config.jsonrpcBatchLimit;
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
