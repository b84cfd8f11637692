import type { Address } from 'viem';
import type { RewrapResult } from './rewrap-wallet-keys.ts';
import type { ResealResult } from './reseal-secrets.ts';

/** `vixpay keys migrate --to pkcs11`'s outcome (src/compose/key-migration.ts, shown by src/cli/key-commands.ts). */
export interface KeyMigrationResult {
  /** The relayer's lanes put into the token by this run or an earlier one (none: no file-custody relayer key left). */
  lanes: Address[];
  wallets: RewrapResult;
  secrets: ResealResult;
  /** Key files removed from DATA_DIR (once everything was in the token). */
  removed: string[];
  /** Settings of file custody to take out of the platform's environment. */
  unset: string[];
  /** Everything is in the token: start the platform with KEY_CUSTODY=pkcs11. */
  complete: boolean;
}
