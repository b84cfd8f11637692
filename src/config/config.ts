import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { networkNames, type NetworkName } from '../shared/networks.ts';
import { parseFailpoints, type FailpointAction, type FailpointName } from '../shared/failpoints.ts';

/** Default Host-label map of the chain API (docs/interfaces.md#json-rpc-apis); overridable by HOST_LABELS. */
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

/** The platform contracts a network may name instead of having them deployed (`CONTRACTS_<NETWORK>`). */
export const contractNames = ['vixpToken', 'didRegistry', 'settlement'] as const;
export type ContractAddresses = Readonly<Partial<Record<(typeof contractNames)[number], `0x${string}`>>>;

/** `vixpToken=0x…,didRegistry=0x…,settlement=0x…` (any of them) for one network. */
const contractAddresses = (network: NetworkName) => z.string().optional().transform((text, ctx): ContractAddresses | undefined => {
  if (text === undefined || text.trim() === '') return undefined;
  const addresses: Partial<Record<(typeof contractNames)[number], `0x${string}`>> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [name, address] = pair.split('=').map((p) => p.trim());
    if (!name || !(contractNames as readonly string[]).includes(name) || !address || !/^0x[0-9a-fA-F]{40}$/.test(address) || name in addresses) {
      ctx.addIssue({ code: 'custom', message: `entry "${pair}" is not name=0x-address, each name once (names: ${contractNames.join(', ')})` });
      return z.NEVER;
    }
    addresses[name as (typeof contractNames)[number]] = address as `0x${string}`;
  }
  return addresses;
}).describe(`contracts already on ${network}, used as they are instead of deployed at first start: \`vixpToken=0x…,didRegistry=0x…,settlement=0x…\` (any of them; the VIXP token must be owned by the relayer, which mints)`);

