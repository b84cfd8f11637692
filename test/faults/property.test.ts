import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { call } from '../support/platform.ts';
import { prepareTransfer, type Wallet } from '../support/transfer-scheme.ts';
import { newUser, openSession, startPay, startPaymentTest, transferFor, unary, type PaymentTest, type TestUser } from '../support/payments.ts';
import { anvilControls } from '../support/chain-audit.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants } from './rig.ts';

/**
 * A property-based run (fast-check): random sequences of token-API transfers (sent up to three times
 * at once), REST payments (the same Idempotency-Key up to three times at once), gRPC payments (POS or
 * app first; the POS hanging up before or after the TRANSFER, the app dropping after its
 * REQUEST_TRANSFER, the TRANSFER sent twice), cancellations (the same tran_no up to three times at
 * once), rewards claimed up to three times at once and cancelled, and transfers through a stalled
 * chain node, across fresh users and two stores per run. After each step every balance is what a
 * model of the accepted operations says (each moved exactly once or not at all, none negative);
 * after each run the invariants of rig.ts hold (records agree with the chain's events,
 * conservation, no usable authorization left).
 *
 * FC_RUNS (default 20) sets the number of runs. A failure prints its seed and path; replay it with
 *   FC_SEED=<seed> FC_PATH=<path> node --test --test-force-exit test/faults/property.test.ts
 */
let p: PaymentTest;
const password = 'correct horse battery';

