import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  newUser, openSession, startPay, startPaymentTest, transferFor, unary, untilAppWaits, type PaymentTest, type TestUser,
} from './support/payments.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './support/webhook-receiver.ts';
import { waitFor } from './support/wait-for.ts';
import { assertSameShape } from './support/doc-examples.ts';
import { createWebhookRepository } from '../src/store/webhook-repository.ts';
import { createMerchantRepository } from '../src/store/merchant-repository.ts';
import { addWebhookEndpoint, type WebhookEndpointDeps } from '../src/webhooks/webhook-endpoints.ts';
import { verifySignature } from '../src/webhooks/signature.ts';

// Store webhooks on a real platform: every event type produced by the real payment and reward
// flows over gRPC, received by a real HTTP server, each signed, each carrying what the gRPC message
// carried; and a back office that was down gets every event once it is back.
let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
let receiver: WebhookReceiver;
let secret: string;
let endpoints: WebhookEndpointDeps;

before(async () => {
  // Short retry waits, so that a receiver coming back is retried within the test.
  p = await startPaymentTest({
    PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4',
    WEBHOOK_POLL_SECONDS: '0.2', WEBHOOK_RETRY_INITIAL_SECONDS: '0.5', WEBHOOK_RETRY_MAX_SECONDS: '1',
  });
  const { platform } = p.t;
  store = await platform.payments.addStore({ tid: 'T-1001', name: 'Corner Cafe' });
  await platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '1000' });
  await platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
  endpoints = {
    webhooks: createWebhookRepository(platform.store.db, platform.store.dialect), merchants: createMerchantRepository(platform.store.db),
    vault: platform.vault, clock: platform.clock,
  };
  receiver = await startWebhookReceiver();
  ({ secret } = await addWebhookEndpoint(endpoints, { tid: store.tid, url: receiver.url, events: [], allowPrivate: true }));
});
after(async () => {
  await receiver?.close();
  await p?.stop();
});

const tranNo = () => `TR${randomUUID().slice(0, 8)}`;

async function pay(user: TestUser, amount: string) {
  const uuid = randomUUID();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  await untilAppWaits(p, uuid);
  pos.send(startPay(p, store.tid, tranNo(), user, uuid, amount));
  const request = await app.next();
  if (request.content.state !== 'REQUEST_TRANSFER') return { end: await pos.next().catch(() => request) };
  await pos.next();
  app.send(await transferFor(p, user, request));
  await app.next();
  return { end: await pos.next() };
}

const issueReward = async () => (await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `receipt-${randomUUID()}`, exchange_amount: '3000' }));

async function claimReward(user: TestUser, issued: Record<string, string>) {
  const app = openSession(p.client, 'DoPayment', user.token);
  app.send({ state: 'START_REWARD', reward_id: issued.reward_id, token_amount: issued.token_amount, token_symbol: 'VIXP', user_address: user.address });
  return app.next();
}

/** The event of `type` whose data names `key` = `value`, once received. */
const received = (type: string, key: string, value: string) => waitFor(
  () => receiver.received.find((r) => r.event.type === type && r.event.data[key] === value),
  { timeoutMs: 30_000, message: `the back office receives ${type} with ${key} ${value}` },
);

/** Every field the event shares with the gRPC message has the message's value. */
function assertCarries(delivered: ReceivedWebhook, content: Record<string, string>, resCode: string) {
  // Fields a gRPC answer leaves empty (its tid: the POS knows its store) the event fills in.
  const shared = Object.keys(delivered.event.data).filter((key) => content[key]);
  assert.ok(shared.length >= 6, `the event carries the message's fields (${shared.join(', ')})`);
  for (const key of shared) assert.equal(delivered.event.data[key], content[key], `data.${key}`);
  assert.equal(delivered.event.data.res_code, resCode);
  assert.equal(delivered.event.data.tid, store.tid);
  const t = Number(/^t=(\d+),/.exec(delivered.signature)?.[1]);
  assert.ok(Math.abs(t - Date.now() / 1000) < 300, 'signed now');
  assert.equal(verifySignature(secret, delivered.signature, delivered.body), true, 'a valid Vixpay-Signature');
}

