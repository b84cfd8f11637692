import type { Config } from '../config/config.ts';

export interface ReadyEndpoints {
  /** The bound HTTP port (the configured one, or the OS's choice for 0). */
  httpPort: number;
  grpcPort: number;
}

/** A bind address as a reader types it: `0.0.0.0` and `::` mean this machine. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Every URL of a started platform, by what it serves: the ready banner's lines and the `ready` log
 * line's fields. Every HTTP route lies under one of these URLs (`src/transports/http/openapi.test.ts`
 * reads the route tree and fails on one left out).
 */
export function readyUrls(config: Config, bound: ReadyEndpoints): Array<[string, string]> {
  const http = `http://${reachableHost(config.httpHost)}:${bound.httpPort}`;
  return [
    ['HTTP', `${http}  (listening on ${config.httpHost}; HTTP_HOST)`],
    ['gRPC payments', `${reachableHost(config.grpcHost)}:${bound.grpcPort}  g00.payments.v2.PaymentsService (health, reflection; GRPC_HOST)`],
    ['Console', `${http}/console  (operator login: vixpay operator add)`],
    ['x402', `${http}/x402  (facilitator: /x402/supported, /x402/verify, /x402/settle)`],
    ['Statements', `${http}/v1/stores/{tid}/statements/{date}  (store API key; days in ${config.timeZone})`],
    ['Receipts', `${http}/v1/receipts`],
    ['Payment status', `${http}/v1/ict/payments/{tid}/{tranNo}`],
    ['REST pay', `${http}/v1/ict/pay`],
    ['Token API', `${http}/token`],
    ['Block API', `${http}/block`],
    ['Chain API', `${http}/v1/chain  ${http}/v1/chain/erc20  (network by Host label)`],
    ['Auth API', `${http}/v2/auth  (app's own record and QR fields: GET /v2/auth/me)`],
    ['JWT keys', `${http}/.well-known/jwks.json`],
    ['DID API', `${http}/v2/did`],
    ['IPFS', `${http}/v1/ipfs`],
    ['Demo login', `${http}/demo/login  ${http}/demo/api`],
    ['API reference', `${http}/docs  ${http}/openapi.json`],
    ['Health', `${http}/healthz`],
    ['Readiness', `${http}/readyz`],
    ['Metrics', `${http}/metrics  (Prometheus)`],
  ];
}

/**
 * What `npm start` prints on a terminal once every server listens:
 *
 * ```text
 * vixpay is ready  (DATA_DIR /srv/vixpay/data, SQLite; payments on ethereum)
 *   HTTP            http://127.0.0.1:8080  (listening on 127.0.0.1; HTTP_HOST)
 *   gRPC payments   127.0.0.1:50051  g00.payments.v2.PaymentsService (health, reflection; GRPC_HOST)
 *   Console         http://127.0.0.1:8080/console  (operator login: vixpay operator add)
 *   …
 * Ctrl-C stops it.
 * ```
 */
export function readyBanner(config: Config, bound: ReadyEndpoints): string {
  const store = config.databaseUrl ? 'PostgreSQL' : 'SQLite';
  return [
    `vixpay is ready  (DATA_DIR ${config.dataDir}, ${store}; payments on ${config.paymentNetwork})`,
    ...readyUrls(config, bound).map(([name, url]) => `  ${name.padEnd(15)} ${url}`),
    'Ctrl-C stops it.',
  ].join('\n');
}
