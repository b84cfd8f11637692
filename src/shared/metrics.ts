import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Values read only when Prometheus scrapes: each answers one number per network. */
export interface ScrapeSources {
  /** Journaled transactions not yet known to be mined. */
  journalBacklog(): Promise<Record<string, number>>;
  /** The relayer's native balance (gas), in ether. */
  relayerGasBalance(): Promise<Record<string, number>>;
  /** Each relayer lane (by index, 0 = the platform account): gas in ether where read, journaled transactions not known mined. */
  relayerLanes(): Promise<Array<{ network: string; lane: string; gasEther?: number | undefined; gasLow?: boolean | undefined; pending: number }>>;
  /** Transfers waiting for their settlement batch or its receipt. */
  settlementQueue(): Record<string, number>;
}

/**
 * The platform's Prometheus metrics on a registry of its own (two platforms in one process, as the
 * tests run them, never share counters). Every label has a bounded set of values: route templates,
 * method and call names, result codes, network names; never a URL, an address or an id.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  let sources: ScrapeSources | undefined;

  const perNetwork = async (gauge: Gauge<'network'>, read: (s: ScrapeSources) => Promise<Record<string, number>>) => {
    if (!sources) return;
    gauge.reset();
    for (const [network, value] of Object.entries(await read(sources))) gauge.set({ network }, value);
  };

  return {
    registry,
    httpRequests: new Counter({
      name: 'vixpay_http_requests_total', help: 'HTTP requests answered, by route template, method and status',
      labelNames: ['route', 'method', 'status'] as const, registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'vixpay_http_request_duration_seconds', help: 'HTTP request latency, by route template, method and status',
      labelNames: ['route', 'method', 'status'] as const, buckets: latencyBuckets, registers: [registry],
    }),
    jsonRpcCalls: new Counter({
      name: 'vixpay_jsonrpc_calls_total', help: 'JSON-RPC method calls, by method and resultCode (`error` for a protocol error)',
      labelNames: ['method', 'result_code'] as const, registers: [registry],
    }),
    jsonRpcDuration: new Histogram({
      name: 'vixpay_jsonrpc_call_duration_seconds', help: 'JSON-RPC method latency, by method',
      labelNames: ['method'] as const, buckets: latencyBuckets, registers: [registry],
    }),
    grpcCalls: new Counter({
      name: 'vixpay_grpc_calls_total', help: 'PaymentsService calls ended, by call and the res_code of their last answer (`none` if none was sent)',
      labelNames: ['call', 'res_code'] as const, registers: [registry],
    }),
    grpcDuration: new Histogram({
      name: 'vixpay_grpc_call_duration_seconds', help: 'PaymentsService call duration, by call (a stream from open to close)',
      labelNames: ['call'] as const, buckets: [...latencyBuckets, 30, 60, 120], registers: [registry],
    }),
    grpcOpenStreams: new Gauge({
      name: 'vixpay_grpc_open_streams', help: 'Open PaymentsService streams, by kind (pos: StartPayment, app: DoPayment)',
      labelNames: ['kind'] as const, registers: [registry],
    }),
    transferDuration: new Histogram({
      name: 'vixpay_transfer_duration_seconds', help: 'Wallet transfers from request to outcome, by network, operation (transfer, custody) and outcome (settled, refused, pending)',
      labelNames: ['network', 'operation', 'outcome'] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60], registers: [registry],
    }),
    settlementBatchSize: new Histogram({
      name: 'vixpay_settlement_batch_size', help: 'Transfers carried by each settlement transaction journaled, by network',
      labelNames: ['network'] as const, buckets: [1, 2, 5, 10, 20, 50, 100, 150], registers: [registry],
    }),
    relayerGasUsed: new Counter({
      name: 'vixpay_relayer_gas_used_total', help: 'Gas used by the relayer\'s mined transactions (the platform pays it), by network',
      labelNames: ['network'] as const, registers: [registry],
    }),
    relayerFeesPaid: new Counter({
      name: 'vixpay_relayer_fees_paid_ether_total', help: 'Fees paid for the relayer\'s mined transactions (execution, plus the L1 data and operator fees on OP-stack networks), in the network\'s coin (ETH, BNB), by network',
      labelNames: ['network'] as const, registers: [registry],
    }),
    relayerFeeParts: new Counter({
      name: 'vixpay_relayer_fee_parts_ether_total', help: 'The same fees by part (execution: gas used × effective gas price; l1_data: the receipt\'s l1Fee; operator), in the network\'s coin, by network, part and purpose (settlement: transactions that executed transfers; other: deploys, mints, cancellations)',
      labelNames: ['network', 'part', 'purpose'] as const, registers: [registry],
    }),
    settlementLastFee: new Gauge({
      name: 'vixpay_settlement_last_fee_wei', help: 'The last mined settlement transaction\'s fee in wei, in the network\'s coin (ETH, BNB), by network, part (execution, l1_data, operator, total) and per (transaction: its whole fee; transfer: over the transfers it executed, to the nearest wei); the running sums are vixpay_relayer_fee_parts_ether_total{purpose="settlement"} over vixpay_settlement_transfers_per_transaction\'s _sum and _count',
      labelNames: ['network', 'part', 'per'] as const, registers: [registry],
    }),
    settlementTransfersPerTransaction: new Histogram({
      name: 'vixpay_settlement_transfers_per_transaction', help: 'Transfers executed by each mined settlement transaction (its AuthorizationUsed logs, and each account transfer: a token Transfer out of an account no AuthorizationUsed names), by network',
      labelNames: ['network'] as const, buckets: [1, 2, 5, 10, 20, 50, 100, 150], registers: [registry],
    }),
    settlementTransactionsPerBlock: new Histogram({
      name: 'vixpay_settlement_transactions_per_block', help: 'Settlement transactions of the relayer in each block that holds one, by network',
      labelNames: ['network'] as const, buckets: [1, 2, 3, 5, 10, 20], registers: [registry],
    }),
    nodeRpcCalls: new Counter({
      name: 'vixpay_node_rpc_calls_total', help: 'JSON-RPC calls sent to each network\'s node (each call of a batch, each retry), by network and method',
      labelNames: ['network', 'method'] as const, registers: [registry],
    }),
    nodeEndpointCalls: new Counter({
      name: 'vixpay_node_endpoint_calls_total', help: 'JSON-RPC calls sent to each endpoint of a network (RPC_URLS_<NETWORK>; endpoint 0 the preferred), by how each ended: ok (answered, a JSON-RPC error included), throttled (429, -32005), failed (no answer, an HTTP error, a timeout)',
      labelNames: ['network', 'endpoint', 'host', 'outcome'] as const, registers: [registry],
    }),
    nodeEndpointUp: new Gauge({
      name: 'vixpay_node_endpoint_up', help: 'Each endpoint of a network as its last call left it: 1 answering, 0 left aside (throttled or failing) for a while, the next one used',
      labelNames: ['network', 'endpoint', 'host'] as const, registers: [registry],
    }),
    x402Settlements: new Counter({
      name: 'vixpay_x402_settlements_total', help: 'x402 facilitator settlements ended, by network and outcome (settled, failed); POS payments are not counted here',
      labelNames: ['network', 'outcome'] as const, registers: [registry],
    }),
    relayerRepriced: new Counter({
      name: 'vixpay_relayer_repriced_transactions_total', help: 'Relayed transactions signed again with their nonce and higher fees (fee cap below the base fee, or unmined too long), by network',
      labelNames: ['network'] as const, registers: [registry],
    }),
    journalBacklog: new Gauge({
      name: 'vixpay_relayer_journal_backlog', help: 'Journaled relayer transactions not yet known to be mined, by network',
      labelNames: ['network'] as const, registers: [registry],
      async collect() { await perNetwork(this, (s) => s.journalBacklog()); },
    }),
    relayerGasBalance: new Gauge({
      name: 'vixpay_relayer_gas_balance_ether', help: 'The relayer account\'s native balance for gas, in ether, by network',
      labelNames: ['network'] as const, registers: [registry],
      async collect() { await perNetwork(this, (s) => s.relayerGasBalance()); },
    }),
    relayerLaneGas: new Gauge({
      name: 'vixpay_relayer_lane_gas_balance_ether', help: 'Each relayer lane\'s native balance for gas, in ether, by network and lane (0: the platform account)',
      labelNames: ['network', 'lane'] as const, registers: [registry],
      async collect() {
        if (!sources) return;
        this.reset();
        for (const { network, lane, gasEther } of await sources.relayerLanes()) if (gasEther !== undefined) this.set({ network, lane }, gasEther);
      },
    }),
    relayerLaneGasLow: new Gauge({
      name: 'vixpay_relayer_lane_gas_low', help: 'Each relayer lane: 1 while its gas balance is under the minimum (100 in the native coin; fund it with `vixpay lanes fund`), else 0, by network and lane',
      labelNames: ['network', 'lane'] as const, registers: [registry],
      async collect() {
        if (!sources) return;
        this.reset();
        for (const { network, lane, gasLow } of await sources.relayerLanes()) if (gasLow !== undefined) this.set({ network, lane }, gasLow ? 1 : 0);
      },
    }),
    relayerLanePending: new Gauge({
      name: 'vixpay_relayer_lane_pending_transactions', help: 'Journaled transactions of each relayer lane not yet known to be mined (its pending nonces), by network and lane',
      labelNames: ['network', 'lane'] as const, registers: [registry],
      async collect() {
        if (!sources) return;
        this.reset();
        for (const { network, lane, pending } of await sources.relayerLanes()) this.set({ network, lane }, pending);
      },
    }),
    settlementQueue: new Gauge({
      name: 'vixpay_settlement_queue_depth', help: 'Transfers waiting for their settlement batch or its receipt, by network',
      labelNames: ['network'] as const, registers: [registry],
      async collect() { await perNetwork(this, async (s) => s.settlementQueue()); },
    }),
    /** Where the scrape-time gauges read from (set once the store and chains are up). */
    readFrom(scrapeSources: ScrapeSources): void { sources = scrapeSources; },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
