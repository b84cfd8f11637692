import { DomainError } from '#shared/errors.ts';
import { readServerUrls } from '#shared/server-urls.ts';
import type { CliCommand, CliContext } from './command.ts';
import { printQrCode } from './terminal-qr.ts';
import {
  compact, describeMessage, login, paymentsClient, qrCode, runStream, transferContent, type Endpoints,
} from './payments-client.ts';

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);

export const endpointOptions = { grpc: { type: 'string' }, http: { type: 'string' } } as const;

/**
 * The running server's public interfaces: --grpc HOST:PORT and --http URL; otherwise a port given to
 * this command (GRPC_PORT, HTTP_PORT); otherwise what the server recorded in its DATA_DIR when it
 * started (server.json), so a server on any port is found; otherwise the default ports.
 */
export function endpointsOf(context: CliContext, env: NodeJS.ProcessEnv = process.env): Endpoints {
  const recorded = readServerUrls(context.config.dataDir);
  const grpc = text(context.values.grpc)
    ?? (env.GRPC_PORT === undefined ? recorded?.grpc : undefined) ?? `127.0.0.1:${context.config.grpcPort}`;
  const http = text(context.values.http)
    ?? (env.HTTP_PORT === undefined ? recorded?.http : undefined) ?? `http://127.0.0.1:${context.config.httpPort}`;
  return { grpc, http: http.replace(/\/$/, '') };
}

function required(context: CliContext, ...names: string[]): string[] {
  const values = names.map((name) => text(context.values[name]));
  const missing = names.filter((_, i) => values[i] === undefined);
  if (missing.length > 0) throw new DomainError('request.invalid', `${missing.map((m) => `--${m}`).join(', ')} required`);
  return values as string[];
}

/** The POS side: START_PAY (or START_REWARD) from the QR code the app printed, then every state as it arrives. */
export const posCommand: CliCommand = {
  summary: "--tid TID --api-key KEY --qr 'JSON' (--amount A [--tran-no N] | --reward-id R --token-amount T)  POS simulator",
  options: { tid: { type: 'string' }, 'api-key': { type: 'string' }, qr: { type: 'string' }, amount: { type: 'string' }, 'tran-no': { type: 'string' }, 'reward-id': { type: 'string' }, 'token-amount': { type: 'string' }, ...endpointOptions },
  run: async (context) => {
    const [tid, apiKey, qrText] = required(context, 'tid', 'api-key', 'qr');
    const qr = JSON.parse(qrText!) as Record<string, string>;
    const endpoints = endpointsOf(context);
    const client = paymentsClient(endpoints);
    const tranNo = text(context.values['tran-no']) ?? `POS${Date.now()}`;
    const rewardId = text(context.values['reward-id']);
    const first = rewardId
      ? { state: 'START_REWARD', tid, tran_no: tranNo, reward_id: rewardId, token_amount: required(context, 'token-amount')[0], user_uuid: qr.user_uuid, user_address: qr.user_address }
      : { state: 'START_PAY', tid, tran_no: tranNo, exchange_amount: required(context, 'amount')[0], ...qr };
    console.log(describeMessage('pos', '->', { content: first }));
    const received = await runStream(client, 'StartPayment', apiKey!, first, (message) => console.log(describeMessage('pos', '<-', message)));
    client.close();
    return compact(received.at(-1));
  },
};

/** The app side: logs in, prints its QR code, waits for a POS, signs the transfer it is asked for. */
export const appCommand: CliCommand = {
  summary: '--user ID --password PW --address ADDR --secret-key SK [--reward-id R --token-amount T]  app simulator',
  options: { user: { type: 'string' }, password: { type: 'string' }, address: { type: 'string' }, 'secret-key': { type: 'string' }, 'reward-id': { type: 'string' }, 'token-amount': { type: 'string' }, ...endpointOptions },
  run: async (context) => {
    const [user, password, address, secretKey] = required(context, 'user', 'password', 'address', 'secret-key');
    const endpoints = endpointsOf(context);
    const token = await login(endpoints, user!, password!);
    const client = paymentsClient(endpoints);
    const rewardId = text(context.values['reward-id']);
    let received;
    if (rewardId) {
      const first = { state: 'START_REWARD', reward_id: rewardId, token_amount: required(context, 'token-amount')[0], token_symbol: 'VIXP', user_address: address };
      console.log(describeMessage('app', '->', { content: first }));
      received = await runStream(client, 'DoPayment', token, first, (message) => console.log(describeMessage('app', '<-', message)));
    } else {
      const qr = await qrCode(endpoints, user!, address!);
      await printQrCode(JSON.stringify(qr));
      console.log(`QR code (give it to the POS with --qr): '${JSON.stringify(qr)}'`);
      received = await appPayment(endpoints, client, token, { address: address!, secretKey: secretKey! }, 'app');
    }
    client.close();
    return compact(received.at(-1));
  },
};

/**
 * The app's half of a payment (or of a reward claim at the POS): START_PAY with only `state`, as
 * docs/interfaces.md#grpc-payments shows (the server pairs it with the POS that sends the user's id), and TRANSFER when asked.
 * Prints each state.
 */
export function appPayment(endpoints: Endpoints, client: Record<string, any>, token: string, wallet: { address: string; secretKey: string }, label: string) {
  const first = { state: 'START_PAY' };
  console.log(describeMessage(label, '->', { content: first }));
  return runStream(client, 'DoPayment', token, first, async (message, send) => {
    console.log(describeMessage(label, '<-', message));
    if (message.content?.state === 'REQUEST_TRANSFER' && message.common?.res_code === '00') {
      const transfer = await transferContent(endpoints, wallet, message);
      console.log(describeMessage(label, '->', { content: transfer }));
      send(transfer);
    }
  });
}
