/**
 * The configuration: the environment read once, through the schema (schema.ts), where each
 * setting is declared once. The `Config` type and its values follow from the schema by three rules:
 *
 * - a setting `FOO_BAR` is `config.fooBar`, as the schema parses it (`TRUST_PROXY` →
 *   `config.trustProxy`, `DATA_DIR` → `config.dataDir`, an absolute path);
 * - a duration in `_SECONDS` or `_DAYS` is also `config.<name>Ms` in milliseconds
 *   (`RECEIPT_TIMEOUT_SECONDS` → `config.receiptTimeoutMs`), a fee in `_GWEI` also
 *   `config.<name>Wei` (`MAX_FEE_PER_GAS_GWEI` → `config.maxFeePerGasWei`), so nothing converts units;
 * - the settings per network (`RPC_URL[S]_<NETWORK>`, `WS_URL_<NETWORK>`, `CONTRACTS_<NETWORK>`,
 *   `CONFIRMATIONS[_<NETWORK>]`, `EIP7702_<NETWORK>`) are one map each: `config.rpcUrls`, `config.wsUrls`,
 *   `config.contractAddresses`, `config.confirmations`, `config.eip7702`.
 */
import { parseGwei } from 'viem';
import type { z } from 'zod';
import { networkFacts, networkNames, type NetworkName } from '#shared/networks.ts';
import { envSchema } from './schema.ts';
import type { ContractAddresses } from './parsers.ts';

export { envSchema } from './schema.ts';
export { contractNames, defaultHostLabels, parseTrustProxy, type ContractAddresses, type TrustProxy } from './parsers.ts';

type Env = z.output<typeof envSchema>;
/** `GRPC_KEEPALIVE_TIME_SECONDS` → `grpcKeepaliveTimeSeconds`. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}` : Lowercase<S>;
type PerNetworkSetting = `${'RPC_URL' | 'RPC_URLS' | 'WS_URL' | 'CHAIN_ID' | 'CONTRACTS' | 'CONFIRMATIONS' | 'EIP7702'}_${Uppercase<NetworkName>}` | 'CONFIRMATIONS';
type Settings = { readonly [K in keyof Env as K extends PerNetworkSetting ? never : CamelCase<K & string>]: Env[K] };
type InMilliseconds = {
  readonly [K in keyof Env as K extends `${infer Name}_SECONDS` | `${infer Name}_DAYS` ? `${CamelCase<Name>}Ms` : never]: Env[K];
};
type InWei = { readonly [K in keyof Env as K extends `${infer Name}_GWEI` ? `${CamelCase<Name>}Wei` : never]: bigint };
interface PerNetwork {
  /**
   * A network's node endpoints, the preferred first (`RPC_URLS_<NETWORK>`, or `RPC_URL_<NETWORK>`
   * alone); a network without any runs on a supervised anvil.
   */
  readonly rpcUrls: Readonly<Partial<Record<NetworkName, readonly string[]>>>;
  /** A network's WebSocket (`WS_URL_<NETWORK>`, `ws://` or `wss://`): its `newHeads` subscription, beside its endpoints. */
  readonly wsUrls: Readonly<Partial<Record<NetworkName, string>>>;
  /**
   * The chain id a network's endpoints must answer: `CHAIN_ID_<NETWORK>` (a test chain, a testnet),
   * else the network's public chain (ethereum 1, optimism 10, bnb 56, opbnb 204). A supervised anvil
   * has its own (anvilChainIds), unchecked.
   */
  readonly chainIds: Readonly<Record<NetworkName, number>>;
  /** Per network, platform contracts already deployed: used instead of deploying them. */
  readonly contractAddresses: Readonly<Partial<Record<NetworkName, ContractAddresses>>>;
  /** Per network: blocks a transaction's block counts as, itself included, before its receipt is final. */
  readonly confirmations: Readonly<Record<NetworkName, number>>;
  /** Per network: its node runs EIP-7702 (`EIP7702_<NETWORK>`, on unless set `off`): custodial transfers take the account path. */
  readonly eip7702: Readonly<Record<NetworkName, boolean>>;
}
export interface Config extends Settings, InMilliseconds, InWei, PerNetwork {}

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
  if (!parsed.success) throw configError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  const settings = parsed.data;
  const refused = [...testSwitchesRefused(settings, env.NODE_ENV), ...custodyRefused(settings), ...ipfsRefused(settings), ...rpcUrlsRefused(settings)];
  if (refused.length > 0) throw configError(refused);

  const config: Record<string, unknown> = {};
  for (const name of Object.keys(envSchema.shape)) {
    if (perNetworkSettings.has(name)) continue;
    const value = (settings as Record<string, unknown>)[name];
    config[camelCase(name)] = value;
    const unit = /^(.+)_(SECONDS|DAYS|GWEI)$/.exec(name);
    if (!unit || value === undefined) continue;
    const [, base = '', suffix] = unit;
    if (suffix === 'GWEI') config[`${camelCase(base)}Wei`] = parseGwei((value as number).toFixed(9));
    else config[`${camelCase(base)}Ms`] = (value as number) * (suffix === 'DAYS' ? 86_400_000 : 1000);
  }
  const byNetwork = <T>(value: (network: NetworkName) => T | undefined) =>
    Object.freeze(Object.fromEntries(networkNames.flatMap((network) => {
      const v = value(network);
      return v === undefined ? [] : [[network, v]];
    })));
  const perNetwork: PerNetwork = {
    rpcUrls: byNetwork((network) => {
      const one = settings[`RPC_URL_${upper(network)}`];
      return settings[`RPC_URLS_${upper(network)}`] ?? (one === undefined ? undefined : Object.freeze([one]));
    }),
    wsUrls: byNetwork((network) => settings[`WS_URL_${upper(network)}`]),
    chainIds: byNetwork((network) => settings[`CHAIN_ID_${upper(network)}`] ?? networkFacts[network].chainId) as PerNetwork['chainIds'],
    contractAddresses: byNetwork((network) => settings[`CONTRACTS_${upper(network)}`]),
    confirmations: byNetwork((network) => settings[`CONFIRMATIONS_${upper(network)}`] ?? settings.CONFIRMATIONS) as PerNetwork['confirmations'],
    eip7702: byNetwork((network) => settings[`EIP7702_${upper(network)}`]) as PerNetwork['eip7702'],
  };
  return Object.freeze({ ...config, ...perNetwork }) as Config;
}