export const envSchema = z.object({
  HTTP_PORT: port.default(8080).describe('HTTP APIs port'),
  HTTP_HOST: z.string().default('0.0.0.0').describe('HTTP APIs bind address'),
  GRPC_PORT: port.default(50051).describe('payment server (gRPC) port'),
  DATA_DIR: z.string().default('./data').describe('SQLite file, keys, chain state, IPFS blocks (directory 0700, files 0600)'),
  DATABASE_URL: optionalUrl.describe('PostgreSQL (`postgres://user@host:5432/db`) instead of SQLite'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino level; secrets are redacted from every log line; `/healthz` requests are not logged'),
  RPC_URL_ETHEREUM: optionalUrl.describe('JSON-RPC node of ethereum instead of a local anvil'),
  RPC_URL_OPTIMISM: optionalUrl.describe('JSON-RPC node of optimism instead of a local anvil'),
  RPC_URL_BNB: optionalUrl.describe('JSON-RPC node of bnb instead of a local anvil'),
  RPC_URL_OPBNB: optionalUrl.describe('JSON-RPC node of opbnb instead of a local anvil'),
  CONTRACTS_ETHEREUM: contractAddresses('ethereum'),
  CONTRACTS_OPTIMISM: contractAddresses('optimism'),
  CONTRACTS_BNB: contractAddresses('bnb'),
  CONTRACTS_OPBNB: contractAddresses('opbnb'),
  HOST_LABELS: z.string().optional().describe('`label=network,…` map of the chain API (networks: ethereum, optimism, bnb, opbnb); replaces the default, SPEC\'s labels + `localhost`'),
  MASTER_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, 'MASTER_KEY must be 64 hex characters').optional().describe('64 hex characters: the AES-256-GCM key encryption key, from a secret manager; unset: `DATA_DIR/master.key`, created once'),
  RELAYER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional().describe('treasury/relayer key (`0x` + 64 hex); unset: generated once into `DATA_DIR/relayer.key`, encrypted with the master key'),
  TEMP_KEY_TTL_SECONDS: z.coerce.number().int().min(5).max(3600).default(300).describe('lifetime of a `net_getTempKey` key'),
  AUTHORIZATION_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(120).describe('validity of each signed EIP-3009 transfer authorization (`validBefore`)'),
  RECEIPT_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(60).describe('how long a relayed transaction is waited for before its authorization is cancelled or left to the sweep'),
  JSONRPC_BATCH_LIMIT: z.coerce.number().int().min(1).max(1000).default(50).describe('requests in one JSON-RPC batch'),
  HTTP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024).describe('largest JSON body'),
  CHAIN_CHECKPOINT_SECONDS: z.coerce.number().positive().max(86400).default(60).describe('the least time between two checkpoints of an embedded anvil\'s state into DATA_DIR/chains/<network>/state.json (more when a checkpoint takes long: they use at most 2% of the time; none while no block is mined; a due one waits for 1 s without a block, up to one more interval; one more at a clean stop). Blocks a crash of the node loses are rebuilt from the relayer\'s journal at the next start'),
  CHAIN_POLL_MS: z.coerce.number().int().min(10).default(50).describe('how often a chain client asks its node for the head while waiting for receipts'),
  SETTLEMENT_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(10_000).default(3).describe('transfers accepted within this many milliseconds of a batch\'s first one share its settlement transaction (docs/performance.md)'),
  SETTLEMENT_BLOCK_MARGIN_MS: z.coerce.number().int().min(0).max(60_000).default(250).describe('on a network we do not run that mines at intervals, a settlement batch is sent this long before the next block is due (learnt from the heads), so the transfers accepted between two blocks share one transaction; keep it above the time a transaction needs to reach the block producer'),
  SETTLEMENT_BATCH_MAX_ITEMS: z.coerce.number().int().min(1).max(150).default(100).describe('transfers in one settlement transaction at most; a full batch is sent at once'),
  RELAYER_LANES: z.coerce.number().int().min(1).max(32).default(4).describe('relayer accounts settlement batches are spread over, each with its own nonce sequence (the first is the platform account; the others are derived from it and need gas on an external node)'),
  REPRICE_AFTER_SECONDS: z.coerce.number().positive().max(86400).default(30).describe('a relayed transaction still unmined this long after it was signed is signed again with its nonce and higher fees (one whose fee cap is below the base fee is re-priced at the first stale sweep)'),
  MAX_FEE_PER_GAS_GWEI: z.coerce.number().positive().max(1_000_000).default(500).describe('the highest fee cap (maxFeePerGas, gwei) a re-priced transaction gets; one capped is logged as a warning'),
  CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).default(1).describe('blocks a transaction\'s block counts as, itself included, before it is final (a payment reaches `END_PAY` then); 1: as soon as it is mined. Keep `RECEIPT_TIMEOUT_SECONDS` above this many block times'),
  CONFIRMATIONS_ETHEREUM: z.coerce.number().int().min(1).max(1000).optional().describe('`CONFIRMATIONS` for ethereum only'),
  CONFIRMATIONS_OPTIMISM: z.coerce.number().int().min(1).max(1000).optional().describe('`CONFIRMATIONS` for optimism only'),
  CONFIRMATIONS_BNB: z.coerce.number().int().min(1).max(1000).optional().describe('`CONFIRMATIONS` for bnb only'),
  CONFIRMATIONS_OPBNB: z.coerce.number().int().min(1).max(1000).optional().describe('`CONFIRMATIONS` for opbnb only'),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(20).describe('on SIGTERM/SIGINT: listeners stop accepting at once, open payments get this long to finish (then end with a SPEC code), and the process exits by this deadline even when Redis, PostgreSQL or a node does not answer'),
  TIME_ZONE: z.string().default('Asia/Seoul').describe('IANA time zone of the timestamps in payments and rewards'),
  JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86400 * 30).default(3600).describe('access token lifetime'),
  TRUST_PROXY: z.string().default('false').describe('behind load balancers: their number (`1`) or their addresses/CIDRs (`10.0.0.0/8,192.168.1.7`); the client address is then read from X-Forwarded-For past them. `true` (every hop) is refused'),
  IPFS_API_URL: optionalUrl.describe('Kubo RPC (`http://127.0.0.1:5001`) instead of the embedded block store'),
  IPFS_MAX_TOTAL_BYTES: z.coerce.number().int().min(1).optional().describe('bytes of one IPFS add request body, multipart framing included; unset: 64 GiB'),
  IPFS_MAX_PARTS: z.coerce.number().int().min(1).optional().describe('parts (files + directories) in one IPFS add request; unset: 10000'),
  PAY_RECEIVER_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'PAY_RECEIVER_ADDRESS must be a 0x address').optional().describe('receiving account of `/v1/ict/pay`; unset: the treasury'),
  GRPC_HOST: z.string().default('0.0.0.0').describe('payment server bind address'),
  GRPC_MAX_MESSAGE_BYTES: z.coerce.number().int().min(1024).default(64 * 1024).describe('payment server message cap'),
  PAYMENT_NETWORK: z.enum(networkNames).default('ethereum').describe('network whose VIXP the payment server and REST pay move'),
  PAYMENT_PAIRING_WINDOW_SECONDS: z.coerce.number().positive().max(3600).default(30).describe('how long a POS waits for the app'),
  PAYMENT_IDLE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(120).describe('how long a stream waits for its next step'),
  DEFAULT_CURRENCY: z.string().regex(/^[A-Z]{3}$/, 'DEFAULT_CURRENCY must be an ISO 4217 code such as KRW').default('KRW').describe('ISO 4217 currency of `exchange_amount` when a request names none'),
  REWARD_LIFETIME_DAYS: z.coerce.number().positive().max(3650).default(90).describe('days from a reward\'s issue to its expiry'),
  REDIS_URL: optionalUrl.describe('Redis (`redis://host:6379`) pairing payment streams across instances; in-process without it'),
  // Bounded resources (README "Configuration", docs/decisions.md "Bounded resources").
  GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(10).describe('a StartPayment/DoPayment stream that sends nothing by then is ended `DEADLINE_EXCEEDED`'),
  GRPC_MAX_STREAMS_PER_CLIENT: z.coerce.number().int().min(1).max(100_000).default(20).describe('open StartPayment/DoPayment streams per JWT user, per POS (store API key), per peer address when unauthenticated, per instance; beyond: `RESOURCE_EXHAUSTED`'),
  GRPC_MAX_CONCURRENT_STREAMS_PER_CONNECTION: z.coerce.number().int().min(1).max(100_000).default(100).describe('HTTP/2 streams per gRPC connection'),
  GRPC_KEEPALIVE_TIME_SECONDS: z.coerce.number().positive().max(86400).default(60).describe('interval of the server\'s keepalive pings'),
  GRPC_KEEPALIVE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(20).describe('a connection not answering a ping within this is closed'),
  GRPC_MAX_CONNECTION_IDLE_SECONDS: z.coerce.number().positive().max(86400).default(300).describe('a gRPC connection without any call is closed'),
  HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(20).describe('time to send the request line and headers (checked every 30 s)'),
  HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(86400).default(600).describe('time to send the whole request, the ceiling of the largest upload (checked every 30 s)'),
  HTTP_CONNECTION_TIMEOUT_SECONDS: z.coerce.number().positive().max(86400).default(180).describe('an HTTP socket without traffic is closed (keep it above `RECEIPT_TIMEOUT_SECONDS`)'),
  HTTP_MIN_BODY_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(1024).describe('a request body slower than this over a window is cut off with 408 (`0` turns it off)'),
  HTTP_BODY_RATE_WINDOW_SECONDS: z.coerce.number().positive().max(3600).default(10).describe('the window of `HTTP_MIN_BODY_BYTES_PER_SECOND`'),
  SWEEP_INTERVAL_SECONDS: z.coerce.number().positive().max(86400).default(60).describe('how often expired temp keys, idempotency keys and website-login requests are deleted, and interrupted operations settled'),
  STALE_OPERATION_SECONDS: z.coerce.number().int().min(5).max(86400).default(300).describe('a refund, reward claim or reward cancellation untouched this long was interrupted (its instance stopped): its POS retry and the sweep settle it from the chain'),
  TEMP_KEY_USED_GRACE_SECONDS: z.coerce.number().min(0).max(86400 * 30).default(3600).describe('how long a used temp key is kept'),
  // Store webhooks (docs/webhooks.md).
  WEBHOOK_POLL_SECONDS: z.coerce.number().positive().max(3600).default(1).describe('how often an instance looks for webhook deliveries that are due'),
  WEBHOOK_RETRY_INITIAL_SECONDS: z.coerce.number().positive().max(86400).default(10).describe('wait after a webhook delivery\'s first failed attempt; it doubles after each failure, for 24 hours from the event'),
  WEBHOOK_RETRY_MAX_SECONDS: z.coerce.number().positive().max(86400).default(3600).describe('longest wait between two attempts of a webhook delivery'),
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(10).describe('a webhook receiver that has not answered by then fails this attempt'),
  // Test-only fault injection (docs/reliability.md); a server with it set logs a warning at start.
  FAILPOINTS: z.string().optional().describe('test only: `name=crash|error,…` failpoints at the step boundaries of the money paths (docs/reliability.md); `crash` is a SIGKILL of the process there'),
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
  /** Per network, platform contracts already deployed (CONTRACTS_<NETWORK>): used instead of deploying them. */
  readonly contractAddresses: Readonly<Partial<Record<NetworkName, ContractAddresses>>>;
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
  /** The least time between two checkpoints of an embedded anvil's state. */
  readonly chainCheckpointSeconds: number;
  /** Settlement batching: the window after a batch's first transfer, and its largest size. */
  readonly settlementBatch: { readonly windowMs: number; readonly maxItems: number; readonly blockMarginMs: number };
  /** Relayer accounts (lanes) settlement batches are spread over. */
  readonly relayerLanes: number;
  /** Re-pricing of stale relayed transactions: after how long unmined (seconds), and the fee cap's ceiling (gwei). */
  readonly repricing: { readonly afterSeconds: number; readonly maxFeePerGasGwei: number };
  /** Per network: blocks a transaction's block counts as, itself included, before its receipt is final (1: once mined). */
  readonly confirmations: Readonly<Record<NetworkName, number>>;
  /** The deadline of a graceful shutdown (SIGTERM/SIGINT), in seconds. */
  readonly shutdownTimeoutSeconds: number;
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
  readonly staleOperationSeconds: number;
  /** A used temp key is kept this long after its use (then "unknown" instead of "already used"). */
  readonly tempKeyUsedGraceSeconds: number;
  /** Store webhooks: poll interval, retry backoff (initial and largest wait), one attempt's timeout; seconds. */
  readonly webhooks: { readonly pollSeconds: number; readonly retryInitialSeconds: number; readonly retryMaxSeconds: number; readonly timeoutSeconds: number };
  /** Test only: armed failpoints (FAILPOINTS), empty in any real deployment. */
  readonly failpoints: ReadonlyMap<FailpointName, FailpointAction>;
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
  const failpoints = parseSetting('FAILPOINTS', () => parseFailpoints(env.FAILPOINTS), problems);
  if (!parsed.success || problems.length > 0 || trustProxy === undefined || hostLabels === undefined || failpoints === undefined) {
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
    contractAddresses: Object.freeze({
      ...(e.CONTRACTS_ETHEREUM && { ethereum: e.CONTRACTS_ETHEREUM }),
      ...(e.CONTRACTS_OPTIMISM && { optimism: e.CONTRACTS_OPTIMISM }),
      ...(e.CONTRACTS_BNB && { bnb: e.CONTRACTS_BNB }),
      ...(e.CONTRACTS_OPBNB && { opbnb: e.CONTRACTS_OPBNB }),
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
    chainCheckpointSeconds: e.CHAIN_CHECKPOINT_SECONDS,
    settlementBatch: { windowMs: e.SETTLEMENT_BATCH_WINDOW_MS, maxItems: e.SETTLEMENT_BATCH_MAX_ITEMS, blockMarginMs: e.SETTLEMENT_BLOCK_MARGIN_MS },
    relayerLanes: e.RELAYER_LANES,
    repricing: Object.freeze({ afterSeconds: e.REPRICE_AFTER_SECONDS, maxFeePerGasGwei: e.MAX_FEE_PER_GAS_GWEI }),
    confirmations: Object.freeze({
      ethereum: e.CONFIRMATIONS_ETHEREUM ?? e.CONFIRMATIONS,
      optimism: e.CONFIRMATIONS_OPTIMISM ?? e.CONFIRMATIONS,
      bnb: e.CONFIRMATIONS_BNB ?? e.CONFIRMATIONS,
      opbnb: e.CONFIRMATIONS_OPBNB ?? e.CONFIRMATIONS,
    }),
    shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT_SECONDS,
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
    staleOperationSeconds: e.STALE_OPERATION_SECONDS,
    tempKeyUsedGraceSeconds: e.TEMP_KEY_USED_GRACE_SECONDS,
    webhooks: Object.freeze({
      pollSeconds: e.WEBHOOK_POLL_SECONDS, retryInitialSeconds: e.WEBHOOK_RETRY_INITIAL_SECONDS,
      retryMaxSeconds: e.WEBHOOK_RETRY_MAX_SECONDS, timeoutSeconds: e.WEBHOOK_TIMEOUT_SECONDS,
    }),
    failpoints,
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
