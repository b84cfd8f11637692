import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { getAddress, type Hex } from 'viem';
import { DomainError } from '../../src/shared/errors.ts';
import { parseTokenAmount } from '../../src/shared/amount.ts';
import { createLogger } from '../../src/shared/logger.ts';
import type { FailpointName } from '../../src/shared/failpoints.ts';
import type { Store } from '../../src/store/db.ts';
import type { AuthorizationStatus } from '../../src/store/schema.ts';
import { createRewardRepository } from '../../src/store/reward-repository.ts';
import { createMerchantRepository, type StoreRecord } from '../../src/store/merchant-repository.ts';
import { createSettlementTokenRepository } from '../../src/store/settlement-token-repository.ts';
import { createIdempotencyRepository } from '../../src/store/idempotency-repository.ts';
import { createAuthorizationRepository } from '../../src/store/authorization-repository.ts';
import { createPairingDesk } from '../../src/pairing/in-process-pairing-desk.ts';
import type { PairingDesk } from '../../src/pairing/pairing-desk.ts';
import type { TransferFromCustodyParameters } from '../../src/wallet/transfer-from-custody.ts';
import type { TransferOutcome } from '../../src/wallet/transfer-outcome.ts';
import type { RewardDeps } from '../../src/rewards/reward-deps.ts';
import { storeFactories } from './store-factories.ts';
import { waitFor } from './wait-for.ts';

/**
 * What reward operations need, for the `rewards` area's unit tests (src/rewards/*.test.ts,
 * StrykerJS): a real SQLite store with the real reward, merchant (rate notices, approval numbers),
 * settlement-token, idempotency (tran_no) and authorization repositories, the in-process pairing
 * desk, pino writing to a list the test reads, and the fault suite's failpoints (`error`).
 *
 * The chain is a stand-in (as test/support/pay-parts.ts's for REST pay): a real anvil and relayer
 * would make each mutant's run take many seconds, and the money code under test only sees the
 * wallet's four answers. It holds balances per token and address, records each custodial transfer's
 * authorization in the store the way the wallet does (reference, from, to, value, status,
 * transaction), moves the balance when the transfer settles and answers the scripted outcome;
 * `latestTransferOutcome` reads the latest authorization of a reference prefix through the real
 * authorization repository, as the wallet's does (its on-chain resolution is the wallet's own,
 * proven in test/rewards.test.ts and the fault suite on a real chain).
 */
export interface RewardParts {
  store: Store;
  deps: RewardDeps;
  desk: PairingDesk;
  /** The time the clock answers (ms since the epoch); a test moves it. */
  now: number;
  chain: RewardChain;
  /** The JSON lines logged. */
  logs: Array<Record<string, unknown>>;
  /** A store with a settlement account funded with `funds` VIXP (whole tokens). */
  newStore(funds?: string): Promise<StoreRecord>;
  /** The webhook events written for a store, oldest first. */
  eventsOf(tid: string): Promise<Array<{ type: string; data: Record<string, unknown> }>>;
  /** A reward of 1.5 USDX (the allowed token, 6 decimals) issued by `store`, funded: its id. */
  usdxReward(store: StoreRecord): Promise<string>;
  /** Arms a failpoint with `error` (the call throws there). */
  arm(name: FailpointName): void;
  dispose(): Promise<void>;
}

export const rewardNetwork = 'ethereum';
export const vixp = getAddress('0x00000000000000000000000000000000000000c1');
/** A token the operator allowed (6 decimals). */
export const usdx = getAddress('0x00000000000000000000000000000000000000c2');
/** A token a user made, not allowed. */
export const userMade = getAddress('0x00000000000000000000000000000000000000c3');
export const lifetimeMs = 30 * 24 * 3600 * 1000;
export const staleMs = 60_000;

/** What the stand-in chain does with the next transfer. */
export type ScriptedTransfer =
  | { kind: 'settled' }
  /** Sent and not settled (`submitted` with its transaction); without `sent`, interrupted before sending (no record). */
  | { kind: 'pending'; sent?: boolean }
  /** Refused with `code`; `chain.transaction_failed` leaves its authorization `canceled`. */
  | { kind: 'refused'; code: 'wallet.insufficient_balance' | 'chain.transaction_failed' }
  /** The authorization recorded (`status`), then no answer ever: the instance stopped mid-way. */
  | { kind: 'interrupted'; status: AuthorizationStatus };

export interface RewardChain {
  calls: TransferFromCustodyParameters[];
  script: ScriptedTransfer[];
  /** Balance in base units of `address` in `token` (VIXP by default). */
  balance(address: string, token?: string): bigint;
  fund(address: string, units: bigint, token?: string): void;
  /** Sets the record of the transfers with this reference as the relayer later would (a `used` one moves the balance). */
  update(reference: string, status: AuthorizationStatus): Promise<void>;
  /** Resolves once a transfer whose reference starts with `prefix` is recorded (an operation left interrupted has reached its transfer). */
  untilRecorded(prefix: string): Promise<void>;
  /** The records of every transfer, oldest first. */
  records(): Promise<Array<{ reference: string; status: string; tx_hash: string | null; from_address: string; to_address: string; value: string }>>;
}

