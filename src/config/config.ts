import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { networkNames, type NetworkName } from '../shared/networks.ts';

/** Default Host-label map of the chain API (SPEC.md "JSON-RPC APIs"); overridable by HOST_LABELS. */
export const defaultHostLabels: Readonly<Record<string, NetworkName>> = {
  api: 'ethereum',
  'test-api': 'ethereum',
  localhost: 'ethereum',
  'api-op': 'optimism',
  'api-bsc': 'bnb',
  'api-op-bnb': 'opbnb',
  'test-api-op-sepolia': 'optimism',
  'test-api-bsc': 'bnb',
  'test-api-op-bnb': 'opbnb',
};

const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z.string().url().optional();

const envSchema = z.object({
  HTTP_PORT: port.default(8080),
  HTTP_HOST: z.string().default('0.0.0.0'),
  GRPC_PORT: port.default(50051),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optionalUrl,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RPC_URL_ETHEREUM: optionalUrl,
  RPC_URL_OPTIMISM: optionalUrl,
  RPC_URL_BNB: optionalUrl,
  RPC_URL_OPBNB: optionalUrl,
  HOST_LABELS: z.string().optional(),
  MASTER_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, 'MASTER_KEY must be 64 hex characters').optional(),
  RELAYER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional(),
  TEMP_KEY_TTL_SECONDS: z.coerce.number().int().min(5).max(3600).default(300),
  AUTHORIZATION_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(120),
  RECEIPT_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(60),
  JSONRPC_BATCH_LIMIT: z.coerce.number().int().min(1).max(1000).default(50),
  HTTP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  CHAIN_POLL_MS: z.coerce.number().int().min(10).default(50),
  TIME_ZONE: z.string().default('Asia/Seoul'),
  JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86400 * 30).default(3600),
  TRUST_PROXY: z.string().default('false'),
  IPFS_API_URL: optionalUrl,
  IPFS_MAX_TOTAL_BYTES: z.coerce.number().int().min(1).optional(),
  IPFS_MAX_PARTS: z.coerce.number().int().min(1).optional(),
  PAY_RECEIVER_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'PAY_RECEIVER_ADDRESS must be a 0x address').optional(),
  GRPC_HOST: z.string().default('0.0.0.0'),
  GRPC_MAX_MESSAGE_BYTES: z.coerce.number().int().min(1024).default(64 * 1024),
  PAYMENT_NETWORK: z.enum(networkNames).default('ethereum'),
  PAYMENT_PAIRING_WINDOW_SECONDS: z.coerce.number().positive().max(3600).default(30),
  PAYMENT_IDLE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(120),
  DEFAULT_CURRENCY: z.string().regex(/^[A-Z]{3}$/, 'DEFAULT_CURRENCY must be an ISO 4217 code such as KRW').default('KRW'),
  REWARD_LIFETIME_DAYS: z.coerce.number().positive().max(3650).default(90),
  REDIS_URL: optionalUrl,
  // Bounded resources (README "Configuration", docs/decisions.md "Bounded resources").
  GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(10),
  GRPC_MAX_STREAMS_PER_CLIENT: z.coerce.number().int().min(1).max(100_000).default(20),
  GRPC_MAX_CONCURRENT_STREAMS_PER_CONNECTION: z.coerce.number().int().min(1).max(100_000).default(100),
  GRPC_KEEPALIVE_TIME_SECONDS: z.coerce.number().positive().max(86400).default(60),
  GRPC_KEEPALIVE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(20),
  GRPC_MAX_CONNECTION_IDLE_SECONDS: z.coerce.number().positive().max(86400).default(300),
  HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(20),
  HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(86400).default(600),
  HTTP_CONNECTION_TIMEOUT_SECONDS: z.coerce.number().positive().max(86400).default(180),
  HTTP_MIN_BODY_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(1024),
  HTTP_BODY_RATE_WINDOW_SECONDS: z.coerce.number().positive().max(3600).default(10),
  SWEEP_INTERVAL_SECONDS: z.coerce.number().positive().max(86400).default(60),
  TEMP_KEY_USED_GRACE_SECONDS: z.coerce.number().min(0).max(86400 * 30).default(3600),
});

