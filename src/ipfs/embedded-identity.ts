import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { base58btc } from 'multiformats/bases/base58';
import { identity } from 'multiformats/hashes/identity';

/** libp2p's protobuf `PublicKey { Type = Ed25519 (1); Data = 32 bytes }` header. */
const ed25519PublicKeyPrefix = Uint8Array.of(0x08, 0x01, 0x12, 0x20);

/**
 * The embedded node's peer id: an Ed25519 key generated on first use and kept (PKCS#8 PEM,
 * mode 0600) in `file`; the id is derived like libp2p does (identity multihash of the protobuf
 * public key, base58btc), so it reads `12D3KooW…` as Kubo's do. The node never networks; the id
 * only names this node stably across restarts.
 */
export async function loadOrCreatePeerId(file: string): Promise<string> {
  const pem = await readOrCreateKey(file);
  const spki = createPublicKey(createPrivateKey(pem)).export({ format: 'der', type: 'spki' });
  const raw = spki.subarray(spki.length - 32);
  const protobuf = new Uint8Array(ed25519PublicKeyPrefix.length + raw.length);
  protobuf.set(ed25519PublicKeyPrefix);
  protobuf.set(raw, ed25519PublicKeyPrefix.length);
  return base58btc.baseEncode(identity.digest(protobuf).bytes);
}

async function readOrCreateKey(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  try {
    // 'wx': two processes starting at once keep the first key written, never overwrite it.
    await writeFile(file, pem, { mode: 0o600, flag: 'wx' });
    return pem;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readFile(file, 'utf8');
  }
}