export const randomHash = (): Hex => `0x${randomBytes(32).toString('hex')}`;
export const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

const tokens = [
  { contractAddress: vixp, tokenSymbol: 'VIXP', decimals: 18 },
  { contractAddress: usdx, tokenSymbol: 'USDX', decimals: 6 },
  { contractAddress: userMade, tokenSymbol: 'MINE', decimals: 18 },
];

export async function openRewardParts(): Promise<RewardParts> {
  const sqlite = storeFactories.find((factory) => factory.name === 'sqlite');
  if (!sqlite) throw new Error('no SQLite store factory');
  const { store, dispose } = await sqlite.open();
  const db = store.db;
  const authorizations = createAuthorizationRepository(db);
  const balances = new Map<string, bigint>();
  const key = (address: string, token: string) => `${token.toLowerCase()}:${address.toLowerCase()}`;
  const calls: TransferFromCustodyParameters[] = [];
  const script: ScriptedTransfer[] = [];
  const armed = new Map<FailpointName, 'error'>();
  const logs: Array<Record<string, unknown>> = [];
  const logStream = new Writable({ write(chunk: Buffer, _encoding, done) { logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });

  const tokenOf = (contractAddress: string) => {
    const token = tokens.find((t) => t.contractAddress.toLowerCase() === contractAddress.toLowerCase());
    if (!token) throw new DomainError('wallet.unknown_token', `no token ${contractAddress}`);
    return token;
  };
  const move = (from: string, to: string, units: bigint, token: string) => {
    balances.set(key(from, token), (balances.get(key(from, token)) ?? 0n) - units);
    balances.set(key(to, token), (balances.get(key(to, token)) ?? 0n) + units);
  };
  const record = async (params: TransferFromCustodyParameters, status: AuthorizationStatus, txHash: string | null) => {
    const units = parseTokenAmount(params.amount, tokenOf(params.contractAddress ?? vixp).decimals, 'amount');
    await db.insertInto('authorizations').values({
      nonce: randomHash(), network: rewardNetwork, reference: params.reference ?? '', contract_address: params.contractAddress ?? vixp,
      from_address: params.fromAddress.toLowerCase(), to_address: params.toAddress.toLowerCase(),
      value: units.toString(), valid_before: 1, from_block: 0, status, tx_hash: txHash, cancel_tx_hash: null,
      created_at: parts.now, updated_at: parts.now, chain_nonce: null,
    }).execute();
    if (status === 'used') move(params.fromAddress, params.toAddress, units, params.contractAddress ?? vixp);
    return units;
  };

  const wallet: RewardDeps['wallet'] = {
    async getTokenInfo(_network, params) {
      const token = tokenOf(params.contractAddress ?? vixp);
      return { ...token, network: rewardNetwork, chainId: 31337 };
    },
    async getBalance(_network, params) {
      const token = tokenOf(params.contractAddress ?? vixp);
      const raw = balances.get(key(params.address, token.contractAddress)) ?? 0n;
      return { balance: raw.toString(), balanceRaw: raw.toString(), tokenSymbol: token.tokenSymbol, contractAddress: token.contractAddress };
    },
    async transferFromCustody(_network, params): Promise<TransferOutcome> {
      calls.push(params);
      const next = script.shift() ?? { kind: 'settled' };
      const txHash = randomHash();
      switch (next.kind) {
        case 'settled': {
          const units = await record(params, 'used', txHash);
          return { status: 'settled', transactionId: txHash, amountRaw: units.toString(), contractAddress: params.contractAddress ?? vixp } as TransferOutcome;
        }
        case 'pending':
          if (next.sent === false) return { status: 'pending', error: new DomainError('internal', 'the transfer was interrupted') };
          await record(params, 'submitted', txHash);
          return { status: 'pending', transactionId: txHash, error: new DomainError('chain.outcome_pending', 'sent, not settled') };
        case 'refused':
          if (next.code === 'chain.transaction_failed') await record(params, 'canceled', txHash);
          return { status: 'refused', error: new DomainError(next.code, `refused: ${next.code}`) };
        case 'interrupted':
          await record(params, next.status, next.status === 'reserved' ? null : txHash);
          return new Promise<never>(() => {});
      }
    },
    async latestTransferOutcome(network, prefix) {
      const latest = await authorizations.findLatestByReferencePrefix(network, prefix);
      if (!latest) return { status: 'void' };
      switch (latest.status) {
        case 'used': return { status: 'used', txHash: latest.txHash as Hex };
        case 'reserved': case 'submitted': return { status: 'open' };
        default: return { status: latest.status };
      }
    },
  };

  const desk = createPairingDesk({ appWaitMs: 2_000 });
  const merchants = createMerchantRepository(db);
  const parts: RewardParts = {
    store, desk, logs,
    now: Date.UTC(2026, 10, 28, 3, 0, 0),
    deps: {
      rewards: createRewardRepository(db),
      merchants,
      settlementTokens: createSettlementTokenRepository(db),
      idempotency: createIdempotencyRepository(db),
      wallet, desk,
      clock: () => parts.now,
      logger: createLogger('info', logStream),
      network: rewardNetwork,
      timeZone: 'Asia/Seoul',
      defaultCurrency: 'KRW',
      pairingWindowMs: 1_000,
      staleOperationMs: staleMs,
      rewardLifetimeMs: lifetimeMs,
      faults: {
        at(name) { if (armed.get(name) === 'error') { armed.delete(name); throw new Error(`failpoint ${name}`); } },
        onChainNodeCrash: () => undefined,
      },
    },
    chain: {
      calls, script,
      balance: (address, token = vixp) => balances.get(key(address, token)) ?? 0n,
      fund: (address, units, token = vixp) => { balances.set(key(address, token), (balances.get(key(address, token)) ?? 0n) + units); },
      async update(reference, status) {
        const rows = await db.selectFrom('authorizations').selectAll().where('reference', '=', reference).execute();
        for (const row of rows) if (status === 'used' && row.status !== 'used') move(row.from_address, row.to_address, BigInt(row.value), row.contract_address);
        await db.updateTable('authorizations').set({ status }).where('reference', '=', reference).execute();
      },
      async untilRecorded(prefix) {
        await waitFor(async () => (await parts.chain.records()).some((r) => r.reference.startsWith(prefix)),
          { timeoutMs: 10_000, intervalMs: 5, message: `a transfer ${prefix}… is recorded` });
      },
      async records() {
        return db.selectFrom('authorizations').select(['reference', 'status', 'tx_hash', 'from_address', 'to_address', 'value'])
          .orderBy('created_at').orderBy('reference').execute();
      },
    },
    async newStore(funds = '1000') {
      const tid = `T-${randomBytes(4).toString('hex')}`;
      const record = { tid, name: 'Book Shop', settlementAddress: randomAddress() };
      await merchants.insertStore({ ...record, apiKeyHash: randomHash() }, parts.now);
      if (funds !== '0') parts.chain.fund(record.settlementAddress, parseTokenAmount(funds, 18, 'funds'));
      return record;
    },
    async eventsOf(tid) {
      const rows = await db.selectFrom('webhook_events').select(['type', 'data', 'created_at', 'id']).where('tid', '=', tid).orderBy('created_at').orderBy('id').execute();
      return rows.map((row) => ({ type: row.type, data: JSON.parse(row.data) as Record<string, unknown> }));
    },
    async usdxReward(store) {
      const id = randomBytes(12).toString('hex').toUpperCase();
      parts.chain.fund(store.settlementAddress, 1_500_000n, usdx);
      await parts.deps.rewards.insertReward({
        id, tid: store.tid, rewardReason: `usdx-${id}`, network: rewardNetwork, settlementAddress: store.settlementAddress, contractAddress: usdx,
        tokenSymbol: 'USDX', tokenAmount: '1500000', exchangeAmount: '3', exchangeCurrency: 'USD', exchangeRate: '2', exchangeDateIndex: '2026112800001',
        rewardDate: '20261128120000', expiresAt: parts.now + lifetimeMs, createdAt: parts.now, updatedAt: parts.now,
      });
      return id;
    },
    arm(name) { armed.set(name, 'error'); },
    dispose,
  };
  // Rate notices (KRW 1,000 and USD 0.5 per VIXP; KRW 1,380.25 per USDX, no USD one) and the allowed USDX.
  await merchants.insertRateNotice({ currency: 'KRW', noticeDate: '20261128', rate: '1000', publishedAt: parts.now });
  await merchants.insertRateNotice({ currency: 'USD', noticeDate: '20261128', rate: '0.5', publishedAt: parts.now });
  await merchants.insertRateNotice({ currency: 'KRW', token: { network: rewardNetwork, contractAddress: usdx }, noticeDate: '20261128', rate: '1380.25', publishedAt: parts.now });
  for (const token of tokens) {
    await db.insertInto('tokens').values({ network: rewardNetwork, contract_address: token.contractAddress, symbol: token.tokenSymbol, name: token.tokenSymbol, decimals: token.decimals, owner: vixp, created_at: 0 }).execute();
  }
  await createSettlementTokenRepository(db).allow({ network: rewardNetwork, contractAddress: usdx, symbol: 'USDX', decimals: 6, allowedAt: 0 });
  return parts;
}
