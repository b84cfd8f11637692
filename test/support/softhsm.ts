/**
 * A SoftHSM2 token of a test file's own: a temporary token directory and SOFTHSM2_CONF, the token
 * made with `softhsm2-util --init-token`, its user PIN in a 0600 file. SOFTHSM2_CONF is read when
 * the library initialises, so a test file makes its token before it opens it (one per process).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TokenOptions } from '../../src/chain/pkcs11-token.ts';

/** Where Debian's `softhsm2` puts the PKCS#11 library. */
export const softhsmModule = '/usr/lib/softhsm/libsofthsm2.so';

/** Why SoftHSM2 tokens cannot be made here, or false. */
export function softhsmMissing(): string | false {
  if (!existsSync(softhsmModule)) return `${softhsmModule} is missing`;
  try {
    execFileSync('softhsm2-util', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'softhsm2-util is not on PATH';
  }
  try {
    createRequire(import.meta.url)('pkcs11js');
  } catch {
    return 'the npm package pkcs11js is not installed or did not build';
  }
  return false;
}

export interface SoftToken extends TokenOptions {
  dir: string;
  /** The token's directory inside `dir` (moved away, the token is "removed"). */
  tokensDir: string;
  close(): void;
}

/** A fresh token labelled `label` (PIN 123456); sets SOFTHSM2_CONF for this process. */
export function makeSoftToken(label = 'vixpay-test'): SoftToken {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-softhsm-'));
  const tokensDir = path.join(dir, 'tokens');
  mkdirSync(tokensDir);
  const conf = path.join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokensDir}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`);
  process.env.SOFTHSM2_CONF = conf;
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', '123456', '--so-pin', '12345678'], {
    stdio: 'ignore', env: { ...process.env, SOFTHSM2_CONF: conf },
  });
  const pinFile = path.join(dir, 'pin');
  writeFileSync(pinFile, '123456\n', { mode: 0o600 });
  return { module: softhsmModule, tokenLabel: label, pinFile, dir, tokensDir, close: () => rmSync(dir, { recursive: true, force: true }) };
}
