import type { KeyVault } from '#shared/key-vault.ts';
import { isDomainError } from '#shared/errors.ts';
import type { SealedSecret, SealedSecretsRepository } from '../store/sealed-secrets-repository.ts';

export interface ResealDeps {
  secrets: SealedSecretsRepository;
  /** Opens what file custody's master key sealed. */
  from: Pick<KeyVault, 'decrypt'>;
  /** Seals in the token, and opens there (the check). */
  to: KeyVault;
  /** The prefix of every form `to` makes (`hsm:v1:`): a stored form that has it is done. */
  settled: string;
  /** Test switch: called after each secret is replaced; a throw stops the run there, as a crash would. */
  failpoint?: ((secret: SealedSecret) => void | Promise<void>) | undefined;
}

export interface ResealResult {
  /** Secrets this run sealed anew in the token, by what they are. */
  resealed: Record<string, number>;
  /** Secrets that did not open with the master key, or whose new form did not open to the same text: left as they were. */
  failed: Array<{ what: string; id: string; reason: string }>;
  /** Sealed secrets not in the token's form at the end. */
  remaining: number;
}

const batch = 100;
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);

/**
 * Seals every secret the master key sealed (JWT signing keys, DID keys, wallets' secret keys, webhook
 * secrets) anew under the token's key-encryption key, one at a time: opened with the master key,
 * sealed in the token, opened there again and compared, then compare-and-swapped over the old form.
 * A run stopped anywhere leaves each secret in its old form or its checked new one; the next run
 * takes the rest, never one twice.
 */
export async function resealSecrets(deps: ResealDeps): Promise<ResealResult> {
  const { secrets, from, to, settled } = deps;
  const result: ResealResult = { resealed: {}, failed: [], remaining: 0 };
  for (const column of secrets.columns) {
    let after = '';
    for (;;) {
      const rows = await secrets.listNotIn(settled, column, after, batch);
      if (rows.length === 0) break;
      after = rows.at(-1)!.id;
      for (const row of rows) {
        let next: string;
        try {
          const plain = from.decrypt(row.sealed);
          next = to.encrypt(plain);
          if (to.decrypt(next) !== plain) throw new Error('its new form opens to another text');
        } catch (error) {
          // The token gone stops the run (every secret would fail alike); a secret that does not open is its own.
          if (isDomainError(error)) throw error;
          result.failed.push({ what: column.what, id: row.id, reason: describe(error) });
          continue;
        }
        if (await secrets.replace(row, next)) result.resealed[column.what] = (result.resealed[column.what] ?? 0) + 1;
        await deps.failpoint?.(row);
      }
    }
  }
  result.remaining = await secrets.countNotIn(settled);
  return result;
}
