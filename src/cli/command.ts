/**
 * What a CLI command is and what it runs with: the registry (commands.ts) lists the commands, each
 * command file imports only this contract, so no command imports the registry back.
 */
import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { CliDeps, CliPlatform, CliStoreRecords } from './cli-deps.ts';
import { assertExistingPlatform } from './platform-data-dir.ts';

export interface CliContext {
  config: Config;
  logger: Logger;
  /** The platform access the composition root gives the CLI (cli-deps.ts). */
  deps: CliDeps;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export interface CliCommand {
  summary: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Keeps running (a server or simulator) instead of exiting after its output. */
  longRunning?: boolean;
  run(context: CliContext): Promise<unknown>;
}

/**
 * Runs `work` on the platform core beside a running server (its anvils are used, not restarted),
 * found by its DATA_DIR: a directory without a platform is refused, never made into a new one.
 */
export function withPlatform<T>(context: CliContext, work: (platform: CliPlatform) => Promise<T>): Promise<T> {
  assertExistingPlatform(context.config);
  return context.deps.withPlatform(context.config, context.logger, work);
}

/** Runs `work` on the platform's store and key vault, found by its DATA_DIR (or DATABASE_URL). */
export function withStoreRecords<T>(context: CliContext, work: (records: CliStoreRecords) => Promise<T>): Promise<T> {
  assertExistingPlatform(context.config);
  return context.deps.withStoreRecords(context.config, work);
}
