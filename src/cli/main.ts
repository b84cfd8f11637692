import { parseArgs } from 'node:util';
import { consoleLogDestination, createLogger } from '#shared/logger.ts';
import { isDomainError } from '#shared/errors.ts';
import { describeFailure } from '#shared/failure-summary.ts';
import { loadConfigOrExit } from '../config/load-config-or-exit.ts';
import type { CliCommand } from './command.ts';
import { commands, usage } from './commands.ts';
import type { CliDeps } from './cli-deps.ts';

// `vixpay <command> [subcommand] [args] [--data-dir DIR] [--json]`. Exit codes: 0 done, 1 failed,
// 2 usage or configuration (one line per bad setting, no stack trace).
export async function runCli(argv: string[], deps: CliDeps): Promise<void> {
  const name = [argv[0], argv[1]].filter(Boolean).join(' ');
  const command: CliCommand | undefined = commands[name] ?? commands[argv[0] ?? ''];
  if (!command) {
    console.error(usage());
    process.exit(argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' ? 0 : 2);
  }
  const rest = argv.slice(commands[name] ? 2 : 1);

  let parsed;
  try {
    parsed = parseArgs({
      args: rest, options: { ...command.options, json: { type: 'boolean' }, 'data-dir': { type: 'string' } }, allowPositionals: true, strict: true,
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage()}`);
    process.exit(2);
  }

  // --data-dir names the running platform's DATA_DIR (the server's `DATA_DIR`, by default ./data of
  // the directory it was started in); it wins over the DATA_DIR variable.
  const dataDir = parsed.values['data-dir'];
  const config = loadConfigOrExit(typeof dataDir === 'string' ? { ...process.env, DATA_DIR: dataDir } : process.env);
  const logger = createLogger(process.env.LOG_LEVEL ?? (command.longRunning ? config.logLevel : 'warn'), consoleLogDestination(process.stderr));
  // One output convention: on a terminal, the steps as lines and the result indented; with --json,
  // standard output is one JSON document only (a command's step lines go to standard error).
  const json = parsed.values.json === true;
  const print = console.log;
  if (json && !command.longRunning) console.log = (...args: unknown[]) => console.error(...args);
  try {
    const output = await command.run({ config, logger, deps, values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals });
    if (output !== undefined) {
      print(json ? JSON.stringify(output) : typeof output === 'string' ? output : JSON.stringify(output, null, 2));
    }
    if (!command.longRunning) process.exit(0);
  } catch (error) {
    // One line, naming the URL or file involved; the stack only with LOG_LEVEL=debug.
    const message = isDomainError(error) ? `${error.code}: ${error.message}` : describeFailure(error);
    if (json) print(JSON.stringify({ error: { code: isDomainError(error) ? error.code : 'internal', message } }));
    else console.error(`vixpay: ${message}`);
    if (!isDomainError(error)) logger.debug({ err: error }, 'command failed');
    process.exit(1);
  }
}
