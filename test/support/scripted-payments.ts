import { randomUUID } from 'node:crypto';
import { openSession, startPay, transferFor, unary, type PaymentTest, type TestUser } from './payments.ts';

export interface TestStore {
  tid: string;
  name: string;
  settlementAddress: string;
  apiKey: string;
}

/**
 * A whole payment over gRPC, app first, as an app and a POS make it: the app's TRANSFER is signed for
 * what `signedFor` makes of the app's REQUEST_TRANSFER (as it came, by default). Answers both sides'
 * last message and stream status.
 */
export async function scriptedPayment(p: PaymentTest, store: Pick<TestStore, 'tid' | 'apiKey'>, user: TestUser, exchangeAmount: string, tranNo: string,
  signedFor: (request: any) => any = (request) => request) {
  const uuid = randomUUID();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  pos.send(startPay(p, store.tid, tranNo, user, uuid, exchangeAmount));
  const appRequest = await app.next();
  await pos.next();
  app.send(await transferFor(p, user, signedFor(appRequest)));
  const appEnd = await app.next();
  const posEnd = await pos.next();
  const [appStatus, posStatus] = await Promise.all([app.closed, pos.closed]);
  return { appEnd, posEnd, appStatus, posStatus };
}

/** A whole approved payment over gRPC, app first; answers the POS's END_PAY. */
export async function approvedPayment(p: PaymentTest, store: TestStore, user: TestUser, exchangeAmount: string, tranNo = `TR${randomUUID().slice(0, 8)}`) {
  const { posEnd: end } = await scriptedPayment(p, store, user, exchangeAmount, tranNo);
  if (end.common.res_code !== '00') throw new Error(`payment ${tranNo}: ${end.common.res_code} ${end.common.res_message}`);
  return { tranNo, end: end.content as Record<string, string> };
}

/**
 * A payment whose app signs a transfer of the wrong amount: refused (res_code 04) on both sides,
 * nothing moves. Answers the POS's res_code.
 */
export async function failedPayment(p: PaymentTest, store: TestStore, user: TestUser, exchangeAmount: string) {
  const tranNo = `TF${randomUUID().slice(0, 8)}`;
  const { posEnd: end } = await scriptedPayment(p, store, user, exchangeAmount, tranNo,
    (request) => ({ content: { ...request.content, token_amount: '0.000001' } }));
  return { tranNo, resCode: end.common.res_code as string };
}

/** CancelPayment of `tokenAmount` tokens of an approved payment. */
export async function cancelPayment(p: PaymentTest, store: TestStore, user: TestUser, end: Record<string, string>, tokenAmount: string) {
  const answer = await unary(p.client, 'CancelPayment', store.apiKey, {
    tid: store.tid, transfer_transaction_id: end.transfer_transaction_id, user_address: user.address,
    contract_address: end.contract_address, token_symbol: 'VIXP', token_amount: tokenAmount,
  });
  if (answer.common.res_code !== '00') throw new Error(`cancel: ${answer.common.res_code} ${answer.common.res_message}`);
  return answer.content as Record<string, string>;
}

/** IssueReward for `exchangeAmount`, answering its reward_id and token amount. */
export async function issueReward(p: PaymentTest, store: TestStore, exchangeAmount: string) {
  const answer = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `receipt-${randomUUID()}`, exchange_amount: exchangeAmount });
  if (answer.common.res_code !== '00') throw new Error(`issue reward: ${answer.common.res_code} ${answer.common.res_message}`);
  return answer.content as Record<string, string>;
}

/** The app's claim of a reward from a printed receipt (DoPayment START_REWARD); answers END_REWARD. */
export async function claimReward(p: PaymentTest, user: TestUser, reward: Record<string, string>) {
  const app = openSession(p.client, 'DoPayment', user.token);
  app.send({ state: 'START_REWARD', reward_id: reward.reward_id, token_amount: reward.token_amount, token_symbol: 'VIXP', user_address: user.address });
  const end = await app.next();
  await app.closed;
  if (end.common.res_code !== '00') throw new Error(`claim: ${end.common.res_code} ${end.common.res_message}`);
  return end.content as Record<string, string>;
}

/** CancelReward of a reward (issued or claimed). */
export async function cancelReward(p: PaymentTest, store: TestStore, reward: Record<string, string>) {
  const answer = await unary(p.client, 'CancelReward', store.apiKey, { reward_id: reward.reward_id, token_amount: reward.token_amount });
  if (answer.common.res_code !== '00') throw new Error(`cancel reward: ${answer.common.res_code} ${answer.common.res_message}`);
  return answer.content as Record<string, string>;
}