const upper = <N extends NetworkName>(network: N) => network.toUpperCase() as Uppercase<N>;
const perNetworkSettings: ReadonlySet<string> = new Set(['CONFIRMATIONS',
  ...networkNames.flatMap((network) => ['RPC_URL', 'RPC_URLS', 'WS_URL', 'CHAIN_ID', 'CONTRACTS', 'CONFIRMATIONS', 'EIP7702'].map((prefix) => `${prefix}_${upper(network)}`))]);
const camelCase = (name: string) => name.toLowerCase().replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

/**
 * FAILPOINTS (test only) arms failpoints only in a process a test started with VIXPAY_TEST_FAULTS=1,
 * and never in one started for production: a failpoint can SIGKILL its process (docs/reliability.md).
 */
function testSwitchesRefused(settings: z.output<typeof envSchema>, nodeEnv: string | undefined): string[] {
  if (settings.VIXPAY_TEST_FAULTS && nodeEnv === 'production') {
    return ['VIXPAY_TEST_FAULTS: test only, refused with NODE_ENV=production'];
  }
  if (settings.FAILPOINTS.size > 0 && !settings.VIXPAY_TEST_FAULTS) {
    return ['FAILPOINTS: test only, honoured with VIXPAY_TEST_FAULTS=1 alone (a failpoint can kill the process); unset it'];
  }
  return [];
}

/** KEY_CUSTODY=pkcs11 needs its token's three settings, and takes no relayer or master key of its own. */
function custodyRefused(settings: z.output<typeof envSchema>): string[] {
  if (settings.KEY_CUSTODY !== 'pkcs11') return [];
  const missing = (['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_PIN_FILE'] as const).filter((name) => !settings[name])
    .map((name) => `${name}: required with KEY_CUSTODY=pkcs11`);
  // A platform of file custody moves these into the token with `keys migrate --to pkcs11`, run with its file-custody settings.
  if (settings.RELAYER_PRIVATE_KEY) missing.push('RELAYER_PRIVATE_KEY: not used with KEY_CUSTODY=pkcs11 (the lanes\' keys are in the token; `vixpay keys migrate --to pkcs11` with KEY_CUSTODY=file moves this one there); unset it');
  if (settings.MASTER_KEY) missing.push('MASTER_KEY: not used with KEY_CUSTODY=pkcs11 (the key-encryption key is in the token; `vixpay keys migrate --to pkcs11` with KEY_CUSTODY=file moves what this one sealed); unset it');
  return missing;
}

/**
 * A network's endpoints are one list: `RPC_URL_<NETWORK>` (one) or `RPC_URLS_<NETWORK>` (several), not
 * both; `CHAIN_ID_<NETWORK>` names what they answer, so it comes with one of them.
 */
function rpcUrlsRefused(settings: z.output<typeof envSchema>): string[] {
  return networkNames.flatMap((network) => {
    const name = upper(network);
    if (settings[`WS_URL_${name}`] !== undefined && settings[`RPC_URL_${name}`] === undefined && settings[`RPC_URLS_${name}`] === undefined) {
      return [`WS_URL_${name}: only with RPC_URL_${name} or RPC_URLS_${name} (the anvil the platform runs for ${network} pushes its heads already)`];
    }
    if (settings[`CHAIN_ID_${name}`] !== undefined && settings[`RPC_URL_${name}`] === undefined && settings[`RPC_URLS_${name}`] === undefined) {
      return [`CHAIN_ID_${name}: only with RPC_URL_${name} or RPC_URLS_${name} (the anvil the platform runs for ${network} has its own chain id)`];
    }
    return settings[`RPC_URL_${name}`] !== undefined && settings[`RPC_URLS_${name}`] !== undefined
      ? [`RPC_URLS_${name}: not with RPC_URL_${name} (put that URL first in RPC_URLS_${name}, or keep one of them)`] : [];
  });
}

function ipfsRefused(settings: z.output<typeof envSchema>): string[] {
  if (settings.IPFS_BLOCKSTORE !== 'postgres') return [];
  if (!settings.DATABASE_URL) return ['IPFS_BLOCKSTORE: postgres keeps blocks in the DATABASE_URL PostgreSQL; set DATABASE_URL, or leave IPFS_BLOCKSTORE unset (blocks in DATA_DIR)'];
  if (settings.IPFS_API_URL) return ['IPFS_BLOCKSTORE: not used with IPFS_API_URL (the content is on the Kubo node); unset one of them'];
  return [];
}

/** One line per setting, the first problem of each. */
function configError(problems: string[]): ConfigError {
  const seen = new Set<string>();
  return new ConfigError(problems.filter((problem) => {
    const key = problem.slice(0, problem.indexOf(':'));
    return seen.has(key) ? false : (seen.add(key), true);
  }));
}
