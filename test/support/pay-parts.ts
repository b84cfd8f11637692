import { randomBytes } from 'node:crypto';
import { getAddress, type Address } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { Store } from '../../src/store/db.ts';
import { createUserRepository } from '../../src/store/user-repository.ts';
import { createUserService, type UserService } from '../../src/identity/users.ts';
import { createPasswordHasher } from '../../src/identity/password-hasher.ts';
import { createLoginRateLimiter } from '../../src/identity/login-rate-limiter.ts';
import { createIdempotencyRepository, type IdempotencyRepository } from '../../src/store/idempotency-repository.ts';
import { createTransferStatusRepository, type TransferStatusRepository } from '../../src/store/transfer-status-repository.ts';
import type { PayDeps } from '../../src/pay/pay.ts';
import { createSettlementTokenRepository } from '../../src/store/settlement-token-repository.ts';
import { createStandInChain, randomHash, type ScriptedTransfer as StandInScript, type StandInChain as StandIn } from './stand-in-chain.ts';
import { storeFactories } from './store-factories.ts';

/**
 * What REST pay needs, for the `pay` area's unit tests (src/pay/*.test.ts, StrykerJS): a real SQLite
 * store with its user, idempotency-key and transfer-status repositories, the real user service
 * (argon2id at a cheap cost, so a mutant's run stays short) and failed-password throttle, and the
 * stand-in chain (test/support/stand-in-chain.ts) for the wallet's custodial transfer and token: it
 * records the transfer's authorization in the store the way the wallet does and answers the outcome
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
export const receiver = getAddress('0x00000000000000000000000000000000000000bb');
export const password = 'correct horse battery';

/** The outcomes REST pay's tests script (`throws` is not one: the wallet's transfer never throws). */
export type ScriptedTransfer = Exclude<StandInScript<'wallet.insufficient_balance' | 'chain.transaction_failed' | 'wallet.unknown_address'>, { kind: 'throws' }>;
export type StandInChain = StandIn<ScriptedTransfer>;
export { randomHash };

/** What a new user's custodial account holds in each token (the pay code reads no balance; the stand-in refuses to overdraw). */
const userFunds = 10n ** 30n;
const tokens = [
  { contractAddress: vixpContract, tokenSymbol: 'VIXP', decimals: 18 },
  { contractAddress: usdcContract, tokenSymbol: 'USDC', decimals: 6 },
  { contractAddress: usdtContract, tokenSymbol: 'USDT', decimals: 6 },
];

export async function openPayParts(options: { maxFailuresPerId?: number } = {}): Promise<PayParts> {
  const sqlite = storeFactories.find((factory) => factory.name === 'sqlite');
  if (!sqlite) throw new Error('no SQLite store factory');
  const { store, dispose } = await sqlite.open();
  const db = store.db;
  const chain = createStandInChain<ScriptedTransfer>({ store, network: payNetwork, tokens, clock: () => parts.now });

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
      wallet: chain.wallet,
      settlementTokens: createSettlementTokenRepository(db),
      network: payNetwork,
      receiver,
    },
    chain,
    async newUser(userOptions = {}) {
      const id = `user-${randomBytes(6).toString('hex')}`;
      const address = privateKeyToAddress(`0x${randomBytes(32).toString('hex')}`);
      await users.createUser({ id, password, name: 'Payer', ...(userOptions.wallet !== false && { walletAddress: address }) });
      for (const token of tokens) chain.mint(address, userFunds, token.contractAddress);
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
