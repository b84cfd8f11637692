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

/** Every URL of a started platform, by what it serves: the ready banner's lines and the `ready` log line's fields. */
export function readyUrls(config: Config, bound: ReadyEndpoints): Array<[string, string]> {
  const http = `http://${reachableHost(config.httpHost)}:${bound.httpPort}`;
  return [
    ['HTTP', http],
    ['gRPC payments', `${reachableHost(config.grpcHost)}:${bound.grpcPort}  g00.payments.v2.PaymentsService (health, reflection)`],
    ['Token API', `${http}/token`],
    ['Block API', `${http}/block`],
    ['Chain API', `${http}/v1/chain  ${http}/v1/chain/erc20  (network by Host label)`],
    ['Auth API', `${http}/v2/auth  (app's own record and QR fields: GET /v2/auth/me)`],
    ['JWT keys', `${http}/.well-known/jwks.json`],
    ['DID API', `${http}/v2/did`],
    ['REST pay', `${http}/v1/ict/pay`],
    ['IPFS', `${http}/v1/ipfs`],
    ['Demo login', `${http}/demo/login`],
    ['Health', `${http}/healthz`],
  ];
}

/**
 * What `npm start` prints on a terminal once every server listens:
 *
 * ```text
 * vixpay is ready  (DATA_DIR /srv/vixpay/data, SQLite; payments on ethereum)
 *   gRPC payments   localhost:50051  g00.payments.v2.PaymentsService (health, reflection)
 *   Token API       http://localhost:8080/token
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
