import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  claimReward, describeAnswer, issueReward, payAcross, sendTransfer, signTransfer, tokenRpc, within, type Answer, type Endpoint,
} from '../support/fleet-operations.ts';
import { unary } from '../support/payments.ts';
import type { ChaosFleet, Store } from './fleet.ts';
import { names } from './fleet.ts';
import type { Op, Schedule } from './schedule.ts';

/**
 * The workload: each operation of the schedule with accounts of its own (so that what moved on chain
 * between two addresses says which operation moved it), run over the wire against the instances the
 * schedule names, every call bounded. Each operation records the money it may move — from, to,
 * amount — and how its answer classes that move: `success` (answered done: on chain exactly once),
 * `refused` (answered a code that says nothing moved: never on chain), `indefinite` (a timeout, a
 * 5xx, a dropped stream: zero or one, and a lookup after the heal says which), `not-tried`. The
 * checker (checker.ts) holds them against the chain.
 */
export type Outcome = 'success' | 'refused' | 'indefinite' | 'not-tried';

export interface Move {
  what: string;
  from: string;
  to: string;
  amount: bigint;
  outcome: Outcome;
  answer: string;
  /** What a lookup after the heal said: moved or not (a REST pay's replay, a transfer's status). */
  lookup?: { moved: boolean; said: string };
  /** A lookup to make once the fleet is quiet: moved or not, or undefined while it does not say (pending). */
  look?: () => Promise<{ moved: boolean; said: string } | undefined>;
  /**
   * Why the lookup may still not say after the heal (a documented window, docs/reliability.md
   * "Known limits"): an indefinite move whose lookup never decides is a violation unless this is set.
   */
  mayStayPending?: string;
  /** What its lookup last said when it did not decide. */
  undecided?: string;
}

export interface OpRecord {
  op: Op;
  label: string;
  moves: Move[];
  /** Webhook events the store must have received at least once. */
  webhooks: Array<{ type: string; field: string; value: string }>;
  /** The receipts its outcome owes (fetched after the heal, each verified), and how many. */
  receipts?: { what: string; count: number; fetch: () => Promise<unknown[]> };
}

const unit = 10n ** 18n;
const password = 'chaos horse battery';
const paymentVixp = 5n;
const rewardVixp = 2n;
const transferVixp = 4n;
const restPayVixp = 3n;
const x402Vixp = 1n;

/** A GET with a bearer key, its status and JSON body (or thrown: a lost connection, a timeout). */
async function getJson(url: string, key: string, timeoutMs = 10_000): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(timeoutMs) });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

const classify = (answer: Answer | undefined, ok: string[], indefinite: string[]): Outcome => {
  if (answer === undefined) return 'not-tried';
  if ('lost' in answer) return 'indefinite';
  if (ok.includes(answer.code)) return 'success';
  return indefinite.includes(answer.code) ? 'indefinite' : 'refused';
};

/**
 * A REST pay's answer (docs/pay-api.md): 200 paid; 202 sent but not settled yet, 409 in progress and
 * a 5xx are indefinite; anything else refused.
 */
export const restPayOutcome = (answer: Answer | undefined): Outcome => classify(answer, ['200'], ['202', '409', '500', '502', '503', '504']);

/**
 * What the same request with the same key says of the first one: 200 paid, any other 4xx or 502 (it
 * provably moved nothing) not paid; 202 (still pending), 409, another 5xx or no answer: not decided yet.
 */
export function restPayReplay(again: Answer): { moved: boolean; said: string } | undefined {
  if ('lost' in again || again.code === '202' || again.code === '409' || (again.code.startsWith('5') && again.code !== '502')) return undefined;
  return { moved: again.code === '200', said: `replayed ${again.code}` };
}

interface Prepared { op: Op; run(): Promise<OpRecord> }

