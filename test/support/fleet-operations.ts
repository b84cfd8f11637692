import type * as grpc from '@grpc/grpc-js';
import { openSession, unary, type Session } from './payments.ts';
import { sha256Hex } from './transfer-scheme.ts';

/**
 * What a client of one instance of a fleet does over the wire (HTTP and gRPC, nothing in-process),
 * each call bounded in time: a dead instance answers nothing, and its callers must not hang. An
 * operation answers the code the client heard, or `lost` when its connection failed before an answer.
 */
export interface Endpoint {
  name: string;
  baseUrl: string;
  client: grpc.Client & Record<string, any>;
}

export type Answer = { code: string; message?: string; transactionId?: string; approvalNo?: string } | { lost: string };

export const accepted = (answer: Answer | undefined, ...codes: string[]) => answer !== undefined && 'code' in answer && codes.includes(answer.code);
export const describeAnswer = (answer: Answer | undefined) => (answer === undefined ? 'none' : 'code' in answer ? answer.code : `lost (${answer.lost.slice(0, 40)})`);

const lostOf = (error: unknown): { lost: string } => ({ lost: (error as Error).message });

/** Rejects once `ms` have passed: every wait below is bounded. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A JSON-RPC call of the token API: its `result`, or a thrown error (connection, protocol error, timeout). */
export async function tokenRpc(at: Endpoint, method: string, params: unknown, timeoutMs = 45_000): Promise<any> {
  const response = await fetch(`${at.baseUrl}/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(timeoutMs),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await response.json() as any;
  if (body.error) throw new Error(`${method} on ${at.name}: ${body.error.code} ${body.error.msg}`);
  return body.result;
}

export interface Holder { address: string; secretKey: string }

/** The app's signed transfer request, made over `at`'s token API (temp key, hashKey, signData). */
export async function signTransfer(at: Endpoint, from: Holder, to: string, amount: string) {
  const { tempKey } = (await tokenRpc(at, 'net_getTempKey', { address: from.address, keyType: 'transfer' }, 10_000)).resultData;
  const hashKey = sha256Hex(`${tempKey}|${from.secretKey}`);
  const data = sha256Hex(`${from.address}|${to}|${amount}|${tempKey}|${hashKey}`);
  const { signature } = (await tokenRpc(at, 'signData', { address: from.address, tempKey, hashKey, data }, 10_000)).resultData;
  return { fromAddress: from.address, toAddress: to, amount, tempKey: tempKey as string, hashKey, signature: signature as string };
}

export type SignedTransfer = Awaited<ReturnType<typeof signTransfer>>;

/** The token API `transfer` of a signed request on `at`: its resultCode, or lost. */
export async function sendTransfer(at: Endpoint, request: SignedTransfer): Promise<Answer> {
  try {
    const result = await tokenRpc(at, 'transfer', request);
    return { code: String(result.resultCode), ...(result.TransactionID && { transactionId: result.TransactionID }) };
  } catch (error) {
    return lostOf(error);
  }
}

/** A password login on `at` (a new JWT), or lost. */
export async function login(at: Endpoint, id: string, password: string): Promise<{ token: string } | { lost: string }> {
  try {
    const response = await fetch(`${at.baseUrl}/v2/auth/auth-user`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(20_000), body: JSON.stringify({ id, password }),
    });
    if (response.status !== 200) return { lost: `login on ${at.name}: HTTP ${response.status} ${await response.text()}` };
    return { token: ((await response.json()) as { token: string }).token };
  } catch (error) {
    return lostOf(error);
  }
}

/** `GET /v2/auth/me` on `at` with a JWT (another instance's): its HTTP status as the code, or lost. */
export async function whoAmI(at: Endpoint, token: string): Promise<Answer & { userId?: string }> {
  try {
    const response = await fetch(`${at.baseUrl}/v2/auth/me`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(20_000) });
    const body = await response.json() as any;
    return { code: String(response.status), userId: body.userId };
  } catch (error) {
    return lostOf(error);
  }
}

/** The session's next message, or a failure once its stream ended or `timeoutMs` passed. */
export function nextOrEnd(session: Session, timeoutMs: number): Promise<any> {
  return Promise.race([
    session.next(timeoutMs),
    session.closed.then((status) => { throw new Error(`the stream ended ${status.code} ${status.details}`); }),
  ]);
}

export interface PaymentCall {
  pos: Endpoint;
  app: Endpoint;
  store: { tid: string; apiKey: string };
  tranNo: string;
  user: Holder;
  /** The app user's JWT (from a login on any instance). */
  token: string;
  /** The QR code's user_uuid; the app sends it too unless it is the user's id (a contract-literal app sends only state). */
  userUuid: string;
  appSendsUuid: boolean;
  exchangeAmount: string;
  /** A second POS sending the same START_PAY (same tran_no and QR code) at the same time, on this instance. */
  alsoPos?: Endpoint;
}

/** The POS's answer to its START_PAY: the END_PAY it ends with (past REQUEST_TRANSFER), or lost. */
async function posEnd(pos: Session): Promise<Answer> {
  try {
    for (;;) {
      const message = await nextOrEnd(pos, 60_000);
      if (message.content.state === 'REQUEST_TRANSFER') continue;
      return { code: message.common.res_code, message: message.common.res_message, transactionId: message.content.transfer_transaction_id, approvalNo: message.content.approval_no };
    }
  } catch (error) {
    return lostOf(error);
  }
}

/**
 * One gRPC payment with the app's stream on `app` and the POS's on `pos`: the app sends START_PAY,
 * the POS its START_PAY, the app signs (over its own instance's token API) what REQUEST_TRANSFER
 * asks. Answers what each side heard last: END_PAY's res_code, or lost when its stream failed.
 */
export async function payAcross(call: PaymentCall): Promise<{ pos: Answer; app: Answer; alsoPos?: Answer }> {
  const app = openSession(call.app.client, 'DoPayment', call.token);
  const posSessions = [call.pos, ...(call.alsoPos ? [call.alsoPos] : [])].map((at) => openSession(at.client, 'StartPayment', call.store.apiKey));
  try {
    app.send(call.appSendsUuid ? { state: 'START_PAY', user_uuid: call.userUuid } : { state: 'START_PAY' });
    for (const session of posSessions) {
      session.send({
        state: 'START_PAY', tid: call.store.tid, tran_no: call.tranNo, exchange_amount: call.exchangeAmount, user_uuid: call.userUuid,
        token_symbol: 'VIXP', user_address: call.user.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
      });
    }
    const posSides = Promise.all(posSessions.map(posEnd));
    const appSide = (async (): Promise<Answer> => {
      const request = await nextOrEnd(app, 60_000);
      if (request.content.state !== 'REQUEST_TRANSFER') return { code: request.common.res_code, message: request.common.res_message };
      const transfer = await signTransfer(call.app, call.user, request.content.settlement_address, request.content.token_amount);
      app.send({
        state: 'TRANSFER', tran_no: call.tranNo, transfer_key: transfer.tempKey, hash_key: transfer.hashKey,
        transfer_signature: transfer.signature, transfer_comment: request.content.transfer_comment,
      });
      const end = await nextOrEnd(app, 60_000);
      return { code: end.common.res_code, message: end.common.res_message, transactionId: end.content.transfer_transaction_id };
    })().catch(lostOf);
    const [[posAnswer, alsoPosAnswer], appAnswer] = await Promise.all([posSides, appSide]);
    return { pos: posAnswer!, app: appAnswer, ...(alsoPosAnswer && { alsoPos: alsoPosAnswer }) };
  } finally {
    app.call.cancel();
    for (const session of posSessions) session.call.cancel();
  }
}

/** IssueReward on `at` under `tranNo`: the reward, or the code, or lost. */
export async function issueReward(at: Endpoint, store: { tid: string; apiKey: string }, tranNo: string, reason: string, exchangeAmount: string)
  : Promise<Answer & { rewardId?: string; tokenAmount?: string }> {
  try {
    const response = await within(unary(at.client, 'IssueReward', store.apiKey, { tid: store.tid, tran_no: tranNo, reward_reason: reason, exchange_amount: exchangeAmount }), 30_000, `IssueReward on ${at.name}`);
    return { code: response.common.res_code, message: response.common.res_message, rewardId: response.content.reward_id, tokenAmount: response.content.token_amount };
  } catch (error) {
    return lostOf(error);
  }
}

/** A reward claim from a printed receipt on `at` (DoPayment START_REWARD): END_REWARD's code, or lost. */
export async function claimReward(at: Endpoint, token: string, reward: { rewardId: string; tokenAmount: string }, userAddress: string): Promise<Answer> {
  const app = openSession(at.client, 'DoPayment', token);
  try {
    app.send({ state: 'START_REWARD', reward_id: reward.rewardId, token_amount: reward.tokenAmount, token_symbol: 'VIXP', user_address: userAddress });
    const end = await nextOrEnd(app, 60_000);
    return { code: end.common.res_code, message: end.common.res_message };
  } catch (error) {
    return lostOf(error);
  } finally {
    app.call.cancel();
  }
}
