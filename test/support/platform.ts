import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { createLogger, type Logger } from '../../src/shared/logger.ts';
import { composePlatform, type Platform } from '../../src/compose.ts';
import { buildHttpApp } from '../../src/transports/http/app.ts';

export interface TestPlatform {
  platform: Platform;
  app: FastifyInstance;
  dataDir: string;
  config: Config;
  /** Stops everything; keeps the data directory when `keepData` (to start again on it). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/** A real platform (SQLite, four anvil chains, contracts) in a fresh or given data directory. */
export async function startTestPlatform(
  options: { dataDir?: string; env?: Record<string, string>; logger?: Logger; redisKeyPrefix?: string } = {},
): Promise<TestPlatform> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'vixpay-test-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', HTTP_PORT: '0', CHAIN_POLL_MS: '50', ...options.env });
  const platform = await composePlatform(config, options.logger ?? createLogger('silent'), {
    ...(options.redisKeyPrefix && { redisKeyPrefix: options.redisKeyPrefix }),
  });
  const app = await buildHttpApp(platform);
  await app.ready();
  return {
    platform, app, dataDir, config,
    async stop(stopOptions = {}) {
      await app.close();
      await platform.stop();
      if (!stopOptions.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** POSTs a JSON-RPC body (object or raw text) and answers status and parsed body. */
export async function rpc(app: FastifyInstance, url: string, body: unknown, host = 'localhost'): Promise<{ status: number; body: any }> {
  const response = await app.inject({
    method: 'POST', url, headers: { 'content-type': 'application/json', host },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
}

let nextId = 1;
/** Calls one method and returns `result` (throws on a protocol error). */
export async function call(app: FastifyInstance, url: string, method: string, params?: unknown, host?: string): Promise<any> {
  const { body } = await rpc(app, url, { jsonrpc: '2.0', id: nextId++, method, params }, host);
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.msg}`);
  return body.result;
}
