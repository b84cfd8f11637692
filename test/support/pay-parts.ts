import { randomBytes } from 'node:crypto';
import { getAddress, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { DomainError } from '../../src/shared/errors.ts';
import type { Store } from '../../src/store/db.ts';
import type { AuthorizationStatus } from '../../src/store/schema.ts';
import { createUserRepository } from '../../src/store/user-repository.ts';
import { createUserService, type UserService } from '../../src/identity/users.ts';
import { createPasswordHasher } from '../../src/identity/password-hasher.ts';
import { createLoginRateLimiter } from '../../src/identity/login-rate-limiter.ts';
import { createIdempotencyRepository, type IdempotencyRepository } from '../../src/store/idempotency-repository.ts';
import { createTransferStatusRepository, type TransferStatusRepository } from '../../src/store/transfer-status-repository.ts';
import type { TransferFromCustodyParameters } from '../../src/wallet/transfer-from-custody.ts';
import type { TransferOutcome } from '../../src/wallet/transfer-outcome.ts';
import type { PayDeps } from '../../src/pay/pay.ts';
import { createSettlementTokenRepository } from '../../src/store/settlement-token-repository.ts';
import { storeFactories } from './store-factories.ts';

/**
 * What REST pay needs, for the `pay` area's unit tests (src/pay/*.test.ts, StrykerJS): a real SQLite
 * store with its user, idempotency-key and transfer-status repositories, the real user service
 * (argon2id at a cheap cost, so a mutant's run stays short) and failed-password throttle, and a
 * stand-in of the wallet's custodial transfer: it records the transfer's authorization in the store
 * the way the wallet does (reference, from, to, value, status, transaction) and answers the outcome
 * the test scripted, as `transferFromCustody` answers the chain's (the real chain's paths are in
 * test/pay-api.test.ts and test/pay-idempotency.test.ts).
 */
export interface PayParts {
  store: Store;
  users: UserService;
  keys: IdempotencyRepository;
  transfers: TransferStatusRepository;
  /** The time the clock answers (ms since the epoch); a test moves it. */
  now: number;
  clock: () => number;
  deps: PayDeps;
  chain: StandInChain;
  /** A user with a custodial wallet address (no key: the stand-in signs nothing). */
  newUser(options?: { wallet?: boolean }): Promise<{ id: string; address: Address }>;
  dispose(): Promise<void>;
}

export const payNetwork = 'ethereum';
export const vixpContract = '0x00000000000000000000000000000000000000aa';
/** Allowed besides VIXP: USDC (EIP-3009, 6 decimals) and USDT (the account path, 6 decimals). */
export const usdcContract = getAddress('0x00000000000000000000000000000000000000c6');
export const usdtContract = getAddress('0x00000000000000000000000000000000000000d6');
const decimalsOf = (contract?: string) => (contract === usdcContract || contract === usdtContract ? 6 : 18);
export const receiver = getAddress('0x00000000000000000000000000000000000000bb');
export const password = 'correct horse battery';

/** What the stand-in chain does with the next transfer. */
export type ScriptedTransfer =
  /** Executed on chain: its authorization `used`. */
  | { kind: 'settled' }
  /** Sent and not settled: `submitted` with its transaction; without one, interrupted before it was sent (no record). */
  | { kind: 'pending'; sent?: boolean }
  /** Refused with `code`; `chain.transaction_failed` leaves its authorization `canceled` with its transaction. */
  | { kind: 'refused'; code: 'wallet.insufficient_balance' | 'chain.transaction_failed' | 'wallet.unknown_address' }
  /** The authorization recorded (`status`), then no answer ever: the instance stopped mid-way. */
  | { kind: 'interrupted'; status: AuthorizationStatus };

export interface StandInChain {
  /** The transfers asked for, in order. */
  calls: TransferFromCustodyParameters[];
  /** The next transfers' behaviour; a transfer with none scripted settles. */
  script: ScriptedTransfer[];
  /** Sets the record of a transfer (by its reference) as the relayer later would. */
  update(reference: string, status: AuthorizationStatus, txHash?: string | null): Promise<void>;
  /** The transaction of the transfer with this reference, as recorded. */
  txHashOf(reference: string): Promise<string | null | undefined>;
}

export const randomHash = (): Hex => `0x${randomBytes(32).toString('hex')}`;

export async function openPayParts(options: { maxFailuresPerId?: number } = {}): Promise<PayParts> {
  const sqlite = storeFactories.find((factory) => factory.name === 'sqlite');
  if (!sqlite) throw new Error('no SQLite store factory');
  const { store, dispose } = await sqlite.open();
  const db = store.db;
  const calls: TransferFromCustodyParameters[] = [];
  const script: ScriptedTransfer[] = [];

  const record = async (params: TransferFromCustodyParameters, status: AuthorizationStatus, txHash: string | null) => {
    await db.insertInto('authorizations').values({
      nonce: randomHash(), network: payNetwork, reference: params.reference ?? '', contract_address: params.contractAddress ?? vixpContract,
      // The wallet records addresses as the request gave them; the lookups compare them case-blind.
      from_address: params.fromAddress.toLowerCase(), to_address: params.toAddress.toLowerCase(),
      value: parseUnits(params.amount, decimalsOf(params.contractAddress)).toString(), valid_before: 1, from_block: 0, status, tx_hash: txHash, cancel_tx_hash: null,
      created_at: parts.now, updated_at: parts.now, chain_nonce: null,
    }).execute();
  };

  const transferFromCustody = async (_network: string, params: TransferFromCustodyParameters): Promise<TransferOutcome> => {
    calls.push(params);
    const next = script.shift() ?? { kind: 'settled' };
    const txHash = randomHash();
    const settled = { transactionId: txHash, amountRaw: parseUnits(params.amount, decimalsOf(params.contractAddress)).toString(), contractAddress: params.contractAddress ?? vixpContract };
    switch (next.kind) {
      case 'settled':
        await record(params, 'used', txHash);
        return { status: 'settled', ...settled };
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
  };

  const users = createUserService({
    users: createUserRepository(db),
    passwords: createPasswordHasher({ algorithm: 2 as never, memoryCost: 1024, timeCost: 1, parallelism: 1 }),
    clock: () => parts.now,
  });
  const allowList = createSettlementTokenRepository(db);
  await allowList.allow({ network: payNetwork, contractAddress: usdcContract, symbol: 'USDC', name: 'USD Coin', decimals: 6, eip712Version: '2', transferPath: 'eip3009', allowedAt: 0 });
  await allowList.allow({ network: payNetwork, contractAddress: usdtContract, symbol: 'USDT', name: 'Tether USD', decimals: 6, eip712Version: null, transferPath: 'account', allowedAt: 0 });
  const parts: PayParts = {
    store, users, keys: createIdempotencyRepository(db), transfers: createTransferStatusRepository(db),
    now: Date.UTC(2026, 10, 28, 12, 0, 0),
    clock: () => parts.now,
    deps: {
      users,
      rateLimiter: createLoginRateLimiter({ clock: () => parts.now, maxFailuresPerId: options.maxFailuresPerId ?? 3 }),
      wallet: {
        transferFromCustody,
        // The platform token as the wallet answers it (its row, when added, carries the same).
        getTokenInfo: async () => ({ contractAddress: getAddress(vixpContract), tokenSymbol: 'VIXP', decimals: 18, network: payNetwork, chainId: 31337 }),
      },
      settlementTokens: createSettlementTokenRepository(db),
      network: payNetwork,
      receiver,
    },
    chain: {
      calls, script,
      async update(reference, status, txHash) {
        await db.updateTable('authorizations').set({ status, ...(txHash !== undefined && { tx_hash: txHash }) }).where('reference', '=', reference).execute();
      },
      async txHashOf(reference) {
        return (await db.selectFrom('authorizations').select('tx_hash').where('reference', '=', reference).executeTakeFirst())?.tx_hash;
      },
    },
    async newUser(userOptions = {}) {
      const id = `user-${randomBytes(6).toString('hex')}`;
      const address = privateKeyToAddress(`0x${randomBytes(32).toString('hex')}`);
      await users.createUser({ id, password, name: 'Payer', ...(userOptions.wallet !== false && { walletAddress: address }) });
      return { id, address };
    },
    dispose,
  };
  return parts;
}

/** The VIXP token's row, so lookups carry its symbol and decimals. */
export async function addVixpToken(parts: PayParts, decimals = 18): Promise<void> {
  await parts.store.db.insertInto('tokens').values({
    network: payNetwork, contract_address: vixpContract, symbol: 'VIXP', name: 'VIXP', decimals, owner: receiver, created_at: 0,
  }).execute();
}
