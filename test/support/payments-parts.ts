import { randomBytes } from 'node:crypto';
import { formatUnits, getAddress, parseUnits, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { DomainError } from '../../src/shared/errors.ts';
import type { Logger } from '../../src/shared/logger.ts';
import type { Store } from '../../src/store/db.ts';
import { createMerchantRepository } from '../../src/store/merchant-repository.ts';
import { createPaymentRepository } from '../../src/store/payment-repository.ts';
import { createSettlementTokenRepository } from '../../src/store/settlement-token-repository.ts';
import { createIdempotencyRepository } from '../../src/store/idempotency-repository.ts';
import { createPairingDesk } from '../../src/pairing/in-process-pairing-desk.ts';
import type { PairingDesk } from '../../src/pairing/pairing-desk.ts';
import type { SessionEvent, PosSide } from '../../src/pairing/session-events.ts';
import type { StoreRecord } from '../../src/store/merchant-repository.ts';
import type { PaymentDeps } from '../../src/payments/payment-deps.ts';
import type { TransferOutcome } from '../../src/wallet/transfer-outcome.ts';
import { storeFactories } from './store-factories.ts';

/**
 * What the gRPC payment domain needs, for the `payments` area's unit tests (src/payments/*.test.ts,
 * StrykerJS): a real SQLite store with the real merchant, payment, settlement-token and tran_no
 * repositories, the real in-process pairing desk (the app and the POS are its two sides), and a
 * stand-in of the wallet's chain side. The stand-in keeps each transfer's authorization by its
 * reference (used with its transaction, open, cancelled, or none), moves balances only for a used
 * one, and answers `transferOutcome` from that record, as the wallet's resolution answers the
 * chain's; the real chain's paths are in test/payments.test.ts and test/money-safety.test.ts (anvil,
 * too slow per mutant).
 */
export const paymentsNetwork = 'ethereum';
export const vixp = { contractAddress: getAddress('0x00000000000000000000000000000000000000a1'), tokenSymbol: 'VIXP', decimals: 18 };
export const usdx = { contractAddress: getAddress('0x00000000000000000000000000000000000000a2'), tokenSymbol: 'USDX', decimals: 6 };
/** A token the wallet knows but the operator never allowed. */
export const userToken = { contractAddress: getAddress('0x00000000000000000000000000000000000000a3'), tokenSymbol: 'MINE', decimals: 18 };
const tokens = [vixp, usdx, userToken];

/** What the stand-in chain does with the next transfer (payment or refund); unscripted ones settle. */
export type ScriptedTransfer =
  | { kind: 'settled' }
  /** Sent, not settled: its authorization open with its transaction. */
  | { kind: 'pending' }
  /** Refused with `code`: nothing moved; `chain.transaction_failed` leaves its authorization cancelled. */
  | { kind: 'refused'; code: 'wallet.signature_invalid' | 'wallet.insufficient_balance' | 'chain.transaction_failed' }
  /** Throws (not a domain outcome): the wallet call itself failed. */
  | { kind: 'throws' };

export interface Authorization {
  reference: string;
  from: string;
  to: string;
  contractAddress: string;
  units: bigint;
  status: 'used' | 'open' | 'canceled' | 'expired';
  txHash: Hex;
}

export interface StandInChain {
  script: ScriptedTransfer[];
  /** Every authorization by its reference. */
  authorizations: Map<string, Authorization>;
  /** Payment transfers (the user's) and custodial transfers (refunds) asked for, in order. */
  transfers: { kind: 'payment' | 'custody'; reference: string; amount: string; from: string; to: string; contractAddress: string; tempKey?: string }[];
  /** Balances in token units, by lower-case `contract:address`. */
  balanceOf(contractAddress: string, address: string): bigint;
  mint(contractAddress: string, address: string, units: bigint): void;
  /** What a relayer later does: the open authorization `reference` executes (balances move) or ends. */
  settle(reference: string, status: 'used' | 'canceled' | 'expired'): void;
}

export interface LogLine { level: 'warn' | 'error' | 'info'; fields: Record<string, unknown>; message: string }

export interface PaymentsParts {
  store: Store;
  deps: PaymentDeps;
  desk: PairingDesk;
  chain: StandInChain;
  logs: LogLine[];
  now: number;
  shop: StoreRecord;
  /** A new user's account with `units` VIXP. */
  newUser(units?: bigint): { userUuid: string; address: string };
  dispose(): Promise<void>;
}

export const randomHash = (): Hex => `0x${randomBytes(32).toString('hex')}`;

function recordingLogger(logs: LogLine[]): Logger {
  const at = (level: LogLine['level']) => (fields: Record<string, unknown>, message: string) => { logs.push({ level, fields, message }); };
  const logger = { warn: at('warn'), error: at('error'), info: at('info'), debug: () => undefined, child: () => logger };
  return logger as unknown as Logger;
}

export async function openPaymentsParts(options: { idleTimeoutMs?: number; pairingWindowMs?: number } = {}): Promise<PaymentsParts> {
  const sqlite = storeFactories.find((factory) => factory.name === 'sqlite');
  if (!sqlite) throw new Error('no SQLite store factory');
  const { store, dispose } = await sqlite.open();
  const db = store.db;
  const logs: LogLine[] = [];
  const balances = new Map<string, bigint>();
  const key = (contract: string, address: string) => `${contract}:${address}`.toLowerCase();
  const authorizations = new Map<string, Authorization>();
  const script: ScriptedTransfer[] = [];
  const transfers: StandInChain['transfers'] = [];
  const tokenOf = (contractAddress?: string) => {
    const token = contractAddress ? tokens.find((t) => t.contractAddress.toLowerCase() === contractAddress.toLowerCase()) : vixp;
    if (!token) throw new DomainError('wallet.unknown_token', `no token ${contractAddress}`);
    return token;
  };
  const move = (a: Authorization) => {
    const from = balances.get(key(a.contractAddress, a.from)) ?? 0n;
    if (from < a.units) throw new Error('stand-in chain: the transfer would overdraw');
    balances.set(key(a.contractAddress, a.from), from - a.units);
    balances.set(key(a.contractAddress, a.to), (balances.get(key(a.contractAddress, a.to)) ?? 0n) + a.units);
  };
  const chain: StandInChain = {
    script, authorizations, transfers,
    balanceOf: (contract, address) => balances.get(key(contract, address)) ?? 0n,
    mint: (contract, address, units) => { balances.set(key(contract, address), chain.balanceOf(contract, address) + units); },
    settle(reference, status) {
      const a = authorizations.get(reference);
      if (!a || a.status !== 'open') throw new Error(`stand-in chain: no open authorization ${reference}`);
      if (status === 'used') move(a);
      a.status = status;
    },
  };
  const send = async (kind: 'payment' | 'custody', params: { fromAddress: string; toAddress: string; amount: string; contractAddress?: string; reference?: string; tempKey?: string }): Promise<TransferOutcome> => {
    const token = tokenOf(params.contractAddress);
    const reference = params.reference ?? '';
    transfers.push({ kind, reference, amount: params.amount, from: params.fromAddress, to: params.toAddress, contractAddress: token.contractAddress, ...(params.tempKey && { tempKey: params.tempKey }) });
    if (authorizations.get(reference)?.status === 'used') throw new Error(`stand-in chain: reference ${reference} executed twice`);
    const next = script.shift() ?? { kind: 'settled' };
    if (next.kind === 'throws') throw new Error('the wallet call failed');
    const a: Authorization = {
      reference, from: params.fromAddress, to: params.toAddress, contractAddress: token.contractAddress,
      units: parseUnits(params.amount, token.decimals), status: 'open', txHash: randomHash(),
    };
    if (next.kind === 'refused') {
      if (next.code === 'chain.transaction_failed') authorizations.set(reference, { ...a, status: 'canceled' });
      return { status: 'refused', error: new DomainError(next.code, `refused: ${next.code}`) };
    }
    authorizations.set(reference, a);
    if (next.kind === 'pending') return { status: 'pending', transactionId: a.txHash, error: new DomainError('chain.outcome_pending', 'sent, not settled') };
    chain.settle(reference, 'used');
    return { status: 'settled', transactionId: a.txHash, amountRaw: a.units.toString(), contractAddress: token.contractAddress };
  };
  const wallet: PaymentDeps['wallet'] = {
    createAddress: async () => { throw new Error('not in the stand-in'); },
    transfer: async (_network, params) => send('payment', params),
    transferFromCustody: async (_network, params) => send('custody', params),
    transferOutcome: async (_network, reference) => {
      const a = authorizations.get(reference);
      if (!a) return { status: 'void' };
      return a.status === 'used' ? { status: 'used', txHash: a.txHash } : { status: a.status };
    },
    getBalance: async (_network, params) => {
      const token = tokenOf(params.contractAddress);
      const raw = chain.balanceOf(token.contractAddress, params.address);
      return { balance: formatUnits(raw, token.decimals), balanceRaw: raw.toString(), tokenSymbol: token.tokenSymbol, contractAddress: token.contractAddress };
    },
    getTokenInfo: async (network, params) => {
      let token = tokenOf(params.contractAddress);
      if (params.tokenSymbol !== undefined && params.tokenSymbol !== token.tokenSymbol) {
        const named = tokens.find((t) => t.tokenSymbol === params.tokenSymbol);
        if (!named) throw new DomainError('wallet.unknown_token', `no token ${params.tokenSymbol}`);
        token = named;
      }
      return { ...token, network, chainId: 1 };
    },
  };
  const desk = createPairingDesk({ appWaitMs: options.idleTimeoutMs ?? 2000 });
  const merchants = createMerchantRepository(db);
  const settlementTokens = createSettlementTokenRepository(db);
  const parts: PaymentsParts = {
    store, desk, chain, logs, now: Date.UTC(2026, 10, 28, 3, 0, 0),
    shop: { tid: 'T0001', name: 'Corner Shop', settlementAddress: privateKeyToAddress(randomHash()) },
    deps: {
      merchants, payments: createPaymentRepository(db), settlementTokens, idempotency: createIdempotencyRepository(db), wallet, desk,
      clock: () => parts.now, logger: recordingLogger(logs), network: paymentsNetwork, timeZone: 'UTC', defaultCurrency: 'KRW',
      pairingWindowMs: options.pairingWindowMs ?? 2000, idleTimeoutMs: options.idleTimeoutMs ?? 2000, staleOperationMs: 60_000,
    },
    newUser(units = 0n) {
      const address = privateKeyToAddress(randomHash());
      if (units > 0n) chain.mint(vixp.contractAddress, address, units);
      return { userUuid: `uuid-${randomBytes(6).toString('hex')}`, address };
    },
    dispose,
  };
  await merchants.insertStore({ ...parts.shop, apiKeyHash: randomBytes(8).toString('hex') }, parts.now);
  // 1 VIXP = 1000 KRW, 1 USDX = 1000 KRW (each token its own notice); no USD notice.
  await merchants.insertRateNotice({ currency: 'KRW', noticeDate: '20261128', rate: '1000', publishedAt: parts.now });
  await merchants.insertRateNotice({ currency: 'KRW', token: { network: paymentsNetwork, contractAddress: usdx.contractAddress }, noticeDate: '20261128', rate: '1000', publishedAt: parts.now });
  await settlementTokens.allow({ network: paymentsNetwork, contractAddress: usdx.contractAddress, symbol: usdx.tokenSymbol, decimals: usdx.decimals, allowedAt: parts.now });
  return parts;
}

/** A POS's side of StartPayment: the events it hears, and its hang-up. */
export function posSide(): PosSide & { events: SessionEvent[]; hangUp(): void } {
  const controller = new AbortController();
  const events: SessionEvent[] = [];
  return { events, signal: controller.signal, send: (event) => { events.push(event); }, hangUp: () => controller.abort() };
}

/**
 * The user's app at the desk (DoPayment): it answers REQUEST_TRANSFER with its TRANSFER unless
 * `transfer` is false (then it waits, or hangs up when `hangUp` is set).
 */
export function connectApp(parts: PaymentsParts, user: { userUuid: string; address: string }, options: { transfer?: boolean; hangUp?: boolean } = {}) {
  const events: SessionEvent[] = [];
  const connection = parts.desk.connectApp({
    userUuid: user.userUuid, userId: `id-${user.userUuid}`, userAddress: user.address,
    sink: {
      send(event) {
        events.push(event);
        if (event.type !== 'request_transfer') return;
        if (options.hangUp) queueMicrotask(() => connection.hangUp());
        else if (options.transfer !== false) queueMicrotask(() => connection.submitTransfer({ tempKey: 'temp-key', hashKey: 'hash-key', signature: '0xsig', comment: event.request.transferComment }));
      },
    },
  });
  return { events, connection };
}

/** The store webhooks written so far (the outbox), oldest first: what a store's server would receive. */
export async function webhooksOf(parts: PaymentsParts): Promise<{ type: string; tid: string; data: Record<string, unknown> }[]> {
  const rows = await parts.store.db.selectFrom('webhook_events').select(['type', 'tid', 'data', 'created_at']).orderBy('created_at').execute();
  return rows.map((row) => ({ type: row.type, tid: row.tid, data: JSON.parse(row.data) as Record<string, unknown> }));
}
