import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
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
import { createStandInChain, randomHash, type ScriptedTransfer as StandInScript, type StandInChain as StandIn } from './stand-in-chain.ts';
import { storeFactories } from './store-factories.ts';

/**
 * What the gRPC payment domain needs, for the `payments` area's unit tests (src/payments/*.test.ts,
 * StrykerJS): a real SQLite store with the real merchant, payment, settlement-token and tran_no
 * repositories, the real in-process pairing desk (the app and the POS are its two sides), and the
 * stand-in chain of test/support/stand-in-chain.ts for the wallet's chain side: it records each
 * transfer's authorization by its reference (used with its transaction, open, cancelled, expired,
 * or none), moves balances only for a used one, and answers `transferOutcome` from that record, as
 * the wallet's resolution answers the chain's; the real chain's paths are in test/payments.test.ts
 * and test/money-safety.test.ts (anvil, too slow per mutant).
 */
export const paymentsNetwork = 'ethereum';
export const vixp = { contractAddress: getAddress('0x00000000000000000000000000000000000000a1'), tokenSymbol: 'VIXP', decimals: 18 };
export const usdx = { contractAddress: getAddress('0x00000000000000000000000000000000000000a2'), tokenSymbol: 'USDX', decimals: 6 };
/** A token the wallet knows but the operator never allowed. */
export const userToken = { contractAddress: getAddress('0x00000000000000000000000000000000000000a3'), tokenSymbol: 'MINE', decimals: 18 };
const tokens = [vixp, usdx, userToken];

/** The outcomes the payment tests script for a payment's or a refund's transfer (none is left interrupted). */
export type ScriptedTransfer = Exclude<StandInScript<'wallet.signature_invalid' | 'wallet.insufficient_balance' | 'chain.transaction_failed'>, { kind: 'interrupted' }>;
export type StandInChain = StandIn<ScriptedTransfer>;

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

export { randomHash };

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
  const chain = createStandInChain<ScriptedTransfer>({ store, network: paymentsNetwork, tokens, clock: () => parts.now });
  const wallet: PaymentDeps['wallet'] = { ...chain.wallet, createAddress: async () => { throw new Error('not in the stand-in'); } };
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
      if (units > 0n) chain.mint(address, units);
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
