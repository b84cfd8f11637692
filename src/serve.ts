import type { Config } from './config/config.ts';
import type { Logger } from './shared/logger.ts';
import { startPlatform } from './platform.ts';
import { buildHttpApp } from './transports/http/app.ts';
import { startPaymentServer } from './payment-server.ts';

/** Starts the platform and its servers; stops cleanly on SIGINT/SIGTERM. */
export async function serve(config: Config, logger: Logger): Promise<void> {
  const platform = await startPlatform(config, logger);
  const http = await buildHttpApp(platform);
  await http.listen({ port: config.httpPort, host: config.httpHost });
  const grpc = await startPaymentServer(platform).catch(async (error: unknown) => {
    // e.g. GRPC_PORT in use: leave nothing running behind (the anvils we own, the HTTP port).
    await http.close().catch(() => undefined);
    await platform.stop();
    throw error;
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await http.close().catch((err: unknown) => logger.error({ err }, 'http close failed'));
    await grpc.stop().catch((err: unknown) => logger.error({ err }, 'gRPC stop failed'));
    await platform.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}
