import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Encrypts secrets at rest with AES-256-GCM under the key encryption key. */
export interface KeyVault {
  encrypt(plaintext: string): string;
  decrypt(sealed: string): string;
}

const version = 'v1';

export function createKeyVault(masterKey: Buffer): KeyVault {
  if (masterKey.length !== 32) throw new Error('master key must be 32 bytes');
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [version, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
    },
    decrypt(sealed) {
      const [v, iv, tag, body] = sealed.split(':');
      if (v !== version || !iv || !tag || body === undefined) throw new Error('unrecognised sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * The key encryption key: MASTER_KEY when configured (scale-out, from a secret manager),
 * otherwise `dataDir/master.key`, created once with mode 0600.
 */
export function loadMasterKey(options: { masterKey?: string | undefined; dataDir: string }): Buffer {
  if (options.masterKey) return Buffer.from(options.masterKey, 'hex');
  const file = path.join(options.dataDir, 'master.key');
  if (!existsSync(file)) {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}
