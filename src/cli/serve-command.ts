import type { CliCommand } from './command.ts';

export const serveCommand: CliCommand = {
  summary: 'run the platform (same as npm start)',
  options: {},
  longRunning: true,
  run: async ({ config, logger, deps }) => deps.serve(config, logger),
};
