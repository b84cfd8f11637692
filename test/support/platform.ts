import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { createLogger, type Logger } from '../../src/shared/logger.ts';
import { composePlatform, type Platform } from '../../src/compose/platform.ts';
import { buildHttpApp } from '../../src/transports/http/app.ts';
import { releaseDataDirSchema, testStore, testStoreEnv } from './stores.ts';

export interface TestPlatform {
  platform: Platform;
  app: FastifyInstance;
  dataDir: string;
  config: Config;
  /** Stops everything; keeps the data directory when `keepData` (to start again on it). */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

/**
 * A real platform (four anvil chains, contracts) in a fresh or given data directory, on SQLite in it
 * or, with VIXPAY_TEST_STORE=postgres, on a fresh PostgreSQL schema of that data directory (kept with
 * `keepData` so a platform started again on the directory finds its data, dropped otherwise). An
 * explicit DATABASE_URL in `env` wins.
 */
export async function startTestPlatform(
  options: { dataDir?: string; env?: Record<string, string>; logger?: Logger; redisKeyPrefix?: string; clock?: () => number } = {},
): Promise<TestPlatform> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'vixpay-test-'));
  const onTestStore = options.env?.DATABASE_URL === undefined;
  const release = async () => {
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (onTestStore && !options.dataDir) await releaseDataDirSchema(dataDir);
  };
  let platform: Platform;
  let app: FastifyInstance;
  let config: Config;
  try {
    const storeEnv = onTestStore ? await testStoreEnv(dataDir) : {};
    config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', HTTP_PORT: '0', CHAIN_POLL_MS: '50', ...storeEnv, ...options.env });
    platform = await composePlatform(config, options.logger ?? createLogger('silent'), {
      ...(options.redisKeyPrefix && { redisKeyPrefix: options.redisKeyPrefix }),
      ...(options.clock && { clock: options.clock }),
    });
  } catch (error) {
    await release();
    throw error;
  }
  try {
    app = await buildHttpApp(platform);
    await app.ready();
  } catch (error) {
    await platform.stop();
    await release();
    throw error;
  }
  const t: TestPlatform = {
    platform, app, dataDir, config,
    async stop(stopOptions = {}) {
      await app.close();
      await platform.stop();
      if (!stopOptions.keepData) {
        rmSync(dataDir, { recursive: true, force: true });
        if (onTestStore) await releaseDataDirSchema(dataDir);
      }
    },
  };
  // The run is on what it says it is on.
  if (onTestStore && platform.store.dialect !== testStore()) {
    await t.stop();
    throw new Error(`startTestPlatform: expected ${testStore()}, got ${platform.store.dialect}`);
  }
  return t;
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
