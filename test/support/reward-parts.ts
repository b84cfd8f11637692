import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { getAddress } from 'viem';
import { parseTokenAmount } from '../../src/shared/amount.ts';
import { createLogger } from '../../src/shared/logger.ts';
import type { FailpointName } from '../../src/shared/failpoints.ts';
import type { Store } from '../../src/store/db.ts';
import { createRewardRepository } from '../../src/store/reward-repository.ts';
import { createMerchantRepository, type StoreRecord } from '../../src/store/merchant-repository.ts';
import { createSettlementTokenRepository } from '../../src/store/settlement-token-repository.ts';
import { createIdempotencyRepository } from '../../src/store/idempotency-repository.ts';
import { createPairingDesk } from '../../src/pairing/in-process-pairing-desk.ts';
import type { PairingDesk } from '../../src/pairing/pairing-desk.ts';
import type { RewardDeps } from '../../src/rewards/reward-deps.ts';
import { createStandInChain, randomAddress, randomHash, type ScriptedTransfer as StandInScript, type StandInChain } from './stand-in-chain.ts';
import { storeFactories } from './store-factories.ts';

/**
 * What reward operations need, for the `rewards` area's unit tests (src/rewards/*.test.ts,
 * StrykerJS): a real SQLite store with the real reward, merchant (rate notices, approval numbers),
 * settlement-token, idempotency (tran_no) and authorization repositories, the in-process pairing
 * desk, pino writing to a list the test reads, and the fault suite's failpoints (`error`).
 *
 * The chain is the stand-in of test/support/stand-in-chain.ts (as for REST pay and payments): the
 * money code under test only sees the wallet's four answers (`getTokenInfo`, `getBalance`,
 * `transferFromCustody`, `attemptTransferOutcome`); the chain's own paths are proven in
 * test/rewards.test.ts and the fault suite on a real chain.
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

/** The outcomes the reward tests script (`throws` is not one: the wallet's transfer never throws). */
export type ScriptedTransfer = Exclude<StandInScript<'wallet.insufficient_balance' | 'chain.transaction_failed'>, { kind: 'throws' }>;
export type RewardChain = StandInChain<ScriptedTransfer>;
export { randomAddress, randomHash };

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
  const chain = createStandInChain<ScriptedTransfer>({ store, network: rewardNetwork, tokens, clock: () => parts.now });
  const armed = new Map<FailpointName, 'error'>();
  const logs: Array<Record<string, unknown>> = [];
  const logStream = new Writable({ write(chunk: Buffer, _encoding, done) { logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });

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
      wallet: chain.wallet, desk,
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
    chain,
    async newStore(funds = '1000') {
      const tid = `T-${randomBytes(4).toString('hex')}`;
      const record = { tid, name: 'Book Shop', settlementAddress: randomAddress() };
      await merchants.insertStore({ ...record, apiKeyHash: randomHash() }, parts.now);
      if (funds !== '0') parts.chain.mint(record.settlementAddress, parseTokenAmount(funds, 18, 'funds'));
      return record;
    },
    async eventsOf(tid) {
      const rows = await db.selectFrom('webhook_events').select(['type', 'data', 'created_at', 'id']).where('tid', '=', tid).orderBy('created_at').orderBy('id').execute();
      return rows.map((row) => ({ type: row.type, data: JSON.parse(row.data) as Record<string, unknown> }));
    },
    async usdxReward(store) {
      const id = randomBytes(12).toString('hex').toUpperCase();
      parts.chain.mint(store.settlementAddress, 1_500_000n, usdx);
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
