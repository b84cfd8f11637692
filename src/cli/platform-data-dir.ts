import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { DomainError } from '#shared/errors.ts';

/**
 * A command beside a running platform must find that platform's DATA_DIR, never make a new one
 * (new keys, new contracts, every balance 0). The files a started platform has there: its SQLite
 * database (unless DATABASE_URL), its master key (unless MASTER_KEY) and its relayer key (unless
 * RELAYER_PRIVATE_KEY); with KEY_CUSTODY=pkcs11 neither key file (both are in the HSM). Throws one
 * line naming the directory when any is missing.
 */
export function assertExistingPlatform(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'masterKey' | 'relayerPrivateKey' | 'keyCustody'>): void {
  const expected = [
    ...(config.databaseUrl ? [] : ['vixpay.sqlite']),
    ...(config.masterKey || config.keyCustody === 'pkcs11' ? [] : ['master.key']),
    ...(config.relayerPrivateKey || config.keyCustody === 'pkcs11' ? [] : ['relayer.key']),
  ];
  const missing = expected.filter((file) => !existsSync(path.join(config.dataDir, file)));
  if (missing.length === 0) return;
  const what = existsSync(config.dataDir) ? `no platform in ${config.dataDir} (no ${missing.join(', ')})` : `no platform in ${config.dataDir} (no such directory)`;
  throw new DomainError('request.invalid',
    `${what}: give the running platform's directory with --data-dir DIR or DATA_DIR (default ./data where it was started), or start one with \`npx vixpay serve\``);
}
