// The platform as `npm start` runs it (its defaults, SQLite, four managed anvils), listening on
// loopback: HTTP on a free port, and the gRPC payment server when asked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/shared/logger.ts';
import { composePlatform, type Platform } from '../src/compose/platform.ts';
import { buildHttpApp } from '../src/transports/http/app.ts';
import { startPaymentServer } from '../src/main.ts';

export interface BenchPlatform {
  platform: Platform;
  baseUrl: string;
  /** The payment server's port, when started with `grpc`. */
  grpcPort?: number;
  stop(): Promise<void>;
}

/**
 * `env`: settings over the defaults, for a figure that needs one raised (each says which and why).
 * `dataDir`: a data directory of the caller's (e.g. one an earlier platform set up), kept on stop;
 * by default a fresh one, removed on stop.
 */
export async function startBenchPlatform(options: { grpc?: boolean; env?: Record<string, string>; dataDir?: string } = {}): Promise<BenchPlatform> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), 'vixpay-bench-'));
  const removeDataDir = () => { if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true }); };
  const config = loadConfig({ ...options.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', HTTP_HOST: '127.0.0.1', GRPC_HOST: '127.0.0.1' });
  const platform = await composePlatform(config, createLogger((process.env.BENCH_LOG ?? 'silent') as 'silent'));
  const app = await buildHttpApp(platform);
  let grpc: Awaited<ReturnType<typeof startPaymentServer>> | undefined;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    if (options.grpc) grpc = await startPaymentServer(platform, platform, { port: 0, host: '127.0.0.1' });
  } catch (error) {
    await app.close();
    await platform.stop();
    removeDataDir();
    throw error;
  }
  const { port } = app.server.address() as { port: number };
  return {
    platform,
    baseUrl: `http://127.0.0.1:${port}`,
    ...(grpc && { grpcPort: grpc.port }),
    async stop() {
      await grpc?.stop(1000);
      await app.close();
      await platform.stop();
      removeDataDir();
    },
  };
}