/** Accounts and tokens of every operation, made by the operator before the window opens. */
export async function prepareWorkload(fleet: ChaosFleet, schedule: Schedule): Promise<Prepared[]> {
  const { operator } = fleet;
  const at = (i: number): Endpoint => fleet.instances[i]!.endpoint;
  const newHolder = async (tokens: bigint) => {
    const wallet = await operator.wallet.createAddress();
    if (tokens > 0n) await operator.wallet.mint('ethereum', { to: wallet.address, amount: String(tokens) });
    return wallet;
  };
  const newUser = async (tokens: bigint) => {
    const wallet = await newHolder(tokens);
    const userId = `chaos-${randomUUID()}`;
    await operator.identity.users.createUser({ id: userId, password, name: 'Chaos Payer', walletAddress: wallet.address });
    // Long enough for the window, its faults and the heal.
    const { token } = await operator.identity.jwt.issueAccessToken(userId);
    return { ...wallet, userId, token };
  };
  // A read after the heal, on instance `i` or, when it does not answer (down, 5xx), on the next one.
  const read = async (i: number, path: string, key: string) => {
    let last: unknown;
    for (const n of [i, ...fleet.instances.keys()].filter((x, k, all) => all.indexOf(x) === k)) {
      try {
        const answer = await getJson(`${at(n).baseUrl}${path}`, key);
        if (answer.status < 500) return answer;
        last = new Error(`${names[n]} answered ${answer.status}`);
      } catch (error) {
        last = error;
      }
    }
    throw last;
  };
  const prepared: Prepared[] = [];
  for (const [n, op] of schedule.ops.entries()) {
    const [first, second, third] = op.on;
    const store: Store = fleet.stores[n % fleet.stores.length]!;
    if (op.kind === 'transfer') {
      const sender = await newHolder(10n);
      const recipient = await operator.wallet.createAddress();
      prepared.push({
        op, run: async () => {
          const label = `#${n} transfer ${sender.address.slice(0, 10)} signed on ${names[first]} sent to ${names[second]}`;
          let answer: Answer;
          try {
            const request = await signTransfer(at(first), sender, recipient.address, String(transferVixp));
            answer = await sendTransfer(at(second), request);
          } catch (error) {
            // Refused before anything was signed (the temp key or the signature not made): nothing sent.
            return { op, label, moves: [{ what: 'transfer', from: sender.address, to: recipient.address, amount: transferVixp * unit, outcome: 'not-tried', answer: `not signed: ${(error as Error).message.slice(0, 80)}` }], webhooks: [] };
          }
          const outcome = classify(answer, ['200'], ['202', '500', '503']);
          const transactionId = 'code' in answer ? answer.transactionId : undefined;
          return {
            op, label, webhooks: [],
            moves: [{
              what: 'transfer', from: sender.address, to: recipient.address, amount: transferVixp * unit, outcome, answer: describeAnswer(answer),
              ...(transactionId && {
                look: async () => {
                  const status = await tokenRpc(at(first), 'getTransferStatus', { transactionId, fromAddress: sender.address }, 10_000);
                  const said = String(status.resultData?.status ?? status.resultCode);
                  return said === 'confirmed' ? { moved: true, said } : said === 'failed' ? { moved: false, said } : undefined;
                },
              }),
            }],
          };
        },
      });
    } else if (op.kind === 'rest-pay') {
      const user = await newUser(10n);
      const key = randomUUID();
      const pay = async (i: number): Promise<Answer> => {
        try {
          const response = await fetch(`${at(i).baseUrl}/v1/ict/pay`, {
            method: 'POST', signal: AbortSignal.timeout(60_000),
            headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}`, 'idempotency-key': key },
            body: JSON.stringify({ tokenName: 'VIXP', amount: String(restPayVixp), myAddress: user.address, password }),
          });
          const body = await response.json() as any;
          return { code: String(response.status), transactionId: body?.resultData?.transactionId };
        } catch (error) {
          return { lost: (error as Error).message };
        }
      };
      prepared.push({
        op, run: async () => {
          const answer = await pay(first);
          const outcome = restPayOutcome(answer);
          return {
            op, label: `#${n} REST pay ${user.address.slice(0, 10)} key ${key.slice(0, 8)} on ${names[first]}`, webhooks: [],
            moves: [{
              what: 'rest pay', from: user.address, to: fleet.payReceiver, amount: restPayVixp * unit, outcome, answer: describeAnswer(answer),
              mayStayPending: 'a REST pay cut off by a crash answers in progress (409) until its stale window (pairing + idle + 5 minutes) ends',
              // The same request with the same key on another instance: it answers the first outcome.
              look: async () => restPayReplay(await pay(second)),
            }],
          };
        },
      });
    } else if (op.kind === 'payment') {
      const user = await newUser(10n);
      const tranNo = `CH${randomUUID().slice(0, 8)}`;
      prepared.push({
        op, run: async () => {
          const label = `#${n} payment ${tranNo} at ${store.tid} POS ${names[first]} app ${names[second]}${op.cancel === 'none' ? '' : ` ${op.cancel} cancel on ${names[third]}`}`;
          const answers = await payAcross({
            pos: at(first), app: at(second), store, tranNo, user, token: user.token, userUuid: user.userId, appSendsUuid: false, exchangeAmount: String(paymentVixp * 1000n),
          });
          const codes = [answers.pos, answers.app];
          const outcome: Outcome = codes.some((a) => classify(a, ['00'], []) === 'success') ? 'success'
            : codes.some((a) => classify(a, ['00'], ['10', '13']) === 'indefinite') ? 'indefinite' : 'refused';
          // What became of the tran_no (GET /v1/ict/payments), asked of the third instance.
          const status = async () => {
            const { status: code, body } = await read(third, `/v1/ict/payments/${store.tid}/${tranNo}`, store.apiKey);
            return code === 404 ? { status: 'never started' } as const : code === 200 ? body.resultData as { status: string; refunds: unknown[]; refundedAmount: string } : undefined;
          };
          const pending = 'a payment cut off by a crash is pending until its stale window (pairing + idle + 5 minutes) ends';
          const record: OpRecord = {
            op, label, webhooks: outcome === 'success' ? [{ type: 'payment.approved', field: 'tran_no', value: tranNo }] : [],
            moves: [{
              what: 'payment', from: user.address, to: store.settlementAddress, amount: paymentVixp * unit, outcome, answer: `POS ${describeAnswer(answers.pos)}, app ${describeAnswer(answers.app)}`,
              mayStayPending: pending,
              look: async () => {
                const said = await status();
                return said?.status === 'approved' ? { moved: true, said: 'approved' } : said?.status === 'failed' || said?.status === 'never started' ? { moved: false, said: said.status } : undefined;
              },
            }],
            ...(outcome === 'success' && {
              receipts: { what: 'payment', count: 1, fetch: async () => (await read(third, `/v1/receipts/${store.tid}/${tranNo}`, store.apiKey)).body?.receipts ?? [] },
            }),
          };
          const transactionId = 'code' in answers.pos ? answers.pos.transactionId : undefined;
          if (op.cancel !== 'none' && outcome === 'success' && transactionId) {
            const refund = op.cancel === 'whole' ? paymentVixp : 2n;
            let answer: Answer;
            try {
              const response = await within(unary(at(third).client, 'CancelPayment', store.apiKey, {
                tid: store.tid, transfer_transaction_id: transactionId, user_address: user.address,
                contract_address: fleet.operator.contracts.ethereum.vixpToken, token_symbol: 'VIXP', token_amount: String(refund),
              }), 60_000, `CancelPayment on ${names[third]}`);
              answer = { code: response.common.res_code, message: response.common.res_message };
            } catch (error) {
              answer = { lost: (error as Error).message };
            }
            const cancelOutcome = classify(answer, ['00'], ['10', '13']);
            record.moves.push({
              what: `${op.cancel} cancellation`, from: store.settlementAddress, to: user.address, amount: refund * unit, outcome: cancelOutcome, answer: describeAnswer(answer),
              mayStayPending: 'a cancellation cut off by a crash is in progress until it is STALE_OPERATION_SECONDS old and a retry or the sweep settles it',
              // The payment's done refunds (one cancellation at most here); one in progress counts in refundedAmount only.
              look: async () => {
                const said = await status();
                if (!said || !('refunds' in said)) return undefined;
                if (said.refunds.length > 0) return { moved: true, said: `${said.refunds.length} refund(s)` };
                return Number(said.refundedAmount) === 0 ? { moved: false, said: 'no refund' } : undefined;
              },
            });
            if (cancelOutcome === 'success') {
              record.webhooks.push({ type: 'payment.canceled', field: 'tran_no', value: tranNo });
              record.receipts!.count++;
            }
          }
          return record;
        },
      });
    } else if (op.kind === 'x402') {
      // A client of the published @x402 packages: its payment into the store's settlement account,
      // settled by the store's resource server (its facilitator key) on one instance, looked up on another.
      const payer = privateKeyToAccount(generatePrivateKey());
      await operator.wallet.mint('ethereum', { to: payer.address, amount: '10' });
      const requirements: PaymentRequirements = {
        scheme: 'exact', network: `eip155:${operator.chains.ethereum.chainId}`, asset: operator.contracts.ethereum.vixpToken,
        amount: (x402Vixp * unit).toString(), payTo: store.settlementAddress, maxTimeoutSeconds: 120, extra: { name: 'VIXP', version: '1' },
      };
      prepared.push({
        op, run: async () => {
          const { payload } = await new ExactEvmClientScheme(payer).createPaymentPayload(2, requirements);
          const nonce = (payload as { authorization: { nonce: string } }).authorization.nonce.toLowerCase();
          const paymentPayload: PaymentPayload = { x402Version: 2, accepted: requirements, payload, resource: { url: 'http://chaos.test/report', description: '', mimeType: '' } };
          let answer: Answer;
          try {
            const response = await fetch(`${at(first).baseUrl}/x402/settle`, {
              method: 'POST', signal: AbortSignal.timeout(60_000),
              headers: { 'content-type': 'application/json', authorization: `Bearer ${store.facilitatorKey}` },
              body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: requirements }),
            });
            const body = await response.json().catch(() => undefined) as { success?: boolean; errorReason?: string } | undefined;
            // 200 with success false is a definite refusal; 202 is settlement_pending.
            answer = { code: response.status === 200 ? (body?.success ? '200' : `200 ${body?.errorReason ?? 'refused'}`) : String(response.status) };
          } catch (error) {
            answer = { lost: (error as Error).message };
          }
          const outcome = classify(answer, ['200'], ['202', '500', '502', '503', '504']);
          const settlement = `/x402/settlements/${payer.address}/${nonce}`;
          return {
            op, label: `#${n} x402 ${payer.address.slice(0, 10)} nonce ${nonce.slice(0, 10)} to ${store.tid} settled on ${names[first]}`,
            webhooks: outcome === 'success' ? [{ type: 'x402.settled', field: 'nonce', value: nonce }] : [],
            ...(outcome === 'success' && { receipts: { what: 'x402 payment', count: 1, fetch: async () => (await read(second, `${settlement}/receipt`, store.facilitatorKey)).body?.receipts ?? [] } }),
            moves: [{
              what: 'x402 settle', from: payer.address, to: store.settlementAddress, amount: x402Vixp * unit, outcome, answer: describeAnswer(answer),
              // Where the settlement stands (GET /x402/settlements/{payer}/{nonce}); 404: never accepted.
              look: async () => {
                const { status, body } = await read(second, settlement, store.facilitatorKey);
                if (status === 404) return { moved: false, said: 'no settlement accepted' };
                return body?.status === 'settled' ? { moved: true, said: 'settled' } : body?.status === 'failed' ? { moved: false, said: `failed ${body.errorReason ?? ''}` } : undefined;
              },
            }],
          };
        },
      });
    } else {
      const user = await newUser(0n);
      const tranNo = `CR${randomUUID().slice(0, 8)}`;
      prepared.push({
        op, run: async () => {
          const label = `#${n} reward ${tranNo} at ${store.tid} issued on ${names[first]} claimed on ${names[second]}`;
          const issued = await issueReward(at(first), store, tranNo, `receipt ${tranNo}`, String(rewardVixp * 1000n));
          const move: Move = { what: 'reward claim', from: store.settlementAddress, to: user.address, amount: rewardVixp * unit, outcome: 'not-tried', answer: `issue ${describeAnswer(issued)}` };
          const record: OpRecord = { op, label, moves: [move], webhooks: [] };
          if (!('code' in issued) || issued.code !== '00') return record;
          const claimed = await claimReward(at(second), user.token, { rewardId: issued.rewardId!, tokenAmount: issued.tokenAmount! }, user.address);
          move.outcome = classify(claimed, ['00'], ['10']);
          move.answer += `, claim ${describeAnswer(claimed)}`;
          if (move.outcome === 'success') {
            record.webhooks.push({ type: 'reward.claimed', field: 'reward_id', value: issued.rewardId! });
            record.receipts = {
              what: 'reward claim', count: 1,
              fetch: async () => (await read(third, `/v1/receipts/${store.tid}/rewards/${issued.rewardId!}`, store.apiKey)).body?.receipts ?? [],
            };
          }
          return record;
        },
      });
    }
  }
  return prepared;
}

/** Runs every operation at its time; each bounded (a hang is a violation of its own). */
export async function runWorkload(prepared: Prepared[], log: (line: string) => void): Promise<OpRecord[]> {
  const started = Date.now();
  return Promise.all(prepared.map(async ({ op, run }) => {
    await sleep(Math.max(0, op.atMs - (Date.now() - started)));
    try {
      const record = await within(run(), 180_000, `operation at +${op.atMs} ms`);
      log(`  ${record.label}: ${record.moves.map((m) => `${m.what} ${m.outcome} (${m.answer})`).join('; ')}`);
      return record;
    } catch (error) {
      return { op, label: `operation ${op.kind} at +${op.atMs} ms`, moves: [], webhooks: [], hung: (error as Error).message } as OpRecord;
    }
  }));
}

