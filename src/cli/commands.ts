import type { CliCommand } from './command.ts';
import { serveCommand } from './serve-command.ts';
import { tokenAllowCommand, tokenAllowedCommand, tokenBalanceCommand, tokenDisallowCommand, tokenMintCommand } from './token-commands.ts';
import { userAddCommand } from './user-commands.ts';
import { loginApproveCommand } from './login-commands.ts';
import { ratePublishCommand, storeAddCommand } from './payment-commands.ts';
import { appCommand, posCommand } from './simulator-commands.ts';
import { demoPayCommand, demoRewardCommand } from './demo-commands.ts';
import { keysMigrateCommand, keysRotateCommand } from './key-commands.ts';
import { listenCommand, webhookAddCommand, webhookListCommand, webhookRemoveCommand, webhookRotateSecretCommand } from './webhook-commands.ts';
import { receiptVerifyCommand } from './receipt-commands.ts';
import { operatorAddCommand } from './operator-commands.ts';
import { operatorDayCommand, statementCommand } from './statement-commands.ts';
import { facilitatorKeyAddCommand, facilitatorKeyListCommand, facilitatorKeyRevokeCommand } from './facilitator-commands.ts';
import { demoX402Command } from './x402-demo.ts';
import { lanesFundCommand, lanesListCommand } from './lane-commands.ts';

/** Every command, by its words. Each domain adds its commands here. */
export const commands: Record<string, CliCommand> = {
  serve: serveCommand,
  'token mint': tokenMintCommand,
  'token balance': tokenBalanceCommand,
  'token allow': tokenAllowCommand,
  'token disallow': tokenDisallowCommand,
  'token allowed': tokenAllowedCommand,
  'user add': userAddCommand,
  'login approve': loginApproveCommand,
  'store add': storeAddCommand,
  'rate publish': ratePublishCommand,
  pos: posCommand,
  app: appCommand,
  'demo pay': demoPayCommand,
  'demo reward': demoRewardCommand,
  'demo x402': demoX402Command,
  'keys rotate': keysRotateCommand,
  'keys migrate': keysMigrateCommand,
  'webhook add': webhookAddCommand,
  'webhook list': webhookListCommand,
  'webhook remove': webhookRemoveCommand,
  'webhook rotate-secret': webhookRotateSecretCommand,
  listen: listenCommand,
  'receipt verify': receiptVerifyCommand,
  'operator add': operatorAddCommand,
  statement: statementCommand,
  'operator-day': operatorDayCommand,
  'facilitator-key add': facilitatorKeyAddCommand,
  'facilitator-key list': facilitatorKeyListCommand,
  'facilitator-key revoke': facilitatorKeyRevokeCommand,
  'lanes fund': lanesFundCommand,
  'lanes list': lanesListCommand,
};

export function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  vixpay ${name.padEnd(16)} ${c.summary}`);
  return ['usage: vixpay <command> [options] [--json]', '', ...lines].join('\n');
}