export interface Config {
  readonly httpPort: number;
  readonly httpHost: string;
  readonly grpcPort: number;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly logLevel: string;
  /** An RPC URL per network; a network without one runs on a supervised anvil. */
  readonly rpcUrls: Readonly<Partial<Record<NetworkName, string>>>;
  readonly hostLabels: Readonly<Record<string, NetworkName>>;
  readonly masterKeyHex: string | undefined;
  readonly relayerPrivateKey: `0x${string}` | undefined;
  readonly tempKeyTtlSeconds: number;
  /** How long a signed EIP-3009 transfer authorization stays valid on chain (validBefore). */
  readonly authorizationTtlSeconds: number;
  /** How long a relayed transaction is waited for before its outcome is settled otherwise. */
  readonly receiptTimeoutSeconds: number;
  readonly jsonRpcBatchLimit: number;
  readonly httpBodyLimitBytes: number;
  readonly chainPollMs: number;
  readonly timeZone: string;
  readonly jwtTtlSeconds: number;
  /**
   * Behind a load balancer: which X-Forwarded-For entries to believe for the client address (rate
   * limits, website-login binding). `false`: none, the socket's peer is the client; a number: that
   * many proxies in front of us (the entry they appended); a list: proxy addresses or CIDRs.
   * Never "every hop" (see parseTrustProxy).
   */
  readonly trustProxy: TrustProxy;
  /** Kubo RPC (`http://127.0.0.1:5001`) instead of the embedded IPFS blockstore. */
  readonly ipfsApiUrl: string | undefined;
  readonly ipfsMaxTotalBytes: number | undefined;
  readonly ipfsMaxParts: number | undefined;
  /** Receiving account of REST pay (`/v1/ict/pay`); the treasury when unset. */
  readonly payReceiverAddress: `0x${string}` | undefined;
  readonly grpcHost: string;
  readonly grpcMaxMessageBytes: number;
  /** The network whose VIXP the payment server moves. */
  readonly paymentNetwork: NetworkName;
  /** How long a POS START_PAY waits for the app's DoPayment START_PAY with the same user_uuid. */
  readonly paymentPairingWindowSeconds: number;
  /** How long a stream may wait for its next step (app waiting for a POS, REQUEST_TRANSFER to TRANSFER). */
  readonly paymentIdleTimeoutSeconds: number;
  /** Currency of exchange_amount when a request does not name one. */
  readonly defaultCurrency: string;
  readonly rewardLifetimeDays: number;
  /** Redis (`redis://host:6379`) pairing POS and app streams across instances; in-process when unset. */
  readonly redisUrl: string | undefined;
  /** A StartPayment/DoPayment stream with no message by then is ended DEADLINE_EXCEEDED. */
  readonly grpcFirstMessageTimeoutSeconds: number;
  /** Open StartPayment/DoPayment streams per JWT user, per POS API key (store), per peer address when unauthenticated. */
  readonly grpcMaxStreamsPerClient: number;
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of each gRPC connection. */
  readonly grpcMaxConcurrentStreamsPerConnection: number;
  /** Server keepalive pings: every `time` seconds, a connection whose ping is unanswered for `timeout` is closed. */
  readonly grpcKeepaliveTimeSeconds: number;
  readonly grpcKeepaliveTimeoutSeconds: number;
  /** A gRPC connection without any call for this long is closed (GOAWAY). */
  readonly grpcMaxConnectionIdleSeconds: number;
  /** HTTP: the request line and headers must arrive within this (Node's headersTimeout). */
  readonly httpHeadersTimeoutSeconds: number;
  /** HTTP: the whole request, body included, must arrive within this (Node's requestTimeout): the ceiling of the largest upload. */
  readonly httpRequestTimeoutSeconds: number;
  /** HTTP: a socket without any traffic for this long is closed (Fastify's connectionTimeout); above RECEIPT_TIMEOUT_SECONDS. */
  readonly httpConnectionTimeoutSeconds: number;
  /** HTTP: a body arriving slower than this (averaged over the window) is cut off with 408; 0 turns the check off. */
  readonly httpMinBodyBytesPerSecond: number;
  readonly httpBodyRateWindowSeconds: number;
  /** How often expired temp keys, idempotency keys and website-login requests are deleted. */
  readonly sweepIntervalSeconds: number;
  /** A used temp key is kept this long after its use (then "unknown" instead of "already used"). */
  readonly tempKeyUsedGraceSeconds: number;
}

