import * as grpc from '@grpc/grpc-js';
import { loadPaymentsService } from '../transports/grpc/proto.ts';
import { sha256Hex } from '#shared/hash.ts';

/**
 * What the simulators use: only the public interfaces, as a store's POS or a user's app would.
 * gRPC from the .proto, the authentication API for the user's JWT, the token API for temp keys
 * and signatures.
 */
export interface Endpoints {
  grpc: string;
  http: string;
}


export function paymentsClient(endpoints: Endpoints): grpc.Client & Record<string, any> {
  const Service = loadPaymentsService();
  return new Service(endpoints.grpc, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
}

export function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

export function common(targetApi: string, tranNo = ''): Record<string, string> {
  return {
    target_name: 'Payment API', target_svc: 'localhost', target_package: 'g00.payments.v2', target_api: targetApi,
    source_svc: 'vixpay-cli', source_ver: '0.1.0', source_addr: '127.0.0.1', req_timestamp: new Date().toISOString(), language_code: 'en', tran_no: tranNo,
  };
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const parsed = await response.json() as any;
  if (!response.ok) throw new Error(`${url}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

let rpcId = 1;
export async function tokenApi(endpoints: Endpoints, method: string, params: unknown): Promise<any> {
  const body = await postJson(`${endpoints.http}/token`, { jsonrpc: '2.0', id: rpcId++, method, params });
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.msg}`);
  if (body.result.resultCode !== '200') throw new Error(`${method}: ${body.result.resultCode} ${body.result.resultMessage}`);
  return body.result.resultData;
}

/** POST /v2/auth/auth-user: the user's JWT. */
export async function login(endpoints: Endpoints, id: string, password: string): Promise<string> {
  return (await postJson(`${endpoints.http}/v2/auth/auth-user`, { id, password, userType: 'user' })).token;
}

/**
 * The QR code an app shows: user_uuid is the user's id (docs/interfaces.md#grpc-payments: "User ID contained in the QR code",
 * the authenticated user's), then the account, the token and an expiry.
 */
export async function qrCode(endpoints: Endpoints, userId: string, userAddress: string, lifetimeSeconds = 180) {
  const token = await tokenApi(endpoints, 'getTokenInfo', {});
  return {
    user_uuid: userId, user_address: userAddress, expiration_time: String(Math.floor(Date.now() / 1000) + lifetimeSeconds),
    contract_address: token.contractAddress as string, token_symbol: token.tokenSymbol as string,
  };
}

/** The app's TRANSFER for a REQUEST_TRANSFER: temp key, hashKey, the signed string, signData. */
export async function transferContent(endpoints: Endpoints, wallet: { address: string; secretKey: string }, request: any) {
  const { settlement_address: to, token_amount: amount } = request.content;
  const { tempKey } = await tokenApi(endpoints, 'net_getTempKey', { address: wallet.address, keyType: 'transfer' });
  const hashKey = sha256Hex(`${tempKey}|${wallet.secretKey}`);
  const data = sha256Hex(`${wallet.address}|${to}|${amount}|${tempKey}|${hashKey}`);
  const { signature } = await tokenApi(endpoints, 'signData', { address: wallet.address, tempKey, hashKey, data });
  return { state: 'TRANSFER', tran_no: request.content.tran_no, transfer_key: tempKey, hash_key: hashKey, transfer_signature: signature, transfer_comment: request.content.transfer_comment };
}

/** Runs one bidi stream: sends `first`, hands every server message to `onMessage`, resolves at the end. */
export function runStream(
  client: Record<string, any>, method: 'StartPayment' | 'DoPayment', token: string, first: Record<string, unknown>,
  onMessage: (message: any, send: (content: Record<string, unknown>) => void) => void | Promise<void>,
): Promise<any[]> {
  const api = method === 'StartPayment' ? 'startPayment' : 'doPayment';
  const call: grpc.ClientDuplexStream<any, any> = client[method](bearer(token));
  const send = (content: Record<string, unknown>) => call.write({ common: common(api, String(content.tran_no ?? '')), content });
  const received: any[] = [];
  return new Promise((resolve, reject) => {
    call.on('data', (message) => {
      received.push(message);
      Promise.resolve(onMessage(message, send)).catch((error: unknown) => { call.cancel(); reject(error); });
    });
    call.on('error', reject);
    call.on('end', () => resolve(received));
    send(first);
  });
}

export function unaryCall(client: Record<string, any>, method: string, token: string, content: Record<string, unknown>): Promise<any> {
  const api = method[0]!.toLowerCase() + method.slice(1);
  return new Promise((resolve, reject) => {
    client[method]({ common: common(api, String(content.tran_no ?? '')), content }, bearer(token), (error: Error | null, response: any) => (error ? reject(error) : resolve(response)));
  });
}

/** One line per message, the way the simulators print them. */
export function describeMessage(side: string, direction: '->' | '<-', message: { common?: any; content?: any }, label?: string): string {
  const c = message.content ?? {};
  const fields = Object.entries(c).filter(([key, value]) => key !== 'state' && value !== '' && value !== '0' && !['transfer_key', 'hash_key', 'transfer_signature'].includes(key));
  const result = message.common?.res_code ? ` [${message.common.res_code} ${message.common.res_message}]` : '';
  return `${side} ${direction} ${label ?? c.state ?? ''}${result} ${fields.map(([k, v]) => `${k}=${String(v)}`).join(' ')}`.trimEnd();
}

/** `res_code` → `resCode`: the CLI's results are camelCase, whatever the wire calls a field. */
const camelCase = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * A message without its empty fields, its names camelCase: what the simulators print as their
 * result (the step lines above it show the wire's own names, `res_code=…`).
 */
export function compact(message: { common?: any; content?: any } | undefined): Record<string, string> | undefined {
  if (!message) return undefined;
  const out: Record<string, string> = { resCode: message.common?.res_code ?? '', resMessage: message.common?.res_message ?? '' };
  for (const [key, value] of Object.entries(message.content ?? {})) if (value !== '' && value !== '0') out[camelCase(key)] = String(value);
  return out;
}
