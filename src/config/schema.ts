/**
 * Every setting, declared once: its environment variable, type, range, default and meaning (the
 * `.describe()` text is the configuration reference of docs/operations.md, `npm run docs:config`).
 * config.ts derives the `Config` type and values from it.
 */
import path from 'node:path';
import { z } from 'zod';
import { networkFacts, networkNames, type NetworkName } from '#shared/networks.ts';
import { parseFailpoints } from '#shared/failpoints.ts';
import { parseAddressList, parseContractAddresses, parseHostLabels, parseRpcUrls, parseTrustProxy } from './parsers.ts';

const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z.string().url().optional();
const asHex = (text: string | undefined) => text as `0x${string}` | undefined;

/** A setting's own parser as a transform: its error becomes that setting's problem line. */
const parsedBy = <T>(parse: (text: string | undefined) => T) => (text: string | undefined, ctx: z.RefinementCtx): T => {
  try {
    return parse(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
};

/** One setting per network, `<PREFIX>_ETHEREUM` … `<PREFIX>_OPBNB`, in networkNames' order. */
function perNetwork<P extends string, S extends z.ZodType>(prefix: P, setting: (network: NetworkName) => S) {
  return Object.fromEntries(networkNames.map((network) => [`${prefix}_${network.toUpperCase()}`, setting(network)])) as
    { [N in NetworkName as `${P}_${Uppercase<N>}`]: S };
}

/** `vixpToken=0x…,didRegistry=0x…,settlement=0x…,account=0x…,accountSettlement=0x…` (any of them) for one network. */
const contractAddresses = (network: NetworkName) => z.string().optional().transform(parsedBy(parseContractAddresses))
  .describe(`contracts already on ${network}, used as they are instead of deployed at first start: \`vixpToken=0x…,didRegistry=0x…,settlement=0x…,account=0x…,accountSettlement=0x…\` (any of them; the VIXP token must be owned by the relayer, which mints)`);

export const envSchema = z.object({
  HTTP_PORT: port.default(8080).describe('HTTP APIs port'),
  HTTP_HOST: z.string().default('127.0.0.1').describe('HTTP APIs bind address; the default answers this machine only: `0.0.0.0` (or an interface\'s address) opens it to the network, for a container, behind a load balancer, in a fleet (docs/operations.md)'),
  GRPC_PORT: port.default(50051).describe('payment server (gRPC) port'),
  DATA_DIR: z.string().default('./data').transform((dir) => path.resolve(dir)).describe('SQLite file, keys, chain state, IPFS blocks (directory 0700, files 0600)'),
  DATABASE_URL: optionalUrl.describe('PostgreSQL (`postgres://user@host:5432/db`) instead of SQLite'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino level; secrets are redacted from every log line; `/healthz` requests are not logged'),
  ...perNetwork('RPC_URL', (network) => optionalUrl.describe(`JSON-RPC node of ${network} instead of a local anvil (one endpoint; \`RPC_URLS_${network.toUpperCase()}\` for several)`)),
  ...perNetwork('RPC_URLS', (network) => z.string().optional().transform(parsedBy(parseRpcUrls))
    .describe(`\`https://…,https://…\`: the JSON-RPC endpoints of ${network} instead of a local anvil, the preferred first; a throttled (429, −32005) or failing one is left aside for a while and the next one used (docs/operations.md#node-providers). Not with \`RPC_URL_${network.toUpperCase()}\``)),
  ...perNetwork('WS_URL', (network) => optionalUrl.refine((url) => url === undefined || /^wss?:\/\//i.test(url), 'a ws:// or wss:// URL')
    .describe(`with \`RPC_URL[S]_${network.toUpperCase()}\`: the node's WebSocket (\`wss://…\`, often the provider's same key), for its \`newHeads\` subscription: receipts and the block schedule follow pushed heads instead of polling, which runs only while the subscription is down (made again after 1 s, 2 s… up to 30 s; docs/operations.md#node-providers). Unset: polled over HTTP`)),
  ...perNetwork('CHAIN_ID', (network) => z.string().regex(/^[1-9][0-9]{0,14}$/, 'a chain id in decimal').optional().transform((id) => (id === undefined ? undefined : Number(id)))
    .describe(`with \`RPC_URL[S]_${network.toUpperCase()}\`: the chain id its node must answer, when it is a test chain or testnet standing for ${network} (anvil 31337, a testnet's id); unset: ${network}'s own, ${networkFacts[network].chainId}. A node answering another id refuses the start`)),
  ...perNetwork('CONTRACTS', contractAddresses),
  ...perNetwork('EIP7702', (network) => z.enum(['on', 'off']).default('on').transform((flag) => flag === 'on')
    .describe(`whether ${network}'s node runs EIP-7702 (every network we name has since 2025; \`off\` for a node or test chain without it, an anvil before Prague): \`on\`, custodial accounts move every token through the account contract they delegate to (VIXP and USDC included: fewer gas a transfer than EIP-3009, docs/decisions/tokens.md); \`off\`, by EIP-3009, and a token without it cannot be allowed`)),
  HOST_LABELS: z.string().optional().transform(parsedBy(parseHostLabels)).describe('`label=network,…` map of the chain API (networks: ethereum, optimism, bnb, opbnb); replaces the default, the contract\'s labels + `localhost`'),
  MASTER_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, 'MASTER_KEY must be 64 hex characters').optional().describe('64 hex characters: the AES-256-GCM key encryption key, from a secret manager; unset: `DATA_DIR/master.key`, created once. File custody only: with `KEY_CUSTODY=pkcs11` the key-encryption key is generated in the token and this is refused'),
  RELAYER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional().transform(asHex).describe('treasury/relayer key (`0x` + 64 hex); unset: generated once into `DATA_DIR/relayer.key`, encrypted with the master key'),
  KEY_CUSTODY: z.enum(['file', 'pkcs11']).default('file').describe('where the platform\'s keys live: `file` (the platform key in `DATA_DIR/relayer.key` or `RELAYER_PRIVATE_KEY`, lanes derived from it) or `pkcs11` (each lane a secp256k1 key inside an HSM token, never extractable, and every secret sealed by an AES key generated there: no master key; needs `PKCS11_MODULE`, `PKCS11_TOKEN_LABEL`, `PKCS11_PIN_FILE`; docs/operations.md)'),
  PKCS11_MODULE: z.string().optional().transform((file) => file && path.resolve(file)).describe('with `KEY_CUSTODY=pkcs11`: the HSM\'s PKCS#11 library, e.g. `/usr/lib/softhsm/libsofthsm2.so`, `/opt/cloudhsm/lib/libcloudhsm_pkcs11.so`'),
  PKCS11_TOKEN_LABEL: z.string().min(1).max(32).optional().describe('with `KEY_CUSTODY=pkcs11`: the label of the token (slot) holding the keys'),
  PKCS11_PIN_FILE: z.string().optional().transform((file) => file && path.resolve(file)).describe('with `KEY_CUSTODY=pkcs11`: a file (0600) holding the token\'s user PIN (CloudHSM: `user:password`), read at each login, so a changed PIN needs no restart'),
  PKCS11_UNWRAPPED_KEYS: z.coerce.number().int().min(0).max(100_000).default(256).describe('with `KEY_CUSTODY=pkcs11`: how many wallets\' keys stay unwrapped inside the token after a signature, for the next ones (session objects, sensitive and not extractable: the platform keeps their handles, never their bytes); beyond it the least recently used is destroyed, and all go with the token\'s session; `0` unwraps a key for each signature'),
  TEMP_KEY_TTL_SECONDS: z.coerce.number().int().min(5).max(3600).default(300).describe('lifetime of a `net_getTempKey` key'),
  AUTHORIZATION_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(120).describe('validity of each signed EIP-3009 transfer authorization (`validBefore`)'),
  RECEIPT_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(60).describe('how long a relayed transaction is waited for before its authorization is cancelled or left to the sweep'),
  JSONRPC_BATCH_LIMIT: z.coerce.number().int().min(1).max(1000).default(50).describe('requests in one JSON-RPC batch'),
  HTTP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024).describe('largest JSON body'),
  CHAIN_CHECKPOINT_SECONDS: z.coerce.number().positive().max(86400).default(60).describe('the least time between two checkpoints of an embedded anvil\'s state into DATA_DIR/chains/<network>/state.json (more when a checkpoint takes long: they use at most 2% of the time; none while no block is mined; a due one waits for 1 s without a block, up to one more interval; one more at a clean stop). Blocks a crash of the node loses are rebuilt from the relayer\'s journal at the next start'),
  CHAIN_CALL_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(5).describe('the deadline of every call to a chain node, its retries included: a node slower than this fails the call (`chain.unavailable`, or the transfer\'s outcome left pending) instead of keeping its caller waiting. It also bounds each call of a did:ethr resolution (VP login, verify-vc, verify-vp, create-vp, `vixpay receipt verify`), which then answers `chain.unavailable` instead of a refused presentation or credential. No database transaction or lock is ever held across a node call'),
  CHAIN_POLL_MS: z.coerce.number().int().min(10).default(50).describe('how often a chain client asks its node for the head while waiting for receipts'),
  SETTLEMENT_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(10_000).default(3).describe('transfers accepted within this many milliseconds of a batch\'s first one share its settlement transaction (docs/performance.md)'),
  SETTLEMENT_BLOCK_MARGIN_MS: z.coerce.number().int().min(0).max(60_000).default(250).describe('on a network we do not run that mines at intervals, a settlement batch is sent this long before the next block is due (learnt from the heads), so the transfers accepted between two blocks share one transaction; keep it above the time a transaction needs to reach the block producer'),
  SETTLEMENT_BATCH_MAX_ITEMS: z.coerce.number().int().min(1).max(150).default(100).describe('transfers in one settlement transaction at most; a full batch is sent at once'),
  RELAYER_LANES: z.coerce.number().int().min(1).max(32).default(4).describe('relayer accounts settlement batches are spread over, each with its own nonce sequence (the first is the platform account; the others are derived from it and need gas on an external node)'),
  REPRICE_AFTER_SECONDS: z.coerce.number().positive().max(86400).default(30).describe('a relayed transaction still unmined this long after it was signed is signed again with its nonce and higher fees (one whose fee cap is below the base fee is re-priced at the first stale sweep)'),
  MAX_FEE_PER_GAS_GWEI: z.coerce.number().positive().max(1_000_000).default(500).describe('the highest fee cap (maxFeePerGas, gwei) a re-priced transaction gets; one capped is logged as a warning'),
  CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).default(1).describe('blocks a transaction\'s block counts as, itself included, before it is final (a payment reaches `END_PAY` then); 1: as soon as it is mined. Keep `RECEIPT_TIMEOUT_SECONDS` above this many block times'),
  ...perNetwork('CONFIRMATIONS', (network) => z.coerce.number().int().min(1).max(1000).optional().describe(`\`CONFIRMATIONS\` for ${network} only`)),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(20).describe('on SIGTERM/SIGINT: listeners stop accepting at once, open payments get this long to finish (then end with a contract code), and the process exits by this deadline even when Redis, PostgreSQL or a node does not answer'),
  TIME_ZONE: z.string().default('Asia/Seoul').describe('IANA time zone of the timestamps in payments and rewards'),
  JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86400 * 30).default(3600).describe('access token lifetime'),
  // Login throttling (docs/decisions/identity.md "Login throttling per account and per address").
  LOGIN_WINDOW_SECONDS: z.coerce.number().int().min(60).max(86400).default(900).describe('the sliding window failed password checks are counted in (app logins, REST pay and console logins, each population apart)'),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(1000).default(5).describe('failed password checks of one account (an app user, or a console operator) within the window, from any address; then its logins answer 429 with Retry-After until the oldest leaves the window'),
  LOGIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(30).describe('failed password checks from one client address within the window (app users and console operators counted apart) before the address is slowed: its attempts on an account it has been failing on then answer 429 with Retry-After for 1 s after that failure, doubling with each further failure up to the window; the right password of any account it has not been failing on is always checked (stores behind one NAT share an address)'),
  TRUST_PROXY: z.string().default('false').transform(parsedBy(parseTrustProxy)).describe('behind load balancers: their number (`1`) or their addresses/CIDRs (`10.0.0.0/8,192.168.1.7`); the client address is then read from X-Forwarded-For past them. `true` (every hop) is refused'),
  IPFS_API_URL: optionalUrl.describe('Kubo RPC (`http://127.0.0.1:5001`) instead of the embedded block store'),
  IPFS_BLOCKSTORE: z.enum(['file', 'postgres']).default('file').describe('where the embedded IPFS keeps blocks (IPFS_API_URL unset): `file`, this instance\'s `DATA_DIR/ipfs/blocks`; `postgres`, the tables of DATABASE_URL, shared by every instance of a fleet (docs/ipfs-api.md#a-fleets-content)'),
  IPFS_MAX_TOTAL_BYTES: z.coerce.number().int().min(1).optional().describe('bytes of one IPFS add request body, multipart framing included; unset: 64 GiB'),
  IPFS_MAX_PARTS: z.coerce.number().int().min(1).optional().describe('parts (files + directories) in one IPFS add request; unset: 10000'),
  PAY_RECEIVER_ADDRESS: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'PAY_RECEIVER_ADDRESS must be a 0x address').optional().transform(asHex).describe('receiving account of `/v1/ict/pay`; unset: the treasury'),
  GRPC_HOST: z.string().default('127.0.0.1').describe('payment server bind address; the default answers this machine only: `0.0.0.0` opens it to the network, as `HTTP_HOST`'),
  GRPC_MAX_MESSAGE_BYTES: z.coerce.number().int().min(1024).default(64 * 1024).describe('payment server message cap'),
  PAYMENT_NETWORK: z.enum(networkNames).default('ethereum').describe('network whose VIXP the payment server and REST pay move'),
  PAYMENT_PAIRING_WINDOW_SECONDS: z.coerce.number().positive().max(3600).default(30).describe('how long a POS waits for the app'),
  PAYMENT_IDLE_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(120).describe('how long a stream waits for its next step'),
  DEFAULT_CURRENCY: z.string().regex(/^[A-Z]{3}$/, 'DEFAULT_CURRENCY must be an ISO 4217 code such as KRW').default('KRW').describe('ISO 4217 currency of `exchange_amount` when a request names none'),
  REWARD_LIFETIME_DAYS: z.coerce.number().positive().max(3650).default(90).describe('days from a reward\'s issue to its expiry'),
  REDIS_URL: optionalUrl.describe('Redis (`redis://host:6379`) pairing payment streams across instances; in-process without it'),
  // Bounded resources (docs/operations.md, docs/decisions/operating.md "Bounded resources").
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
  // The x402 facilitator (docs/x402.md).
  X402_EIP6492_FACTORIES: z.string().optional().transform(parsedBy(parseAddressList)).describe('`0x…,0x…`: smart-wallet factories whose ERC-6492 signatures the x402 facilitator settles for a wallet not deployed yet, sending (and paying the gas of) the factory\'s deployment before the transfer (docs/x402.md#smart-wallet-payers); each a 0x address (checksummed when it mixes cases), once; unset or empty: none, such a payment is refused `eip6492_factory_not_allowed`'),
  X402_MAX_HOLD_SECONDS: z.coerce.number().int().min(0).max(86400).default(600).describe('how far ahead an x402 authorization\'s `validAfter` may lie: one due within this is accepted and held (sent by the periodic sweep once due, nothing reserved or paid for meanwhile), one further ahead is refused at verify and settle `invalid_exact_evm_payload_authorization_valid_after` (docs/x402.md#validafter-in-the-future); `0` holds nothing, as the published verifier'),
  // Test-only fault injection (docs/reliability.md "Failpoints"): refused unless a test turns it on, never in production.
  FAILPOINTS: z.string().optional().transform(parsedBy(parseFailpoints)).describe('test only, with `VIXPAY_TEST_FAULTS=1`: `name=crash|crash-chain|error,…` failpoints at the step boundaries of the money paths (docs/reliability.md); `crash` is a SIGKILL of the process there. Set without `VIXPAY_TEST_FAULTS=1`, the server refuses to start'),
  VIXPAY_TEST_FAULTS: z.enum(['0', '1']).default('0').transform((flag) => flag === '1').describe('test only: `1` lets `FAILPOINTS` arm failpoints; refused with `NODE_ENV=production`'),
});
