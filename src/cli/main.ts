import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.ts';
import { createLogger } from '../shared/logger.ts';
import { isDomainError } from '../shared/errors.ts';
import { commands, usage, type CliCommand } from './commands.ts';

// `vixpay <command> [subcommand] [args] [--json]`. Exit codes: 0 done, 1 failed, 2 usage.
const argv = process.argv.slice(2);
const name = [argv[0], argv[1]].filter(Boolean).join(' ');
const command: CliCommand | undefined = commands[name] ?? commands[argv[0] ?? ''];
if (!command) {
  console.error(usage());
  process.exit(argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' ? 0 : 2);
}
const rest = argv.slice(commands[name] ? 2 : 1);

let parsed;
try {
  parsed = parseArgs({ args: rest, options: { ...command.options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
} catch (error) {
  console.error(`${(error as Error).message}\n\n${usage()}`);
  process.exit(2);
}

const config = loadConfig();
const logger = createLogger(process.env.LOG_LEVEL ?? (command.longRunning ? config.logLevel : 'warn'), process.stderr);
try {
  const output = await command.run({ config, logger, values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals });
  if (output !== undefined) {
    console.log(parsed.values.json ? JSON.stringify(output) : typeof output === 'string' ? output : JSON.stringify(output, null, 2));
  }
  if (!command.longRunning) process.exit(0);
} catch (error) {
  const message = isDomainError(error) ? `${error.code}: ${error.message}` : (error as Error).message;
  if (parsed.values.json) console.log(JSON.stringify({ error: { code: isDomainError(error) ? error.code : 'internal', message } }));
  else console.error(`vixpay: ${message}`);
  if (!isDomainError(error)) logger.debug({ err: error }, 'command failed');
  process.exit(1);
}
