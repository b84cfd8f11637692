import { ConfigError, loadConfig, type Config } from './config.ts';

/** The configuration, or (on bad settings) one line per setting on stderr and exit code 2: no stack trace. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const line of error.message.split('\n')) console.error(`vixpay: ${line}`);
    process.exit(2);
  }
}
