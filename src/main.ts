import { loadConfig } from './config/config.ts';
import { createLogger } from './shared/logger.ts';
import { serve } from './serve.ts';

// Composition root for `npm start`: one process, every interface, on the embedded default
// unless configured otherwise (DESIGN.md).
const config = loadConfig();
const logger = createLogger(config.logLevel);
await serve(config, logger).catch((err: unknown) => {
  logger.fatal({ err }, 'failed to start');
  process.exit(1);
});