/** The event examples of docs/webhooks.md: `<!-- event: TYPE -->` then a json block. */
function documentedEvents(): Map<string, unknown> {
  const text = readFileSync('docs/webhooks.md', 'utf8');
  return new Map([...text.matchAll(/<!-- event: ([\w.]+) -->\s*```json\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, JSON.parse(m[2]!)]));
}

describe('every event of the real flows reaches the store\'s endpoint, signed', () => {
  const live = new Map<string, ReceivedWebhook>();

  test('payment.approved carries END_PAY\'s fields; payment.failed the POS\'s res_code; payment.canceled CancelPayment\'s answer', async () => {
    const user = await newUser(p, '20');
    const approved = (await pay(user, '15000')).end;
    assert.equal(approved.common.res_code, '00', JSON.stringify(approved.common));
    const approvedEvent = await received('payment.approved', 'tran_no', approved.content.tran_no);
    assertCarries(approvedEvent, approved.content, '00');
    assert.equal(approvedEvent.event.data.approval_no, approved.content.approval_no);
    live.set('payment.approved', approvedEvent);

    const poor = await newUser(p, '1');
    const failed = (await pay(poor, '15000')).end;
    assert.equal(failed.common.res_code, '02', JSON.stringify(failed.common));
    const failedEvent = await received('payment.failed', 'tran_no', failed.content.tran_no);
    assert.equal(failedEvent.event.data.res_code, '02');
    assert.equal(failedEvent.event.data.res_message, failed.common.res_message);
    assert.equal(failedEvent.event.data.failure_code, 'wallet.insufficient_balance');
    assert.equal(verifySignature(secret, failedEvent.signature, failedEvent.body), true);
    live.set('payment.failed', failedEvent);

    const cancel = await unary(p.client, 'CancelPayment', store.apiKey, {
      tid: store.tid, transfer_transaction_id: approved.content.transfer_transaction_id, token_amount: '4', exchange_amount: '6000',
    });
    assert.equal(cancel.common.res_code, '00', JSON.stringify(cancel.common));
    const canceledEvent = await received('payment.canceled', 'approval_no', cancel.content.approval_no);
    assertCarries(canceledEvent, cancel.content, '00');
    assert.equal(canceledEvent.event.data.tran_no, approved.content.tran_no, 'names the payment it cancels');
    assert.equal(canceledEvent.event.data.payment_transfer_transaction_id, approved.content.transfer_transaction_id);
    live.set('payment.canceled', canceledEvent);
  });

  test('reward.issued, reward.claimed and reward.canceled carry IssueReward\'s, END_REWARD\'s and CancelReward\'s fields', async () => {
    const issued = await issueReward();
    assert.equal(issued.common.res_code, '00', JSON.stringify(issued.common));
    const issuedEvent = await received('reward.issued', 'reward_id', issued.content.reward_id);
    assertCarries(issuedEvent, issued.content, '00');
    live.set('reward.issued', issuedEvent);

    const user = await newUser(p);
    const claimed = await claimReward(user, issued.content);
    assert.equal(claimed.common.res_code, '00', JSON.stringify(claimed.common));
    const claimedEvent = await received('reward.claimed', 'reward_id', issued.content.reward_id);
    assertCarries(claimedEvent, claimed.content, '00');
    live.set('reward.claimed', claimedEvent);

    const cancel = await unary(p.client, 'CancelReward', store.apiKey, { reward_id: issued.content.reward_id, token_amount: issued.content.token_amount });
    assert.equal(cancel.common.res_code, '00', JSON.stringify(cancel.common));
    const canceledEvent = await received('reward.canceled', 'reward_id', issued.content.reward_id);
    assertCarries(canceledEvent, cancel.content, '00');
    live.set('reward.canceled', canceledEvent);
  });

  test('each event id is unique, each delivered once, and docs/webhooks.md shows each event as it is sent', () => {
    const ids = receiver.received.map((r) => r.event.id);
    assert.equal(new Set(ids).size, ids.length);
    if (process.env.VIXPAY_WRITE_WEBHOOK_EXAMPLES) {
      writeFileSync(process.env.VIXPAY_WRITE_WEBHOOK_EXAMPLES, JSON.stringify(Object.fromEntries([...live].map(([type, r]) => [type, r.event])), null, 2));
    }
    const documented = documentedEvents();
    assert.deepEqual([...documented.keys()].sort(), [...live.keys()].sort(), 'one example per event type');
    const fixed = new Set(['type', 'tid', 'res_code', 'res_message', 'failure_code', 'token_symbol', 'exchange_currency', 'exchange_rate']);
    for (const [type, delivered] of live) assertSameShape(documented.get(type), delivered.event, fixed);
  });
});

describe('a back office that is down, then back', () => {
  test('gets every event written while it was down, each once, none missing', async () => {
    const { db } = p.t.platform.store;
    await receiver.close();
    const before = receiver.received.length;
    const issued = [];
    for (let i = 0; i < 4; i++) issued.push((await issueReward()).content.reward_id as string);
    const user = await newUser(p, '20');
    const approved = (await pay(user, '3000')).end;
    assert.equal(approved.common.res_code, '00');
    const written = await db.selectFrom('webhook_events').select('id').where('tid', '=', store.tid).execute();
    // The sender tried while it was down: refused attempts, the deliveries still pending. (An attempt
    // is counted when the delivery is claimed, before its request: its refusal is its recorded error.)
    await waitFor(async () => {
      const tried = await db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').where('attempts', '>=', 1)
        .where('last_error', 'is not', null).execute();
      return tried.length === 5;
    }, { timeoutMs: 30_000, message: 'every delivery of the outage was attempted and refused' });
    assert.equal(receiver.received.length, before);

    await receiver.open();
    await waitFor(async () => {
      const left = await db.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'delivered').execute();
      return left.length === 0;
    }, { timeoutMs: 30_000, message: 'every delivery is made once the back office is back' });
    const ids = receiver.received.map((r) => r.event.id);
    assert.deepEqual([...new Set(ids)].sort(), written.map((w) => w.id).sort(), 'every event, no gap');
    assert.equal(ids.length, written.length, 'each once');
    for (const rewardId of issued) assert.ok(receiver.received.some((r) => r.event.data.reward_id === rewardId));
    for (const r of receiver.received.slice(before)) assert.equal(verifySignature(secret, r.signature, r.body), true);

    // What an operator watches: no backlog left, the refused attempts counted as retries.
    const metrics = (await p.t.app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^vixpay_webhook_deliveries\{status="pending"\} 0$/m);
    assert.match(metrics, new RegExp(`^vixpay_webhook_deliveries\\{status="delivered"\\} ${written.length}$`, 'm'));
    assert.match(metrics, /^vixpay_webhook_delivery_attempts_total\{outcome="retry"\} [1-9]\d*$/m);
  });
});
