import { createPublicClient, defineChain, TimeoutError, type EIP1193RequestFn, type HttpTransport, type PublicClient, type Transport } from 'viem';
import { DomainError } from '#shared/errors.ts';
import type { ChainEndpoint } from './chain-supervisor.ts';
import { createReceiptWatcher, type ReceiptWatcher } from './receipt-watcher.ts';
import type { OnRpcCall } from './node-rpc-calls.ts';
import { createEndpointPool, hostOf, type EndpointOutcome, type EndpointState } from './endpoint-pool.ts';
import { createBlockSchedule, type BlockSchedule } from './block-schedule.ts';
import { createHeadSource, type HeadSource } from './head-source.ts';
import { explorerOf, networkFacts, networkNames, type NetworkName } from '#shared/networks.ts';

export interface ChainClient {
  network: NetworkName;
  chainId: number;
  managed: boolean;
  /** The preferred endpoint's JSON-RPC URL, for libraries that make their own connection (ethr-did-resolver). */
  url: string;
  /** Every endpoint's URL (`RPC_URLS_<NETWORK>`), the preferred first. */
  urls: readonly string[];
  /** Every endpoint of the network, the preferred first: each one's state and calls. */
  endpoints(): EndpointState[];
  client: PublicClient;
  /** The network's one receipt watcher: every wait for a receipt shares its polling. */
  receipts: ReceiptWatcher;
  /** When the network mines its next block, learnt from the heads its receipt watcher reads. */
  blocks: BlockSchedule;
  /**
   * The network's `newHeads` subscription: `WS_URL_<NETWORK>`, or the WebSocket of an anvil we run
   * (same port); none for an external node without `WS_URL_<NETWORK>`, which is polled.
   */
  heads?: HeadSource;
  /** The highest block the network showed (answers, pushed heads) since the last call; undefined when none. */
  highestSince(): bigint | undefined;
}

export type ChainClients = Readonly<Record<NetworkName, ChainClient>>;

/**
 * One viem public client per network, with the chain id the node itself reports. `onRpcCall` is told
 * of every JSON-RPC call they send over HTTP (each call of a batch), for `vixpay_node_rpc_calls_total`.
 */
export async function createChainClients(
  endpoints: Readonly<Record<NetworkName, ChainEndpoint>>,
  pollingInterval: number,
  confirmations: Readonly<Partial<Record<NetworkName, number>>> = {},
  onRpcCall?: OnRpcCall,
  /** The deadline of each call, retries included (`CHAIN_CALL_TIMEOUT_SECONDS`). */
  callTimeoutMs = 5_000,
  /** Told of each call's end at each endpoint (`vixpay_node_endpoint_*`). */
  onEndpointOutcome?: (network: NetworkName, endpoint: EndpointState, outcome: EndpointOutcome) => void,
): Promise<ChainClients> {
  const entries = await Promise.all(
    networkNames.map(async (network): Promise<[NetworkName, ChainClient]> => {
      const endpoint = endpoints[network];
      const urls = endpoint.urls ?? [endpoint.url];
      const chainId = await agreedChainId(network, urls, callTimeoutMs, onRpcCall);
      if (endpoint.chainId !== undefined && chainId !== endpoint.chainId) {
        const upper = network.toUpperCase();
        throw new DomainError('chain.unavailable', endpoint.chainId === networkFacts[network].chainId
          ? `the node of ${network} (${hostOf(urls[0] ?? '')}) answers chain id ${chainId}, not ${network}'s ${endpoint.chainId}: a node of another chain, refused; for a test chain or testnet standing for ${network}, set CHAIN_ID_${upper}=${chainId}`
          : `the node of ${network} (${hostOf(urls[0] ?? '')}) answers chain id ${chainId}, not CHAIN_ID_${upper}=${endpoint.chainId}: refused`);
      }
      const chain = defineChain({
        id: chainId,
        name: network,
        nativeCurrency: { ...networkFacts[network].coin, decimals: 18 },
        ...(explorerOf(network, chainId) && { blockExplorers: { default: { name: 'explorer', url: explorerOf(network, chainId) as string } } }),
        rpcUrls: { default: { http: [...urls] } },
      });
      // Calls made in one tick (the balance reads, block numbers and receipts of concurrent transfers)
      // go to an endpoint as one JSON-RPC batch: one HTTP round trip instead of one each.
      const pool = createEndpointPool({
        network, urls, callTimeoutMs, onRpcCall,
        onOutcome: onEndpointOutcome && ((state, outcome) => onEndpointOutcome(network, state, outcome)),
      });
      const wsUrl = endpoint.wsUrl ?? (endpoint.managed ? endpoint.url.replace(/^http/, 'ws') : undefined);
      const heads = wsUrl === undefined ? undefined : createHeadSource({ url: wsUrl, onRpcCall: onRpcCall && ((method) => onRpcCall(network, method)) });
      const client = createPublicClient({ chain, transport: heads ? fromPushedHead(pool.transport, heads) : pool.transport, pollingInterval });
      const blocks = createBlockSchedule();
      const watcher = createReceiptWatcher(client, pollingInterval, {
        confirmations: confirmations[network] ?? 1, schedule: blocks, ...(heads && { source: heads }),
      });
      let pushedSince: bigint | undefined;
      heads?.onHead(({ number }) => { if (pushedSince === undefined || number > pushedSince) pushedSince = number; });
      // The subscription ends with the watcher (before the nodes stop).
      const receipts: ReceiptWatcher = { wait: (hash, timeoutMs, options) => watcher.wait(hash, timeoutMs, options), close() { watcher.close(); heads?.close(); } };
      return [network, {
        network, chainId, managed: endpoint.managed, url: urls[0] ?? endpoint.url, urls, endpoints: pool.states, client, receipts, blocks,
        ...(heads && { heads }),
        highestSince() {
          const answered = pool.highestSince();
          const pushed = pushedSince;
          pushedSince = undefined;
          return answered === undefined || (pushed !== undefined && pushed > answered) ? pushed : answered;
        },
      }];
    }),
  );
  return Object.freeze(Object.fromEntries(entries) as Record<NetworkName, ChainClient>);
}

