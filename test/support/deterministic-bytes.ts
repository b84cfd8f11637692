import { createCipheriv, createHash } from 'node:crypto';

/**
 * Test data: Kubo's `testutils.DeterministicRandomReader` (ChaCha20 keystream, key =
 * sha256(seed), zero nonce), so CIDs published by Kubo's tests can be checked here, and any
 * byte range of a huge "file" can be recomputed without storing it.
 */
const blockBytes = 64;

function keystream(seed: string, offset: number, length: number): Uint8Array {
  const block = Math.floor(offset / blockBytes);
  const skip = offset - block * blockBytes;
  const iv = Buffer.alloc(16); // OpenSSL's ChaCha20 IV: 32-bit little-endian block counter, then the 96-bit nonce.
  iv.writeUInt32LE(block, 0);
  const cipher = createCipheriv('chacha20', createHash('sha256').update(seed).digest(), iv);
  const out = cipher.update(Buffer.alloc(skip + length));
  return new Uint8Array(out.buffer, out.byteOffset + skip, length);
}

/** `size` bytes of the stream named by `seed`. */
export function deterministicBytes(size: number, seed: string): Uint8Array {
  return keystream(seed, 0, size);
}

/** Bytes `[offset, offset + length)` of the stream named by `seed`. */
export function deterministicRange(seed: string, offset: number, length: number): Uint8Array {
  return keystream(seed, offset, length);
}

/** The first `size` bytes of the stream, generated chunk by chunk (bounded memory). */
export async function* deterministicStream(size: number, seed: string, chunkBytes = 1024 * 1024): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < size; offset += chunkBytes) {
    yield keystream(seed, offset, Math.min(chunkBytes, size - offset));
  }
}
