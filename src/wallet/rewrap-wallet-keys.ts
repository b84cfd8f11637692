import { hexToBytes, recoverMessageAddress, type Address, type Hex } from 'viem';
import type { KeyVault } from '#shared/key-vault.ts';
import { isDomainError } from '#shared/errors.ts';
import type { TokenWrappedKeys } from '../chain/token-wrapped-keys.ts';
import type { AccountKeyRepository } from '../store/wallet-repository.ts';

/** Where a run stands with one wallet: a failpoint named after the step just done (tests stop a run there). */
export type RewrapStep = 'wrapped' | 'verified' | 'replaced';

export interface RewrapDeps {
  accounts: AccountKeyRepository;
  /** Opens keys sealed with the master key (file custody). */
  vault: KeyVault;
  token: TokenWrappedKeys;
  /** Test switch: called after each step of each wallet; a throw stops the run there, as a crash would. */
  failpoint?: ((step: RewrapStep, address: string) => void | Promise<void>) | undefined;
}

export interface RewrapResult {
  /** The wrapping key every wallet is now wrapped under. */
  wrappingKey: string;
  /** Wallets whose stored key this run replaced. */
  rewrapped: number;
  /** Wallets another run or instance moved first (their stored key changed under this one). */
  movedByOthers: number;
  /** Wallets whose new form did not sign for their address: left as they were. */
  failed: Array<{ address: string; reason: string }>;
  /** Wallets still not under `wrappingKey` at the end (failed, or made meanwhile under another key). */
  remaining: number;
}

const batch = 100;
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
/** A platform still making wallets under an older key could keep a run going: it stops after this many passes and says how many remain. */
const maxPasses = 3;

/**
 * Moves every wallet's stored key under the token's current wrapping key (`rotate`: a new one,
 * generated first): keys sealed with the master key are opened and wrapped by the token, keys wrapped
 * under an older wrapping key are unwrapped and wrapped again inside the token. One wallet at a time,
 * each new form checked by a signature that recovers to the wallet's address before it replaces the
 * old one, only if the old one is still stored (compare and swap). A run that stops anywhere leaves
 * every wallet with either its old form or its checked new one, both of which sign; the next run
 * takes the wallets not yet moved. Exactly once: a replaced wallet is never taken again.
 */
export async function rewrapWalletKeys(deps: RewrapDeps, options: { rotate?: boolean } = {}): Promise<RewrapResult> {
  const { accounts, vault, token, failpoint } = deps;
  const wrappingKey = options.rotate ? await token.newWrappingKey() : await token.currentWrappingKey();
  const settled = `p11:v1:${wrappingKey}:`;
  const result: RewrapResult = { wrappingKey, rewrapped: 0, movedByOthers: 0, failed: [], remaining: 0 };
  const failed = new Set<string>();

  for (let pass = 0; pass < maxPasses; pass++) {
    let moved = 0;
    let after = '';
    for (;;) {
      const rows = await accounts.listKeysNotIn(settled, after, batch);
      if (rows.length === 0) break;
      after = rows.at(-1)!.address;
      for (const row of rows) {
        if (failed.has(row.address)) continue;
        const address = row.address as Address;
        const refuse = (reason: string) => {
          failed.add(address);
          result.failed.push({ address, reason });
        };
        let next: string;
        try {
          next = token.holds(row.privateKeyEnc)
            ? await token.rewrap(row.privateKeyEnc, wrappingKey)
            : await token.wrap(hexToBytes(vault.decrypt(row.privateKeyEnc) as Hex), wrappingKey);
        } catch (error) {
          // The token gone stops the run (every wallet would fail alike); a stored key that does not open is this wallet's alone.
          if (isDomainError(error)) throw error;
          refuse(`its stored key does not open (${describe(error)})`);
          continue;
        }
        await failpoint?.('wrapped', address);
        const message = `vixpay keys migrate: ${address} under ${wrappingKey}`;
        let signer: string;
        try {
          signer = await recoverMessageAddress({ message, signature: await token.account(next, address).signMessage({ message }) });
        } catch (error) {
          if (isDomainError(error)) throw error;
          signer = `no signature (${describe(error)})`;
        }
        if (signer !== address) {
          refuse(`its key wrapped again signs as ${signer}`);
          continue;
        }
        await failpoint?.('verified', address);
        if (await accounts.replaceKey(address, row.privateKeyEnc, next)) {
          result.rewrapped += 1;
          moved += 1;
        } else {
          result.movedByOthers += 1;
        }
        await failpoint?.('replaced', address);
      }
    }
    if (moved === 0) break;
  }
  result.remaining = await accounts.countKeysNotIn(settled);
  return result;
}