before(async () => {
  p = await startPaymentTest({
    RECEIPT_TIMEOUT_SECONDS: '10', AUTHORIZATION_TTL_SECONDS: '10', GRPC_MAX_STREAMS_PER_CLIENT: '200',
    PAYMENT_PAIRING_WINDOW_SECONDS: '5', PAYMENT_IDLE_TIMEOUT_SECONDS: '5',
  });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

const unit = 10n ** 18n;
const users = 4;
const user = fc.integer({ min: 0, max: users - 1 });
const amount = fc.integer({ min: 1, max: 7 });
const copies = fc.integer({ min: 1, max: 3 });
const step = fc.oneof(
  fc.record({ kind: fc.constant('transfer' as const), from: user, to: user, amount, copies }),
  fc.record({ kind: fc.constant('restPay' as const), from: user, amount, copies }),
  fc.record({
    kind: fc.constant('payment' as const), from: user, store: fc.integer({ min: 0, max: 1 }), amount, posFirst: fc.boolean(), transferTwice: fc.boolean(),
    disconnect: fc.constantFrom('none' as const, 'pos-before-transfer' as const, 'pos-after-transfer' as const, 'app-after-request' as const),
  }),
  fc.record({ kind: fc.constant('cancel' as const), payment: fc.nat(), copies }),
  fc.record({ kind: fc.constant('reward' as const), to: user, store: fc.integer({ min: 0, max: 1 }), claims: copies, cancelAfter: fc.boolean() }),
  fc.record({ kind: fc.constant('stalledTransfer' as const), from: user, to: user, amount }),
);
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

interface Run {
  people: TestUser[];
  stores: Array<{ tid: string; settlementAddress: string; apiKey: string }>;
  receiver: string;
  /** What each account must hold, in base units. */
  model: Map<string, bigint>;
  approved: Array<{ tx: string; store: number; user: number; units: bigint; refunded: boolean }>;
}

const balance = async (address: string) => BigInt((await p.t.platform.wallet.getBalance('ethereum', { address })).balanceRaw);
const move = (run: Run, from: string, to: string, units: bigint) => {
  run.model.set(from, run.model.get(from)! - units);
  run.model.set(to, run.model.get(to)! + units);
};

async function newRun(): Promise<Run> {
  const people = await Promise.all(Array.from({ length: users }, () => newUser(p, '10')));
  const stores = await Promise.all([0, 1].map(async (i) => p.t.platform.payments.addStore({ tid: `P${i}-${randomUUID().slice(0, 8)}`, name: `Store ${i}` })));
  await p.t.platform.wallet.mint('ethereum', { to: stores[0]!.settlementAddress, amount: '5' });
  const receiver = p.t.platform.relayer.address;
  const model = new Map<string, bigint>([[receiver, await balance(receiver)]]);
  for (const person of people) model.set(person.address, 10n * unit);
  model.set(stores[0]!.settlementAddress, 5n * unit);
  model.set(stores[1]!.settlementAddress, 0n);
  return { people, stores, receiver, model, approved: [] };
}

async function signed(from: Wallet, to: string, whole: number) {
  const { data: _data, ...prepared } = await prepareTransfer(p.t.app, from, to, String(whole));
  return prepared;
}

async function transfer(run: Run, s: Extract<Step, { kind: 'transfer' }>) {
  const from = run.people[s.from]!;
  const to = run.people[s.to]!;
  const request = await signed(from, to.address, s.amount);
  const answers = await Promise.all(Array.from({ length: s.copies }, () => call(p.t.app, '/token', 'transfer', request)));
  const ok = answers.filter((a) => a.resultCode === '200').length;
  const covered = run.model.get(from.address)! >= BigInt(s.amount) * unit;
  assert.equal(ok, covered ? 1 : 0, `transfer sent ${s.copies}×: ${answers.map((a) => a.resultCode).join(',')}`);
  if (ok) move(run, from.address, to.address, BigInt(s.amount) * unit);
}

async function stalledTransfer(run: Run, s: Extract<Step, { kind: 'stalledTransfer' }>) {
  const from = run.people[s.from]!;
  const request = await signed(from, run.people[s.to]!.address, s.amount);
  const covered = run.model.get(from.address)! >= BigInt(s.amount) * unit;
  const anvil = anvilControls(p.t.platform.chains.ethereum);
  await anvil.setAutomine(false);
  let answer: Promise<any>;
  try {
    answer = call(p.t.app, '/token', 'transfer', request);
    // The node takes the transaction and mines nothing until it comes back.
    if (covered) {
      await waitFor(async () => (await p.t.platform.store.db.selectFrom('authorizations').select('nonce')
        .where('from_address', '=', from.address).where('status', '=', 'submitted').execute()).length > 0,
      { timeoutMs: 20_000, message: 'the transfer is journaled (its authorization submitted) while the node stalls' });
    }
  } finally {
    await anvil.setAutomine(true);
  }
  await anvil.mine({ blocks: 1 });
  const result = await answer;
  assert.equal(result.resultCode, covered ? '200' : '402', JSON.stringify(result));
  if (covered) move(run, from.address, run.people[s.to]!.address, BigInt(s.amount) * unit);
}

async function restPay(run: Run, s: Extract<Step, { kind: 'restPay' }>) {
  const from = run.people[s.from]!;
  const key = randomUUID();
  const body = { tokenName: 'VIXP', amount: String(s.amount), myAddress: from.address, password };
  const answers = await Promise.all(Array.from({ length: s.copies }, () => p.t.app.inject({
    method: 'POST', url: '/v1/ict/pay', payload: body,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${from.token}`, 'idempotency-key': key },
  })));
  const covered = run.model.get(from.address)! >= BigInt(s.amount) * unit;
  const statuses = answers.map((a) => a.statusCode);
  if (covered) {
    assert.ok(statuses.includes(200) && statuses.every((c) => c === 200 || c === 409), `REST pay sent ${s.copies}× with one key: ${statuses}`);
    const txs = new Set(answers.filter((a) => a.statusCode === 200).map((a) => a.json().resultData.transactionId));
    assert.equal(txs.size, 1, 'every 200 names the same payment');
    move(run, from.address, run.receiver, BigInt(s.amount) * unit);
  } else {
    assert.ok(statuses.every((c) => c === 402 || c === 409), `REST pay without the funds: ${statuses}`);
  }
}

async function payment(run: Run, s: Extract<Step, { kind: 'payment' }>) {
  const who = run.people[s.from]!;
  const store = run.stores[s.store]!;
  const uuid = randomUUID();
  const tranNo = `PB${randomUUID().slice(0, 8)}`;
  const app = openSession(p.client, 'DoPayment', who.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  const startApp = () => app.send({ state: 'START_PAY', user_uuid: uuid });
  const startPos = () => pos.send(startPay(p, store.tid, tranNo, who, uuid, String(s.amount * 1000)));
  if (s.posFirst) { startPos(); startApp(); } else { startApp(); startPos(); }
  const covered = run.model.get(who.address)! >= BigInt(s.amount) * unit;
  const request = await app.next(20_000);
  if (!covered) {
    assert.notEqual(request.common.res_code, '00', 'a payment the balance cannot cover is refused before the transfer');
    pos.call.cancel();
    return;
  }
  assert.equal(request.content.state, 'REQUEST_TRANSFER', JSON.stringify(request.common));
  await pos.next(20_000);
  if (s.disconnect === 'pos-before-transfer') pos.call.cancel();
  if (s.disconnect === 'app-after-request') {
    app.call.cancel();
    const failed = await pos.next(20_000);
    assert.notEqual(failed.common.res_code, '00', 'the POS hears the app is gone');
    return;
  }
  const credentials = await transferFor(p, who, request);
  app.send(credentials);
  if (s.transferTwice) app.send(credentials);
  if (s.disconnect === 'pos-after-transfer') pos.call.cancel();
  const end = await app.next(30_000);
  if (s.disconnect === 'pos-before-transfer') {
    assert.notEqual(end.common.res_code, '00', 'a payment whose POS hung up before the TRANSFER is not made');
    return;
  }
  // A POS hanging up as the TRANSFER is sent races it: the payment is made (the hang-up came after)
  // or cancelled (01, before); either way exactly what the answer says happens.
  if (s.disconnect === 'pos-after-transfer' && end.common.res_code === '01') return;
  assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
  move(run, who.address, store.settlementAddress, BigInt(s.amount) * unit);
  run.approved.push({ tx: end.content.transfer_transaction_id, store: s.store, user: s.from, units: BigInt(s.amount) * unit, refunded: false });
  if (s.disconnect === 'pos-after-transfer') {
    // The POS retries the tran_no and hears the same approval.
    const retry = openSession(p.client, 'StartPayment', store.apiKey);
    retry.send(startPay(p, store.tid, tranNo, who, randomUUID(), String(s.amount * 1000)));
    const again = await retry.next(20_000);
    assert.equal(again.common.res_code, '00');
    assert.equal(again.content.transfer_transaction_id, end.content.transfer_transaction_id);
  }
}

async function cancel(run: Run, s: Extract<Step, { kind: 'cancel' }>) {
  if (run.approved.length === 0) return;
  const paid = run.approved[s.payment % run.approved.length]!;
  const store = run.stores[paid.store]!;
  const tranNo = `CB${randomUUID().slice(0, 8)}`;
  const answers = await Promise.all(Array.from({ length: s.copies }, () => unary(p.client, 'CancelPayment', store.apiKey, {
    tid: store.tid, transfer_transaction_id: paid.tx, tran_no: tranNo,
  })));
  const codes = answers.map((a) => a.common.res_code);
  const covered = run.model.get(store.settlementAddress)! >= paid.units;
  if (!paid.refunded && covered) {
    assert.ok(codes.includes('00') && codes.every((c: string) => c === '00' || c === '13'), `cancellation sent ${s.copies}× with one tran_no: ${codes}`);
    assert.equal(new Set(answers.filter((a) => a.common.res_code === '00').map((a) => a.content.transfer_transaction_id)).size, 1);
    move(run, store.settlementAddress, run.people[paid.user]!.address, paid.units);
    paid.refunded = true;
  } else {
    assert.ok(!codes.includes('00'), `a cancellation of a refunded payment, or beyond the store's funds, refunds nothing: ${codes}`);
  }
}

async function reward(run: Run, s: Extract<Step, { kind: 'reward' }>) {
  const store = run.stores[s.store]!;
  const who = run.people[s.to]!;
  const issued = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `pb-${randomUUID()}`, exchange_amount: '1000' });
  if (issued.common.res_code !== '00') {
    assert.ok(run.model.get(store.settlementAddress)! < unit, `a reward is refused only when the store cannot fund it: ${JSON.stringify(issued.common)}`);
    return;
  }
  const claims = await Promise.all(Array.from({ length: s.claims }, async () => {
    const app = openSession(p.client, 'DoPayment', who.token);
    app.send({ state: 'START_REWARD', reward_id: issued.content.reward_id, token_amount: issued.content.token_amount, token_symbol: 'VIXP', user_address: who.address });
    return (await app.next(30_000)).common.res_code as string;
  }));
  const covered = run.model.get(store.settlementAddress)! >= unit;
  if (!covered) {
    assert.ok(!claims.includes('00'), `a claim the store cannot fund is refused: ${claims}`);
    return;
  }
  assert.equal(claims.filter((c) => c === '00').length, 1, `a reward claimed ${s.claims}× at once is paid once: ${claims}`);
  move(run, store.settlementAddress, who.address, unit);
  if (s.cancelAfter && run.model.get(who.address)! >= unit) {
    const canceled = await unary(p.client, 'CancelReward', store.apiKey, { reward_id: issued.content.reward_id });
    assert.equal(canceled.common.res_code, '00', JSON.stringify(canceled.common));
    move(run, who.address, store.settlementAddress, unit);
  }
}

const stepsRun = new Map<string, number>();

async function runSteps(steps: Step[]) {
  const run = await newRun();
  for (const s of steps) {
    stepsRun.set(s.kind, (stepsRun.get(s.kind) ?? 0) + 1);
    if (s.kind === 'transfer') await transfer(run, s);
    else if (s.kind === 'stalledTransfer') await stalledTransfer(run, s);
    else if (s.kind === 'restPay') await restPay(run, s);
    else if (s.kind === 'payment') await payment(run, s);
    else if (s.kind === 'cancel') await cancel(run, s);
    else await reward(run, s);
    for (const [address, expected] of run.model) {
      assert.ok(expected >= 0n, `the model never goes negative (${address})`);
      assert.equal(await balance(address), expected, `after ${s.kind}: ${address} holds what the accepted operations say`);
    }
  }
  await assertInvariants({ operator: p.t.platform });
}

test('property: random payments, cancellations, rewards, claims, transfers and REST payments with duplicates, hang-ups and a stalled node', async () => {
  const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
  const numRuns = Number(process.env.FC_RUNS ?? 20);
  console.log(`property run: seed ${seed}, ${numRuns} runs (replay: FC_SEED=${seed} node --test --test-force-exit test/faults/property.test.ts)`);
  const details = await fc.check(fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 10 }), runSteps), {
    seed, numRuns, endOnFailure: true,
    ...(process.env.FC_PATH && { path: process.env.FC_PATH }),
  });
  if (details.failed) {
    const replay = `FC_SEED=${details.seed} FC_PATH=${details.counterexamplePath ?? ''} node --test --test-force-exit test/faults/property.test.ts`;
    throw new Error(`${fc.defaultReportMessage(details)}\n\nreplay it with:\n  ${replay}`, { cause: details.errorInstance });
  }
  console.log(`property run: steps run ${JSON.stringify(Object.fromEntries(stepsRun))}`);
});
