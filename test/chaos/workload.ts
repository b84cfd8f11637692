import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Address } from 'viem';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
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
 * 5xx, a dropped stream: zero or one, and a lookup after the heal says which), `not-tried`.
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
  /** A lookup to make once the fleet is quiet. */
  look?: () => Promise<{ moved: boolean; said: string } | undefined>;
}

export interface OpRecord {
  op: Op;
  label: string;
  moves: Move[];
  /** Webhook events the store must have received at least once. */
  webhooks: Array<{ type: string; field: string; value: string }>;
}

const unit = 10n ** 18n;
const password = 'chaos horse battery';
const paymentVixp = 5n;
const rewardVixp = 2n;
const transferVixp = 4n;
const restPayVixp = 3n;

const classify = (answer: Answer | undefined, ok: string[], indefinite: string[]): Outcome => {
  if (answer === undefined) return 'not-tried';
  if ('lost' in answer) return 'indefinite';
  if (ok.includes(answer.code)) return 'success';
  return indefinite.includes(answer.code) ? 'indefinite' : 'refused';
};

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
          const outcome = classify(answer, ['200'], ['409', '500', '502', '503', '504']);
          return {
            op, label: `#${n} REST pay ${user.address.slice(0, 10)} key ${key.slice(0, 8)} on ${names[first]}`, webhooks: [],
            moves: [{
              what: 'rest pay', from: user.address, to: fleet.payReceiver, amount: restPayVixp * unit, outcome, answer: describeAnswer(answer),
              // The same request with the same key on another instance: it answers the first outcome.
              look: async () => {
                const again = await pay(second);
                if ('lost' in again || again.code === '409' || again.code.startsWith('5')) return undefined;
                return { moved: again.code === '200', said: `replayed ${again.code}` };
              },
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
          const record: OpRecord = {
            op, label, webhooks: outcome === 'success' ? [{ type: 'payment.approved', field: 'tran_no', value: tranNo }] : [],
            moves: [{ what: 'payment', from: user.address, to: store.settlementAddress, amount: paymentVixp * unit, outcome, answer: `POS ${describeAnswer(answers.pos)}, app ${describeAnswer(answers.app)}` }],
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
            record.moves.push({ what: `${op.cancel} cancellation`, from: store.settlementAddress, to: user.address, amount: refund * unit, outcome: cancelOutcome, answer: describeAnswer(answer) });
            if (cancelOutcome === 'success') record.webhooks.push({ type: 'payment.canceled', field: 'tran_no', value: tranNo });
          }
          return record;
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
          if (move.outcome === 'success') record.webhooks.push({ type: 'reward.claimed', field: 'reward_id', value: issued.rewardId! });
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

export interface Violation { op?: string; message: string }

/**
 * The checker, from the chain: every token Transfer event since block 0, by (from, to). Each move
 * answered success is there exactly once with its amount; refused and not-tried ones never; an
 * indefinite one at most once, and its lookup (when one answered) agrees with the chain. Then the
 * webhooks each outcome owes, and conservation (total supply = sum of balances = minted).
 */
export async function checkRecords(fleet: ChaosFleet, records: OpRecord[]): Promise<Violation[]> {
  const { operator } = fleet;
  const chain = operator.chains.ethereum;
  const vixp = operator.contracts.ethereum.vixpToken;
  const violations: Violation[] = [];
  for (const record of records) {
    if ((record as OpRecord & { hung?: string }).hung) violations.push({ op: record.label, message: `no answer: ${(record as OpRecord & { hung?: string }).hung}` });
    for (const move of record.moves) {
      if (move.look && move.outcome !== 'refused') {
        for (let attempt = 0; attempt < 20 && !move.lookup; attempt++) {
          move.lookup = await move.look().catch(() => undefined);
          if (!move.lookup) await sleep(1000);
        }
      }
    }
  }
  const logs = await chain.client.getContractEvents({ address: vixp, abi: vixpTokenAbi, eventName: 'Transfer', fromBlock: 0n });
  const transfers = new Map<string, bigint[]>();
  for (const log of logs) {
    const key = `${log.args.from}>${log.args.to}`.toLowerCase();
    transfers.set(key, [...(transfers.get(key) ?? []), log.args.value ?? 0n]);
  }
  for (const record of records) {
    for (const move of record.moves) {
      const moved = transfers.get(`${move.from}>${move.to}`.toLowerCase()) ?? [];
      const say = (message: string) => violations.push({ op: record.label, message: `${move.what} answered ${move.outcome} (${move.answer})${move.lookup ? `, lookup ${move.lookup.said}` : ''}: ${message}` });
      const wrongAmount = moved.filter((value) => value !== move.amount);
      if (wrongAmount.length > 0) say(`moved ${wrongAmount.join(', ')} instead of ${move.amount}`);
      if (move.outcome === 'success' && moved.length !== 1) say(`on chain ${moved.length} times, not exactly once`);
      if ((move.outcome === 'refused' || move.outcome === 'not-tried') && moved.length !== 0) say(`on chain ${moved.length} times, though refused`);
      if (move.outcome === 'indefinite' && moved.length > 1) say(`on chain ${moved.length} times`);
      if (move.lookup && move.lookup.moved !== (moved.length === 1)) say(`the lookup says ${move.lookup.moved ? 'moved' : 'not moved'}, the chain has it ${moved.length} times`);
      if (move.what === 'rest pay' && move.outcome === 'success' && move.lookup && !move.lookup.moved) say('answered 200, replayed as not paid');
    }
  }
  // Webhooks: at least once each (delivery retries for a while: wait for them).
  const owed = records.flatMap((record) => record.webhooks.map((hook) => ({ record, hook })));
  const deadline = Date.now() + 60_000;
  const delivered = (hook: OpRecord['webhooks'][number]) => fleet.receiver.received.some((r) => r.event.type === hook.type && r.event.data[hook.field] === hook.value);
  while (owed.some(({ hook }) => !delivered(hook)) && Date.now() < deadline) await sleep(500);
  for (const { record, hook } of owed.filter(({ hook }) => !delivered(hook))) violations.push({ op: record.label, message: `webhook ${hook.type} ${hook.field}=${hook.value} never delivered` });

  const holders = new Set<string>();
  let minted = 0n;
  for (const log of logs) {
    if (log.args.to) holders.add(log.args.to);
    if (log.args.from === '0x0000000000000000000000000000000000000000') minted += log.args.value ?? 0n;
  }
  holders.delete('0x0000000000000000000000000000000000000000');
  let sum = 0n;
  for (const holder of holders) sum += await chain.client.readContract({ address: vixp, abi: vixpTokenAbi, functionName: 'balanceOf', args: [holder as Address] });
  const totalSupply = await chain.client.readContract({ address: vixp, abi: vixpTokenAbi, functionName: 'totalSupply' });
  if (sum !== totalSupply) violations.push({ message: `the sum of balances ${sum} is not the total supply ${totalSupply}` });
  if (totalSupply !== minted) violations.push({ message: `the total supply ${totalSupply} is not what was minted ${minted}` });
  return violations;
}
