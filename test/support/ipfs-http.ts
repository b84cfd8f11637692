import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { DomainError } from '../../src/shared/errors.ts';
import { createEmbeddedBackend } from '../../src/ipfs/embedded-backend.ts';
import type { IpfsBackend } from '../../src/ipfs/ipfs-backend.ts';
import { ipfsLimits, type IpfsLimits } from '../../src/ipfs/ipfs-limits.ts';
import type { AccessTokenVerifier } from '../../src/transports/http/auth-hook.ts';
import { installHttpErrorHandler } from '../../src/transports/http/errors.ts';
import { ipfsRoutes } from '../../src/transports/http/routes/ipfs.ts';

/** Test support for the IPFS routes: an app on the embedded backend in a temp DATA_DIR. */
export const testToken = 'test-access-token';
export const auth = { authorization: `Bearer ${testToken}` };

/** Accepts exactly `testToken`, as the real JWT verifier accepts a valid token. */
export const fakeVerifier: AccessTokenVerifier = async (token) => {
  if (token !== testToken) throw new DomainError('request.unauthorized', 'invalid access token');
  return { userId: 'user-1' };
};

export interface TestApp {
  app: FastifyInstance;
  backend: IpfsBackend;
  dataDir: string;
  close(): Promise<void>;
}

/** `open` builds the backend in the app's DATA_DIR (default: the embedded one). */
export async function buildTestApp(
  limits: Partial<IpfsLimits> = {}, open: (dataDir: string) => Promise<IpfsBackend> = (dataDir) => createEmbeddedBackend({ dataDir }),
): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'vixpay-ipfs-http-'));
  const backend = await open(dataDir);
  const app = Fastify({ logger: false });
  installHttpErrorHandler(app);
  await app.register(ipfsRoutes, { prefix: '/v1/ipfs', backend, verify: fakeVerifier, limits: ipfsLimits(limits) });
  await app.ready();
  return {
    app,
    backend,
    dataDir,
    async close() {
      await app.close();
      await backend.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestPart {
  /** Put in Content-Disposition as given (not escaped). */
  filename?: string;
  contentType?: string;
  headers?: Record<string, string>;
  data?: string | Uint8Array;
}

export const boundary = 'vixpay-test-boundary-7MA4YWxkTrZu0gW';

/** A multipart/form-data body as curl or Kubo's clients write it. */
export function multipartBody(parts: TestPart[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = part.filename === undefined ? 'form-data; name="file"' : `form-data; name="file"; filename="${part.filename}"`;
    let head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n`;
    head += `Content-Type: ${part.contentType ?? 'application/octet-stream'}\r\n`;
    for (const [name, value] of Object.entries(part.headers ?? {})) head += `${name}: ${value}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(part.data ?? ''), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export const multipartHeaders = { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` };

/** POST /v1/ipfs/add through inject. */
export async function inject(app: FastifyInstance, parts: TestPart[], query = '') {
  return app.inject({ method: 'POST', url: `/v1/ipfs/add${query}`, headers: multipartHeaders, payload: multipartBody(parts) });
}
