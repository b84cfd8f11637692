import { randomBytes } from 'node:crypto';
import { bytesToHex, type Address } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { createKeyVault, type KeyVault } from '../../src/shared/key-vault.ts';
import { createWalletRepository, type WalletRepository } from '../../src/store/wallet-repository.ts';
import type { Store } from '../../src/store/db.ts';
import { storeFactories } from './store-factories.ts';

/**
 * What the wallet's account and temp-key operations need, on a real store (a fresh SQLite file) and a
 * real key vault: the repository, the vault, a clock the test sets, and the temp keys' lifetime. The
 * wallet's unit tests (src/wallet/*.test.ts, the StrykerJS `wallet` area) run each mutant on it, so it
 * is SQLite only: the repository's own suite runs both dialects.
 */
export interface WalletStore {
  store: Store;
  repo: WalletRepository;
  vault: KeyVault;
  /** The time the clock answers (ms since the epoch); a test moves it. */
  now: number;
  clock: () => number;
  tempKeyTtlMs: number;
  dispose(): Promise<void>;
}

export async function openWalletStore(options: { tempKeyTtlMs?: number } = {}): Promise<WalletStore> {
  const sqlite = storeFactories.find((factory) => factory.name === 'sqlite');
  if (!sqlite) throw new Error('no SQLite store factory');
  const { store, dispose } = await sqlite.open();
  const deps: WalletStore = {
    store,
    repo: createWalletRepository(store.db),
    vault: createKeyVault(randomBytes(32)),
    now: Date.UTC(2026, 10, 28, 12, 0, 0),
    clock: () => deps.now,
    tempKeyTtlMs: options.tempKeyTtlMs ?? 300_000,
    dispose,
  };
  return deps;
}

export interface StoredWallet { address: Address; secretKey: string; privateKey: Uint8Array }

/**
 * A custodial wallet stored as createAddress stores one under file custody (its key sealed with the
 * vault, its secretKey encrypted), without the BIP-39 derivation that makes createAddress slow.
 */
export async function addWallet(w: WalletStore): Promise<StoredWallet> {
  const privateKey = randomBytes(32);
  const wallet = { address: privateKeyToAddress(bytesToHex(privateKey)), secretKey: randomBytes(32).toString('hex'), privateKey };
  const inserted = await w.repo.insertAccount({
    address: wallet.address, privateKeyEnc: w.vault.encrypt(bytesToHex(privateKey)), secretKeyEnc: w.vault.encrypt(wallet.secretKey),
  }, w.now);
  if (!inserted) throw new Error(`wallet ${wallet.address} already stored`);
  return wallet;
}
