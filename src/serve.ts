import type { Config } from './config/config.ts';
import type { Logger } from './shared/logger.ts';
import { startPlatform } from './platform.ts';
import { buildHttpApp } from './transports/http/app.ts';

/** Starts the platform and its servers; stops cleanly on SIGINT/SIGTERM. */
export async function serve(config: Config, logger: Logger): Promise<void> {
  const platform = await startPlatform(config, logger);
  const http = await buildHttpApp(platform);
  await http.listen({ port: config.httpPort, host: config.httpHost });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await http.close().catch((err: unknown) => logger.error({ err }, 'http close failed'));
    await platform.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}