/**
 * The chain id every endpoint of a network answers: one that does not answer is left to the pool
 * (it may be back later), one that answers another chain refuses the start, as none answering does.
 */
async function agreedChainId(network: NetworkName, urls: readonly string[], callTimeoutMs: number, onRpcCall: OnRpcCall | undefined): Promise<number> {
  const answers = await Promise.all(urls.map(async (url, index) => {
    const probe = createPublicClient({ transport: createEndpointPool({ network, urls: [url], callTimeoutMs, onRpcCall, batch: false }).transport });
    return { index, host: hostOf(url), id: await probe.getChainId().catch((cause: unknown) => ({ cause })) };
  }));
  const ids = answers.flatMap(({ id, ...rest }) => (typeof id === 'number' ? [{ ...rest, id }] : []));
  const first = ids[0];
  if (!first) {
    throw new DomainError('chain.unavailable', `network ${network} does not answer`, { cause: (answers[0]?.id as { cause: unknown } | undefined)?.cause });
  }
  const other = ids.find((a) => a.id !== first.id);
  if (other) {
    throw new DomainError('chain.unavailable',
      `the endpoints of ${network} are on different chains: endpoint ${first.index} (${first.host}) answers chain id ${first.id}, endpoint ${other.index} (${other.host}) ${other.id}`);
  }
  return first.id;
}

/**
 * Every call of the transport answers within `ms`, its retries included (viem's own timeout bounds
 * one attempt only): a slow node fails a call with viem's TimeoutError, which callers already take
 * as a node that does not answer. The attempt still running is left to its own timeout.
 */
export function withDeadline(transport: HttpTransport, ms: number): HttpTransport {
  return ((params: Parameters<HttpTransport>[0]) => {
    const built = transport(params);
    const request = ((args, options) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError({ body: args as { [key: string]: unknown }, url: built.value?.url ?? '' })), ms);
      });
      return Promise.race([built.request(args, options), late]).finally(() => clearTimeout(timer));
    }) as typeof built.request;
    return { ...built, request };
  }) as HttpTransport;
}

/**
 * While the network's subscription is up, what one block's fees need is asked once per block: the
 * latest block without its transactions (`eth_getBlockByNumber('latest', false)`: the base fee, gas
 * limit and time a send reads) is the header pushed, and `eth_maxPriorityFeePerGas` is asked again
 * only once a new head came and 12 s went by (one Ethereum slot; a few blocks of a shorter chain): the
 * tip moves slowly, and a send priced too low is re-priced by the stale sweep. Anything else goes to
 * the endpoints.
 */
const tipReuseMs = 12_000;
function fromPushedHead(transport: Transport, heads: HeadSource): Transport {
  return ((params: Parameters<Transport>[0]) => {
    const built = transport(params);
    let tip: { hash: string; at: number; answer: Promise<unknown> } | undefined;
    const request = (async (args, options) => {
      const head = heads.up() ? heads.latest() : undefined;
      if (head && args.method === 'eth_getBlockByNumber') {
        const [tag, full] = (args.params ?? []) as [unknown, unknown];
        if (tag === 'latest' && full === false) return { ...head.rpc, transactions: head.rpc.transactions ?? [], uncles: head.rpc.uncles ?? [] };
      }
      if (head && args.method === 'eth_maxPriorityFeePerGas') {
        if (!tip || (tip.hash !== head.hash && Date.now() - tip.at >= tipReuseMs)) {
          const answer = built.request(args, options);
          const asked = { hash: head.hash, at: Date.now(), answer };
          tip = asked;
          answer.catch(() => { if (tip === asked) tip = undefined; });
        }
        return tip.answer;
      }
      return built.request(args, options);
    }) as EIP1193RequestFn;
    return { ...built, request };
  }) as Transport;
}
