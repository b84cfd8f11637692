/**
 * The settings whose text is more than one value (TRUST_PROXY, HOST_LABELS, CONTRACTS_<NETWORK>,
 * X402_EIP6492_FACTORIES):
 * their parsers, run by the schema (schema.ts). Each throws a message naming the bad entry.
 */
import { isIP } from 'node:net';
import { getAddress, isAddress } from 'viem';
import { networkNames, type NetworkName } from '#shared/networks.ts';

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

/** `HOST_LABELS="api=ethereum,api-op=optimism"` replaces the default map entirely. */
export function parseHostLabels(text: string | undefined): Readonly<Record<string, NetworkName>> {
  if (!text) return Object.freeze({ ...defaultHostLabels });
  const map: Record<string, NetworkName> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [label, network] = pair.split('=').map((p) => p.trim());
    if (!label || !network || !(networkNames as readonly string[]).includes(network)) {
      throw new Error(`entry "${pair}" is not label=network (networks: ${networkNames.join(', ')})`);
    }
    map[label.toLowerCase()] = network as NetworkName;
  }
  return Object.freeze(map);
}

/** `false`, a hop count (1 and up), or proxy addresses/CIDRs (and proxy-addr's `loopback`, `linklocal`, `uniquelocal`). */
export type TrustProxy = false | number | readonly string[];

const proxyAddressNames = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY`: behind a load balancer, which X-Forwarded-For entries to believe for the client
 * address (rate limits, website-login binding). Unset, `false` or `0` trusts no proxy (the socket's
 * peer is the client); `N` (a whole number) trusts the N proxies nearest to us, so the client
 * address is the entry the outermost of them appended; `10.0.0.0/8,192.168.1.7` (addresses, CIDRs,
 * or `loopback`, `linklocal`, `uniquelocal`) trusts those peers only. `true` ("every hop") is
 * refused: with it the client address is the leftmost entry, which the client itself writes.
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

/**
 * `RPC_URLS_<NETWORK>`: `https://…,https://…`, a network's node endpoints, the preferred first. Each
 * an http(s) URL, each once; unset or empty: none. An entry is named by its host only (a provider's
 * key sits in its path).
 */
export function parseRpcUrls(text: string | undefined): readonly string[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const urls: string[] = [];
  for (const [i, entry] of text.split(',').map((e) => e.trim()).entries()) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`entry ${i + 1} is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`entry ${i + 1} (${url.host}) is not http:// or https://`);
    if (urls.includes(entry)) throw new Error(`entry ${i + 1} (${url.host}) is listed twice`);
    urls.push(entry);
  }
  return Object.freeze(urls);
}

/** The platform contracts a network may name instead of having them deployed (`CONTRACTS_<NETWORK>`). */
export const contractNames = ['vixpToken', 'didRegistry', 'settlement', 'account', 'accountSettlement'] as const;
export type ContractAddresses = Readonly<Partial<Record<(typeof contractNames)[number], `0x${string}`>>>;

/** `vixpToken=0x…,didRegistry=0x…,settlement=0x…,account=0x…,accountSettlement=0x…` (any of them, each once) for one network. */
export function parseContractAddresses(text: string | undefined): ContractAddresses | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const addresses: Partial<Record<(typeof contractNames)[number], `0x${string}`>> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [name, address] = pair.split('=').map((p) => p.trim());
    if (!name || !(contractNames as readonly string[]).includes(name) || !address || !/^0x[0-9a-fA-F]{40}$/.test(address) || name in addresses) {
      throw new Error(`entry "${pair}" is not name=0x-address, each name once (names: ${contractNames.join(', ')})`);
    }
    addresses[name as (typeof contractNames)[number]] = address as `0x${string}`;
  }
  return addresses;
}

/**
 * `X402_EIP6492_FACTORIES`: `0x…,0x…`, the smart-wallet factories whose ERC-6492 deployments the
 * x402 facilitator sends (docs/x402.md#smart-wallet-payers). Each entry an address (checksummed when
 * it mixes cases), each once; unset or empty: none.
 */
export function parseAddressList(text: string | undefined): readonly `0x${string}`[] {
  if (text === undefined || text.trim() === '') return Object.freeze([]);
  const addresses: `0x${string}`[] = [];
  for (const entry of text.split(',').map((e) => e.trim())) {
    if (!isAddress(entry, { strict: true })) throw new Error(`entry "${entry}" is not a 0x address (40 hex digits, its checksum right when it mixes cases)`);
    const address = getAddress(entry);
    if (addresses.includes(address)) throw new Error(`${address} is listed twice`);
    addresses.push(address);
  }
  return Object.freeze(addresses);
}
