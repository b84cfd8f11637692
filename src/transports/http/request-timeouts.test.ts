import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../../config/config.ts';
import { createEmbeddedBackend } from '../../ipfs/embedded-backend.ts';
import { ipfsLimits } from '../../ipfs/ipfs-limits.ts';
import { installHttpErrorHandler } from './errors.ts';
import { ipfsRoutes } from './routes/ipfs.ts';
import { installRequestTimeouts, requestTimeoutsOf, type RequestTimeouts } from './request-timeouts.ts';
import { auth, boundary, fakeVerifier } from '../../../test/support/ipfs-http.ts';
import { deterministicStream } from '../../../test/support/deterministic-bytes.ts';

/** The IPFS API behind the request timeouts, listening on loopback. */
async function startIpfsApp(timeouts: RequestTimeouts) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'vixpay-timeouts-'));
  const backend = await createEmbeddedBackend({ dataDir });
  const app = Fastify({ logger: false });
  installHttpErrorHandler(app);
  installRequestTimeouts(app, timeouts);
  await app.register(ipfsRoutes, { prefix: '/v1/ipfs', backend, verify: fakeVerifier, limits: ipfsLimits({}) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    async close() { await app.close(); await backend.close(); await rm(dataDir, { recursive: true, force: true }); },
  };
}

const partHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;

test('with the default timeouts a 300 MiB upload over loopback still passes', { timeout: 240_000 }, async () => {
  const server = await startIpfsApp(requestTimeoutsOf(loadConfig({})));
  try {
    const size = 300 * 1024 * 1024;
    const started = Date.now();
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request({
        host: '127.0.0.1', port: server.port, method: 'POST', path: '/v1/ipfs/add',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      request.on('error', reject);
      request.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      (async () => {
        const write = (chunk: Uint8Array | string) => new Promise<void>((done) => (request.write(chunk) ? done() : request.once('drain', done)));
        await write(partHead);
        for await (const chunk of deterministicStream(size, 'timeouts', 256 * 1024)) await write(chunk);
        await write(`\r\n--${boundary}--\r\n`);
        request.end();
      })().catch(reject);
    });
    assert.equal(response.status, 200, response.body);
    console.log(`# 300 MiB upload in ${((Date.now() - started) / 1000).toFixed(1)} s under the default timeouts`);
  } finally {
    await server.close();
  }
});

test('a body trickling a byte every 200 ms is cut off with 408 one rate window after it starts', { timeout: 30_000 }, async () => {
  const server = await startIpfsApp({
    headersTimeoutMs: 20_000, requestTimeoutMs: 600_000, connectionTimeoutMs: 180_000, minBodyBytesPerSecond: 1024, bodyRateWindowMs: 1000,
  });
  try {
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    socket.write(`POST /v1/ipfs/add HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\n`
      + `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n${partHead}`);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => undefined);
    const trickle = setInterval(() => { if (!socket.destroyed) socket.write('x'); }, 200);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(trickle);
    const afterMs = Date.now() - started;
    assert.match(answer, /^HTTP\/1\.1 408 Request Timeout/);
    assert.ok(afterMs >= 900 && afterMs < 4000, `cut off after ${afterMs} ms`);
  } finally {
    await server.close();
  }
});

test('a steady body at a fair rate is not cut off', { timeout: 30_000 }, async () => {
  const server = await startIpfsApp({
    headersTimeoutMs: 20_000, requestTimeoutMs: 600_000, connectionTimeoutMs: 180_000, minBodyBytesPerSecond: 1024, bodyRateWindowMs: 500,
  });
  try {
    // 16 KiB a second for 2.5 s: several windows, each above the floor.
    const chunks = Array.from({ length: 10 }, () => 'y'.repeat(4096));
    const body = `${partHead}${chunks.join('')}\r\n--${boundary}--\r\n`;
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request({
        host: '127.0.0.1', port: server.port, method: 'POST', path: '/v1/ipfs/add',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': Buffer.byteLength(body) },
      });
      request.on('error', reject);
      request.on('response', (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      let offset = 0;
      const step = 4096;
      const timer = setInterval(() => {
        request.write(body.slice(offset, offset + step));
        offset += step;
        if (offset >= body.length) { clearInterval(timer); request.end(); }
      }, 250);
    });
    assert.equal(status, 200);
  } finally {
    await server.close();
  }
});