/** `false`, a hop count (1 and up), or proxy addresses/CIDRs (and proxy-addr's `loopback`, `linklocal`, `uniquelocal`). */
export type TrustProxy = false | number | readonly string[];

/**
 * Bad settings, one problem per setting (`HTTP_PORT: …`), each on its own line of `message`:
 * what `npm start` and the CLI print, without a stack trace.
 */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string[]) {
    super(problems.map((problem) => `invalid configuration: ${problem}`).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The one place that reads the environment. Throws a ConfigError naming every bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  const problems = parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  const trustProxy = parseSetting('TRUST_PROXY', () => parseTrustProxy(env.TRUST_PROXY), problems);
  const hostLabels = env.HOST_LABELS ? parseSetting('HOST_LABELS', () => parseHostLabels(env.HOST_LABELS ?? ''), problems) : { ...defaultHostLabels };
  if (!parsed.success || problems.length > 0 || trustProxy === undefined || hostLabels === undefined) {
    // One line per setting, the first problem of each.
    const seen = new Set<string>();
    throw new ConfigError(problems.filter((problem) => {
      const key = problem.slice(0, problem.indexOf(':'));
      return seen.has(key) ? false : (seen.add(key), true);
    }));
  }
  const e = parsed.data;
  return Object.freeze({
    httpPort: e.HTTP_PORT,
    httpHost: e.HTTP_HOST,
    grpcPort: e.GRPC_PORT,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    logLevel: e.LOG_LEVEL,
    rpcUrls: Object.freeze({
      ...(e.RPC_URL_ETHEREUM && { ethereum: e.RPC_URL_ETHEREUM }),
      ...(e.RPC_URL_OPTIMISM && { optimism: e.RPC_URL_OPTIMISM }),
      ...(e.RPC_URL_BNB && { bnb: e.RPC_URL_BNB }),
      ...(e.RPC_URL_OPBNB && { opbnb: e.RPC_URL_OPBNB }),
    }),
    hostLabels: Object.freeze(hostLabels),
    masterKeyHex: e.MASTER_KEY,
    relayerPrivateKey: e.RELAYER_PRIVATE_KEY as `0x${string}` | undefined,
    tempKeyTtlSeconds: e.TEMP_KEY_TTL_SECONDS,
    authorizationTtlSeconds: e.AUTHORIZATION_TTL_SECONDS,
    receiptTimeoutSeconds: e.RECEIPT_TIMEOUT_SECONDS,
    jsonRpcBatchLimit: e.JSONRPC_BATCH_LIMIT,
    httpBodyLimitBytes: e.HTTP_BODY_LIMIT_BYTES,
    chainPollMs: e.CHAIN_POLL_MS,
    timeZone: e.TIME_ZONE,
    jwtTtlSeconds: e.JWT_TTL_SECONDS,
    trustProxy,
    ipfsApiUrl: e.IPFS_API_URL,
    ipfsMaxTotalBytes: e.IPFS_MAX_TOTAL_BYTES,
    ipfsMaxParts: e.IPFS_MAX_PARTS,
    payReceiverAddress: e.PAY_RECEIVER_ADDRESS as `0x${string}` | undefined,
    grpcHost: e.GRPC_HOST,
    grpcMaxMessageBytes: e.GRPC_MAX_MESSAGE_BYTES,
    paymentNetwork: e.PAYMENT_NETWORK,
    paymentPairingWindowSeconds: e.PAYMENT_PAIRING_WINDOW_SECONDS,
    paymentIdleTimeoutSeconds: e.PAYMENT_IDLE_TIMEOUT_SECONDS,
    defaultCurrency: e.DEFAULT_CURRENCY,
    rewardLifetimeDays: e.REWARD_LIFETIME_DAYS,
    redisUrl: e.REDIS_URL,
    grpcFirstMessageTimeoutSeconds: e.GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS,
    grpcMaxStreamsPerClient: e.GRPC_MAX_STREAMS_PER_CLIENT,
    grpcMaxConcurrentStreamsPerConnection: e.GRPC_MAX_CONCURRENT_STREAMS_PER_CONNECTION,
    grpcKeepaliveTimeSeconds: e.GRPC_KEEPALIVE_TIME_SECONDS,
    grpcKeepaliveTimeoutSeconds: e.GRPC_KEEPALIVE_TIMEOUT_SECONDS,
    grpcMaxConnectionIdleSeconds: e.GRPC_MAX_CONNECTION_IDLE_SECONDS,
    httpHeadersTimeoutSeconds: e.HTTP_HEADERS_TIMEOUT_SECONDS,
    httpRequestTimeoutSeconds: e.HTTP_REQUEST_TIMEOUT_SECONDS,
    httpConnectionTimeoutSeconds: e.HTTP_CONNECTION_TIMEOUT_SECONDS,
    httpMinBodyBytesPerSecond: e.HTTP_MIN_BODY_BYTES_PER_SECOND,
    httpBodyRateWindowSeconds: e.HTTP_BODY_RATE_WINDOW_SECONDS,
    sweepIntervalSeconds: e.SWEEP_INTERVAL_SECONDS,
    tempKeyUsedGraceSeconds: e.TEMP_KEY_USED_GRACE_SECONDS,
  });
}

/** Runs a setting's own parser; its error becomes that setting's problem line. */
function parseSetting<T>(name: string, parse: () => T, problems: string[]): T | undefined {
  try {
    return parse();
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
    return undefined;
  }
}

const proxyAddressNames = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY`: unset, `false` or `0` trusts no proxy; `N` (a whole number) trusts the N proxies
 * nearest to us, so the client address is the entry the outermost of them appended to
 * X-Forwarded-For; `10.0.0.0/8,192.168.1.7` (addresses, CIDRs, or `loopback`, `linklocal`,
 * `uniquelocal`) trusts those peers only. `true` ("every hop") is refused: with it the client
 * address is the leftmost entry, which the client itself writes.
 */
export function parseTrustProxy(text: string | undefined): TrustProxy {
  const value = (text ?? '').trim();
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true') {
    throw new Error('"true" would trust every hop, and any client can write X-Forwarded-For; give the number of proxies in front of the server (e.g. 1) or their addresses/CIDRs');
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 100) throw new Error(`${value} proxies in front of the server? give a hop count from 1 to 100, or addresses/CIDRs`);
    return hops;
  }
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  const bad = entries.filter((entry) => !isProxyAddress(entry));
  if (bad.length > 0) throw new Error(`not an address, CIDR or hop count: ${bad.join(', ')}`);
  return Object.freeze(entries);
}

function isProxyAddress(entry: string): boolean {
  if (proxyAddressNames.has(entry)) return true;
  const [address = '', prefix, ...extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** `HOST_LABELS="api=ethereum,api-op=optimism"` replaces the default map entirely. */
function parseHostLabels(text: string): Record<string, NetworkName> {
  const map: Record<string, NetworkName> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [label, network] = pair.split('=').map((p) => p.trim());
    if (!label || !network || !(networkNames as readonly string[]).includes(network)) {
      throw new Error(`entry "${pair}" is not label=network (networks: ${networkNames.join(', ')})`);
    }
    map[label.toLowerCase()] = network as NetworkName;
  }
  return map;
}
