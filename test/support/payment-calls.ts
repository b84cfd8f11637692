import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { TestPlatform } from './platform.ts';
import { prepareTransfer, type Wallet } from './transfer-scheme.ts';
import type { GrpcServer } from '../../src/transports/grpc/grpc-server.ts';

// The payment server's client side (a gRPC client from the .proto, sessions, users, the POS's and the
// app's messages): the same on every pairing desk and store. Starting the server on the desk and store
// the test switches name is payments.ts's; keeping it apart lets the matrix tell the tests those
// switches can change (scripts/test-selection.ts).

/** A client of our own, from the .proto alone: what any language's generated client does. */
const protoFile = new URL('../../proto/g00/payments/v2/payments.proto', import.meta.url).pathname;
const definition = protoLoader.loadSync(protoFile, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const PaymentsService = (grpc.loadPackageDefinition(definition) as any).g00.payments.v2.PaymentsService as grpc.ServiceClientConstructor;

export interface PaymentTest {
  t: TestPlatform;
  server: GrpcServer;
  client: grpc.Client & Record<string, any>;
  /** The key prefix of the server's Redis pairing desk (a run on the Redis desk, payments.ts). */
  redisKeyPrefix?: string;
  stop(): Promise<void>;
}

/**
 * A PaymentsService client. `ownConnection`: a connection of its own instead of the one grpc-js
 * shares between clients of one target (a POS terminal or a phone has its own; the server caps
 * streams per connection).
 */
export function paymentsClient(port: number, options: { ownConnection?: boolean } = {}): grpc.Client & Record<string, any> {
  return new PaymentsService(`127.0.0.1:${port}`, grpc.credentials.createInsecure(),
    options.ownConnection ? { 'grpc.use_local_subchannel_pool': 1 } : {}) as grpc.Client & Record<string, any>;
}

export function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

export function common(targetApi: string, tranNo = ''): Record<string, string> {
  return {
    target_name: 'Payment API', target_svc: 'payments.test', target_package: 'g00.payments.v2', target_api: targetApi,
    source_svc: 'test', source_ver: '1.0.0', source_addr: '127.0.0.1', req_timestamp: '20261122120000', language_code: 'ko', tran_no: tranNo,
  };
}

/** A bidi stream with a queue of what the server sent. */
export interface Session {
  call: grpc.ClientDuplexStream<any, any>;
  send(content: Record<string, unknown>, targetApi?: string): void;
  next(timeoutMs?: number): Promise<any>;
  /** Resolves when the server ends the stream (status OK) or fails it. */
  closed: Promise<grpc.StatusObject>;
}

export function openSession(client: Record<string, any>, method: 'StartPayment' | 'DoPayment', token: string): Session {
  const call: grpc.ClientDuplexStream<any, any> = client[method](bearer(token));
  const queue: any[] = [];
  const waiters: Array<{ resolve(m: any): void; reject(e: Error): void }> = [];
  call.on('data', (message) => { const w = waiters.shift(); if (w) w.resolve(message); else queue.push(message); });
  let ended: grpc.StatusObject | undefined;
  const closed = new Promise<grpc.StatusObject>((resolve) => {
    call.on('status', (status: grpc.StatusObject) => {
      resolve(status);
      // The call is over: once any message still in flight is delivered, whoever still waits for
      // one gets its status instead.
      setImmediate(() => {
        ended = status;
        for (const w of waiters.splice(0)) w.reject(new Error(`${method}: ended with status ${status.code} (${status.details}) before a message`));
      });
    });
    call.on('error', () => undefined);
  });
  const targetApi = method === 'StartPayment' ? 'startPayment' : 'doPayment';
  return {
    call,
    send: (content, api = targetApi) => call.write({ common: common(api, String(content.tran_no ?? '')), content }),
    next: (timeoutMs = 15_000) => new Promise((resolve, reject) => {
      const queued = queue.shift();
      if (queued) return resolve(queued);
      if (ended) return reject(new Error(`${method}: ended with status ${ended.code} (${ended.details}) before a message`));
      const waiter = {
        resolve: (m: any) => { clearTimeout(timer); resolve(m); },
        reject: (e: Error) => { clearTimeout(timer); reject(e); },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`${method}: no message within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.push(waiter);
    }),
    closed,
  };
}

export function unary(client: Record<string, any>, method: string, token: string, content: Record<string, unknown>): Promise<any> {
  const api = method[0]!.toLowerCase() + method.slice(1);
  return new Promise((resolve, reject) => {
    client[method]({ common: common(api, String(content.tran_no ?? '')), content }, bearer(token), (error: Error | null, response: any) => (error ? reject(error) : resolve(response)));
  });
}

export interface TestUser extends Wallet {
  userId: string;
  token: string;
}

/** A user with a custodial wallet, a JWT, and `tokens` VIXP on the payment network. */
export async function newUser(p: Pick<PaymentTest, 't'>, tokens?: string): Promise<TestUser> {
  const { platform } = p.t;
  const wallet = await platform.wallet.createAddress();
  const userId = `user-${randomUUID()}`;
  await platform.identity.users.createUser({ id: userId, password: 'correct horse battery', name: 'Test User', walletAddress: wallet.address });
  const { token } = await platform.identity.jwt.issueAccessToken(userId);
  if (tokens) await platform.wallet.mint(platform.config.paymentNetwork, { to: wallet.address, amount: tokens });
  return { ...wallet, userId, token };
}

export async function balanceOf(p: PaymentTest, address: string): Promise<string> {
  return (await p.t.platform.wallet.getBalance(p.t.platform.config.paymentNetwork, { address })).balance;
}

/** The app's TRANSFER for a REQUEST_TRANSFER, made the way an app makes it (JSON-RPC temp key, signData). */
export async function transferFor(p: PaymentTest, user: Wallet, request: any): Promise<Record<string, unknown>> {
  const prepared = await prepareTransfer(p.t.app, user, request.content.settlement_address, request.content.token_amount);
  return {
    state: 'TRANSFER', tran_no: request.content.tran_no, transfer_key: prepared.tempKey, hash_key: prepared.hashKey,
    transfer_signature: prepared.signature, transfer_comment: request.content.transfer_comment,
  };
}

/** The POS's START_PAY with the QR data of `user`. */
export function startPay(p: PaymentTest, tid: string, tranNo: string, user: { address: string }, userUuid: string, exchangeAmount: string, expiresInSeconds = 300) {
  const contract = p.t.platform.contracts[p.t.platform.config.paymentNetwork].vixpToken;
  return {
    state: 'START_PAY', tid, tran_no: tranNo, exchange_amount: exchangeAmount, user_uuid: userUuid, contract_address: contract,
    token_symbol: 'VIXP', user_address: user.address, expiration_time: String(Math.floor(Date.now() / 1000) + expiresInSeconds),
  };
}
