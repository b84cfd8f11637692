import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { getAddress } from 'viem';
import { rpcOver } from '../support/server-process.ts';
import { openSession, unary } from '../support/payments.ts';
import { createPayService } from '../../src/pay/idempotent-pay.ts';
import { createSettlementTokenRepository } from '../../src/store/settlement-token-repository.ts';
import { createIdempotencyRepository } from '../../src/store/idempotency-repository.ts';
import { createTransferStatusRepository } from '../../src/store/transfer-status-repository.ts';
import { createPaymentRepository } from '../../src/store/payment-repository.ts';
import { createMerchantRepository } from '../../src/store/merchant-repository.ts';
import { settleStalePayment } from '../../src/payments/settle-stale-payment.ts';
import type { FailpointName } from '../../src/shared/failpoints.ts';
import {
  assertInvariants, balanceRaw, fundedAccount, grpcClient, maybeLost, password, rigUser, signedTransfer, startFaultRig, units, type FaultRig,
} from './rig.ts';

// kill -9 at each step boundary of each operation (a failpoint armed `crash` by FAILPOINTS), then a
// restart without it, then: the invariants of rig.ts (journal finished, no usable authorization,
// records agree with the chain's events, conservation), and the operation itself moved its amount
// exactly once or not at all, and its retry never moves it again. VIXPAY_FAULTS_CHAIN_KILL=1 (the
// `chain node too` cases below run always) also kills the ethereum anvil at each.
let rig: FaultRig;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };

before(async () => {
  rig = await startFaultRig();
  store = await rig.operator.payments.addStore({ tid: `T-${randomUUID().slice(0, 8)}`, name: 'Fault Cafe' });
  await rig.operator.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await rig?.stop(); });

/** Kills the ethereum anvil (the server is already dead): the restart brings it back from its last state dump. */
function killChainNode(): void {
  const pid = Number(readFileSync(path.join(rig.dataDir, 'chains', 'ethereum', 'anvil.pid'), 'utf8'));
  process.kill(pid, 'SIGKILL');
}

/**
 * Arms `name`, runs `operation` (whose reply the crash cuts), waits for the crash, optionally kills
 * the chain node too, restarts clean and checks the invariants.
 */
/** `whileDown`: run after the crash, before the restart (whose sweeps may finish what the crash left). */
async function crashAt(name: FailpointName, operation: () => Promise<unknown>, options: { chainToo?: boolean; whileDown?: () => Promise<void> } = {}) {
  await rig.start([name]);
  const reply = maybeLost(operation());
  await rig.crashedAt(name);
  const answered = await reply;
  assert.ok(typeof answered === 'object' && answered !== null && 'lost' in answered, `the crash cut the reply: ${JSON.stringify(answered)}`);
  if (options.chainToo) killChainNode();
  await options.whileDown?.();
  await rig.start();
  await assertInvariants(rig);
}

describe('token API transfer', () => {
  const cases: Array<[FailpointName, boolean, boolean]> = [
    // failpoint, moved at the crash, chain node killed too
    ['transfer.before-authorize', false, false],
    ['transfer.after-settle', true, false],
    ['transfer.after-settle', true, true],
  ];
  for (const [name, moved, chainToo] of cases) {
    test(`kill -9 at ${name}${chainToo ? ' and of the chain node' : ''}: moved ${moved ? 'once' : 'nothing'}; the replay is refused or moves it once`, async () => {
      const sender = await fundedAccount(rig, 10);
      const recipient = await fundedAccount(rig, 0);
      const request = await signedTransfer(rig, sender, recipient.address, '4');
      await crashAt(name, () => rpcOver(rig.server.baseUrl, '/token', 'transfer', request), { chainToo });
      assert.equal(await balanceRaw(rig, recipient.address), moved ? units(4) : 0n, `the transfer ${moved ? 'happened once' : 'did not happen'}`);
      const replay = await rpcOver(rig.server.baseUrl, '/token', 'transfer', request);
      // A transfer that happened spent its temp key: the replay is refused as such (440), nothing moves.
      assert.equal(replay.resultCode, moved ? '440' : '200', JSON.stringify(replay));
      assert.equal(await balanceRaw(rig, recipient.address), units(4), 'after the replay: moved exactly once');
      assert.equal(await balanceRaw(rig, sender.address), units(6));
      await assertInvariants(rig);
    });
  }
});

describe('REST pay with an Idempotency-Key', () => {
  const post = (token: string, body: object, key: string) => fetch(`${rig.server.baseUrl}/v1/ict/pay`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
  }).then(async (r) => ({ status: r.status, body: await r.json() as any }));

  /** The same request retried once the key's first run is stale (5 min), on the server's own code with a clock moved on. */
  const retryWhenStale = (user: { userId: string; address: string }, key: string) => {
    const { operator } = rig;
    const service = createPayService({
      users: operator.identity.users, rateLimiter: operator.identity.rateLimiter, wallet: operator.wallet, network: 'ethereum',
      settlementTokens: createSettlementTokenRepository(operator.store.db), receiver: getAddress(operator.relayer.address), keys: createIdempotencyRepository(operator.store.db),
      transfers: createTransferStatusRepository(operator.store.db), clock: () => Date.now() + 10 * 60_000,
    });
    return service.pay({ userId: user.userId, tokenName: 'VIXP', amount: '3', myAddress: user.address, password, clientIp: '127.0.0.1' }, key);
  };

  const cases: Array<[FailpointName, boolean]> = [
    ['rest-pay.after-key-claimed', false],
    ['rest-pay.after-transfer', true],
    ['rest-pay.before-answer', true],
  ];
  for (const [name, moved] of cases) {
    test(`kill -9 at ${name}: moved ${moved ? 'once' : 'nothing'}; retries with the key never pay twice and end paid once`, async () => {
      const user = await rigUser(rig, 20);
      const key = randomUUID();
      const body = { tokenName: 'VIXP', amount: '3', myAddress: user.address, password };
      await crashAt(name, () => post(user.token, body, key));
      assert.equal(await balanceRaw(rig, user.address), moved ? units(17) : units(20));
      const retry = await post(user.token, body, key);
      if (name === 'rest-pay.before-answer') {
        assert.equal(retry.status, 200, JSON.stringify(retry.body));
        assert.match(retry.body.resultData.transactionId, /^0x[0-9a-f]{64}$/);
      } else {
        assert.equal(retry.status, 409, `the key's first request, cut off, is still in flight: ${JSON.stringify(retry.body)}`);
      }
      assert.equal(await balanceRaw(rig, user.address), moved ? units(17) : units(20), 'the retry paid nothing more');
      const late = await retryWhenStale(user, key);
      assert.equal(late.kind, 'outcome', JSON.stringify(late));
      assert.ok(late.kind === 'outcome' && 'ok' in late.outcome && late.outcome.ok.status === 'confirmed', JSON.stringify(late));
      assert.equal(await balanceRaw(rig, user.address), units(17), 'paid exactly once');
      const again = await retryWhenStale(user, key);
      assert.ok(again.kind === 'outcome' && again.replayed, 'a further retry answers the same payment');
      assert.equal(await balanceRaw(rig, user.address), units(17));
      await assertInvariants(rig);
    });
  }
});

/** The session's next message, or a failure once its stream ended (a dead server ends it at once). */
function nextOrEnd(session: ReturnType<typeof openSession>, timeoutMs: number): Promise<any> {
  return Promise.race([
    session.next(timeoutMs),
    session.closed.then((status) => { throw new Error(`the stream ended ${status.code} ${status.details}`); }),
  ]);
}

/** A whole gRPC payment of 5 VIXP (5000 KRW at 1000), the app's TRANSFER sent last; answers the POS's final message. */
async function payment(user: Awaited<ReturnType<typeof rigUser>>, tranNo: string) {
  const client = grpcClient(rig);
  try {
    const uuid = randomUUID();
    const app = openSession(client, 'DoPayment', user.token);
    const pos = openSession(client, 'StartPayment', store.apiKey);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    pos.send({
      state: 'START_PAY', tid: store.tid, tran_no: tranNo, exchange_amount: '5000', user_uuid: uuid, token_symbol: 'VIXP',
      user_address: user.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
    });
    const request = await nextOrEnd(app, 30_000);
    assert.equal(request.content.state, 'REQUEST_TRANSFER', JSON.stringify(request));
    await nextOrEnd(pos, 30_000);
    const transfer = await signedTransfer(rig, user, request.content.settlement_address, request.content.token_amount);
    app.send({ state: 'TRANSFER', tran_no: tranNo, transfer_key: transfer.tempKey, hash_key: transfer.hashKey, transfer_signature: transfer.signature });
    const end = await nextOrEnd(pos, 60_000);
    const closed = await pos.closed;
    if (closed.code !== 0) throw new Error(`the POS stream ended ${closed.code} ${closed.details}`);
    return end;
  } finally {
    client.close();
  }
}

/** A POS retry of `tranNo` (its app gone): its first answer. */
async function posRetry(user: { address: string }, tranNo: string) {
  const client = grpcClient(rig);
  try {
    const pos = openSession(client, 'StartPayment', store.apiKey);
    pos.send({
      state: 'START_PAY', tid: store.tid, tran_no: tranNo, exchange_amount: '5000', user_uuid: randomUUID(), token_symbol: 'VIXP',
      user_address: user.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
    });
    return await pos.next(30_000);
  } finally {
    client.close();
  }
}

describe('payment', () => {
  const cases: Array<[FailpointName, boolean, boolean]> = [
    ['payment.after-claim', false, false],
    ['payment.before-transfer', false, false],
    ['payment.after-transfer', true, false],
    ['payment.after-transfer', true, true],
    ['payment.after-approve', true, false],
  ];
  for (const [name, moved, chainToo] of cases) {
    test(`kill -9 at ${name}${chainToo ? ' and of the chain node' : ''}: paid ${moved ? 'once' : 'nothing'}; a POS retry never pays again; the record settles as the chain says`, async () => {
      const user = await rigUser(rig, 100);
      const tranNo = `F${randomUUID().slice(0, 8)}`;
      const storeBefore = await balanceRaw(rig, store.settlementAddress);
      await crashAt(name, () => payment(user, tranNo), { chainToo });
      assert.equal(await balanceRaw(rig, user.address), moved ? units(95) : units(100), `the payment ${moved ? 'moved once' : 'moved nothing'}`);
      const retry = await posRetry(user, tranNo);
      if (name === 'payment.after-approve') {
        assert.equal(retry.content.state, 'END_PAY');
        assert.equal(retry.common.res_code, '00', 'the retry answers the original approval');
      } else {
        assert.notEqual(retry.common.res_code, '00', `cut off before its approval, the tran_no answers in progress: ${JSON.stringify(retry.common)}`);
      }
      assert.equal(await balanceRaw(rig, user.address), moved ? units(95) : units(100), 'the retry moved nothing');
      assert.equal(await balanceRaw(rig, store.settlementAddress) - storeBefore, moved ? units(5) : 0n);

      // After the stale window, the next retry settles the record from the chain (settle-stale-payment.ts).
      const { operator } = rig;
      const payments = createPaymentRepository(operator.store.db);
      const record = await payments.findByTranNo(store.tid, tranNo);
      assert.ok(record, 'the payment is recorded');
      if (record.status === 'pending') {
        const settled = await settleStalePayment({
          payments, merchants: createMerchantRepository(operator.store.db), wallet: operator.wallet, network: 'ethereum',
          clock: operator.clock, timeZone: operator.config.timeZone, logger: operator.logger,
        }, record);
        assert.equal(settled, moved ? 'approved' : 'failed');
      }
      const final = await payments.findByTranNo(store.tid, tranNo);
      assert.equal(final?.status, moved ? 'approved' : 'failed', 'the record says what the chain did');
      await assertInvariants(rig);
    });
  }
});

describe('payment cancellation', () => {
  /** A user's approved payment of 5 (of 100), and its CancelPayment under one new tran_no. */
  const paidWithCancel = async () => {
    const user = await rigUser(rig, 100);
    const paid = await payment(user, `F${randomUUID().slice(0, 8)}`);
    assert.equal(paid.common.res_code, '00', JSON.stringify(paid.common));
    const cancelTranNo = `C${randomUUID().slice(0, 8)}`;
    const cancel = () => {
      const client = grpcClient(rig);
      return unary(client, 'CancelPayment', store.apiKey, { tid: store.tid, transfer_transaction_id: paid.content.transfer_transaction_id, tran_no: cancelTranNo })
        .finally(() => client.close());
    };
    return { user, paid, cancel };
  };
  const cases: Array<[FailpointName, boolean]> = [
    ['cancel.after-reserve', false],
    ['cancel.before-transfer', false],
    ['cancel.after-transfer', true],
  ];
  for (const [name, refunded] of cases) {
    test(`kill -9 at ${name}: refunded ${refunded ? 'once' : 'nothing'}; retries of its tran_no answer 13 until it is stale, then its outcome: refunded exactly once`, async () => {
      const { user, cancel } = await paidWithCancel();
      await crashAt(name, cancel);
      assert.equal(await balanceRaw(rig, user.address), refunded ? units(100) : units(95));
      const settled = await retriedUntilSettled(cancel, async () => {
        assert.equal(await balanceRaw(rig, user.address), refunded ? units(100) : units(95), 'no retry in progress refunded anything more');
      });
      assert.equal(settled.common.res_code, '00', `the interrupted cancellation ends: ${JSON.stringify(settled.common)}`);
      assert.equal(settled.content.token_amount, '5');
      assert.match(settled.content.transfer_transaction_id, /^0x[0-9a-f]{64}$/);
      assert.equal(await balanceRaw(rig, user.address), units(100), 'refunded exactly once');
      const again = await cancel();
      assert.equal(again.common.res_code, '00');
      assert.deepEqual(again.content, settled.content, 'its tran_no answers the same cancellation again');
      assert.equal(await balanceRaw(rig, user.address), units(100), 'the last retry refunded nothing more');
      await assertInvariants(rig);
    });
  }

  test('kill -9 at cancel.after-transfer and nobody retries: the sweep completes the cancellation, and its tran_no answers it later', async () => {
    const { user, paid, cancel } = await paidWithCancel();
    // The operator's store as it is at each read (a restart on another chain URL composes it again).
    const cancellation = () => rig.operator.store.db.selectFrom('payment_cancellations as c').innerJoin('payments as p', 'p.id', 'c.payment_id')
      .select(['c.status', 'c.transfer_transaction_id', 'c.cancel_no']).where('p.transfer_transaction_id', '=', paid.content.transfer_transaction_id)
      .where('p.user_address', '=', user.address).executeTakeFirstOrThrow();
    // Read before the restart: on a busy machine the restarted server's sweep may finish it before
    // the restart is done waiting for readiness.
    await crashAt('cancel.after-transfer', cancel, { whileDown: async () => assert.equal((await cancellation()).status, 'pending', 'the crash left it pending') });
    const deadline = Date.now() + 30_000;
    while ((await cancellation()).status === 'pending') {
      assert.ok(Date.now() < deadline, 'the sweep settled the cancellation within 30 s');
      await sleep(500);
    }
    const done = await cancellation();
    assert.equal(done.status, 'done');
    assert.equal(await balanceRaw(rig, user.address), units(100), 'refunded exactly once');
    const later = await cancel();
    assert.equal(later.common.res_code, '00', JSON.stringify(later.common));
    assert.deepEqual([later.content.transfer_transaction_id, later.content.approval_no], [done.transfer_transaction_id, done.cancel_no], 'the tran_no answers the swept cancellation');
    await assertInvariants(rig);
  });
});

describe('reward claim and cancellation', () => {
  const issue = async () => {
    const client = grpcClient(rig);
    try {
      const issued = await unary(client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `r-${randomUUID()}`, exchange_amount: '2000' });
      assert.equal(issued.common.res_code, '00', JSON.stringify(issued.common));
      return issued.content as { reward_id: string; token_amount: string };
    } finally {
      client.close();
    }
  };
  const claim = (user: Awaited<ReturnType<typeof rigUser>>, reward: { reward_id: string; token_amount: string }) => {
    const client = grpcClient(rig);
    const app = openSession(client, 'DoPayment', user.token);
    app.send({ state: 'START_REWARD', reward_id: reward.reward_id, token_amount: reward.token_amount, token_symbol: 'VIXP', user_address: user.address });
    return nextOrEnd(app, 60_000).finally(() => client.close());
  };
  const rewardStatus = async (rewardId: string) =>
    (await rig.operator.store.db.selectFrom('rewards').select('status').where('id', '=', rewardId).executeTakeFirstOrThrow()).status;
  const cancelReward = (rewardId: string, tranNo: string) => {
    const client = grpcClient(rig);
    return unary(client, 'CancelReward', store.apiKey, { reward_id: rewardId, tran_no: tranNo }).finally(() => client.close());
  };

  const claims: Array<[FailpointName, boolean]> = [['reward-claim.after-claiming', false], ['reward-claim.after-transfer', true]];
  for (const [name, paid] of claims) {
    test(`kill -9 at ${name}: paid ${paid ? 'once' : 'nothing'}; claims again are 05 until it is stale, then it is claimed exactly once`, async () => {
      await rig.operator.wallet.mint('ethereum', { to: store.settlementAddress, amount: '10' });
      const user = await rigUser(rig, 0);
      const reward = await issue();
      await crashAt(name, () => claim(user, reward));
      assert.equal(await balanceRaw(rig, user.address), paid ? units(2) : 0n);
      // Until the interrupted claim is settled a claim is 05; then an unpaid reward is claimable again.
      const settled = await retriedUntilSettled(() => claim(user, reward), async (answer) => {
        assert.equal(answer.common.res_code, '05', `a claim while the cut-off one is unsettled: ${JSON.stringify(answer.common)}`);
        assert.equal(await balanceRaw(rig, user.address), paid ? units(2) : 0n, 'nothing more was paid meanwhile');
      }, async (answer) => answer.common.res_code !== '05' || (await rewardStatus(reward.reward_id)) === 'claimed');
      if (!paid) assert.equal(settled.common.res_code, '00', `the unpaid reward is claimed once it is settled: ${JSON.stringify(settled.common)}`);
      assert.equal(await balanceRaw(rig, user.address), units(2), 'paid exactly once');
      assert.equal(await rewardStatus(reward.reward_id), 'claimed', 'the record says claimed');
      assert.equal((await claim(user, reward)).common.res_code, '05', 'a claimed reward is 05');
      assert.equal(await balanceRaw(rig, user.address), units(2), 'the last claim paid nothing');
      await assertInvariants(rig);
    });
  }

  const cancels: Array<[FailpointName, boolean]> = [['reward-cancel.after-canceling', false], ['reward-cancel.after-transfer', true]];
  for (const [name, movedBack] of cancels) {
    test(`kill -9 at ${name}: moved back ${movedBack ? 'once' : 'nothing'}; retries of its tran_no answer 13 until it is stale, then its outcome: moved back exactly once`, async () => {
      await rig.operator.wallet.mint('ethereum', { to: store.settlementAddress, amount: '10' });
      const user = await rigUser(rig, 0);
      const reward = await issue();
      assert.equal((await claim(user, reward)).common.res_code, '00');
      const tranNo = `R${randomUUID().slice(0, 8)}`;
      await crashAt(name, () => cancelReward(reward.reward_id, tranNo));
      assert.equal(await balanceRaw(rig, user.address), movedBack ? 0n : units(2));
      const settled = await retriedUntilSettled(() => cancelReward(reward.reward_id, tranNo), async () => {
        assert.equal(await balanceRaw(rig, user.address), movedBack ? 0n : units(2), 'no retry in progress moved anything');
      });
      assert.equal(settled.common.res_code, '00', `the interrupted cancellation ends: ${JSON.stringify(settled.common)}`);
      assert.match(settled.content.transfer_transaction_id, /^0x[0-9a-f]{64}$/);
      assert.equal(await balanceRaw(rig, user.address), 0n, 'moved back exactly once');
      const again = await cancelReward(reward.reward_id, tranNo);
      assert.deepEqual([again.common.res_code, again.content], ['00', settled.content], 'its tran_no answers the same cancellation again');
      assert.equal(await balanceRaw(rig, user.address), 0n);
      await assertInvariants(rig);
    });
  }
});

/**
 * Retries `call` (an interrupted operation's retry) until its answer is not 13 (in progress) or, with
 * `settledWhen`, until that says so; `meanwhile` checks each unsettled answer. The rig's operations
 * count as interrupted after STALE_OPERATION_SECONDS (5 s) and signed transfers expire after 10 s.
 */
async function retriedUntilSettled(call: () => Promise<any>, meanwhile: (answer: any) => Promise<void>,
  settledWhen: (answer: any) => boolean | Promise<boolean> = (answer) => answer.common.res_code !== '13'): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await call();
    if (await settledWhen(answer)) return answer;
    await meanwhile(answer);
    assert.ok(Date.now() < deadline, `still unsettled after 60 s: ${JSON.stringify(answer.common)}`);
    await sleep(1_000);
  }
}

/**
 * kill -9 of the chain node (the payment network's anvil) at a failpoint armed `crash-chain`, the
 * server running on: the operation answers what it knows (refused while the node is down, or done
 * when it was done before), then the server is restarted (kill -9, so it restarts the node from its
 * last state dump, which may have lost the latest blocks) and the invariants hold: what was journaled
 * is on chain exactly once, the rest never happened, and a retry never moves twice.
 */
async function chainKilledAt<T>(name: FailpointName, operation: () => Promise<T>): Promise<T | { lost: string }> {
  await rig.start([name], 'crash-chain');
  const reply = maybeLost(operation());
  await rig.chainKilledAt(name);
  const answered = await reply;
  await rig.start();
  await assertInvariants(rig);
  return answered;
}

const resultCodeOf = (answer: unknown) => (answer as { resultCode?: string }).resultCode;

describe('chain node killed at a failpoint, the server running', () => {
  test('kill -9 of the chain node at transfer.before-authorize: refused while it is down; the same request after the restart moves it once', async () => {
    const sender = await fundedAccount(rig, 10);
    const recipient = await fundedAccount(rig, 0);
    const request = await signedTransfer(rig, sender, recipient.address, '4');
    const answer = await chainKilledAt('transfer.before-authorize', () => rpcOver(rig.server.baseUrl, '/token', 'transfer', request));
    assert.notEqual(resultCodeOf(answer), '200', `refused with the node down: ${JSON.stringify(answer)}`);
    assert.equal(await balanceRaw(rig, recipient.address), 0n);
    assert.equal((await rpcOver(rig.server.baseUrl, '/token', 'transfer', request)).resultCode, '200', 'nothing signed was used up: the request goes through now');
    assert.equal(await balanceRaw(rig, recipient.address), units(4));
    await assertInvariants(rig);
  });

  test('kill -9 of the chain node at transfer.after-settle: answered 200, and on chain exactly once after the restart even if the node lost its block', async () => {
    const sender = await fundedAccount(rig, 10);
    const recipient = await fundedAccount(rig, 0);
    const request = await signedTransfer(rig, sender, recipient.address, '4');
    const answer = await chainKilledAt('transfer.after-settle', () => rpcOver(rig.server.baseUrl, '/token', 'transfer', request));
    assert.equal(resultCodeOf(answer), '200', JSON.stringify(answer));
    assert.equal(await balanceRaw(rig, recipient.address), units(4), 'the transfer answered 200 is on chain');
    assert.equal((await rpcOver(rig.server.baseUrl, '/token', 'transfer', request)).resultCode, '440', 'its replay is refused');
    assert.equal(await balanceRaw(rig, sender.address), units(6));
  });

  test('kill -9 of the chain node at rest-pay.after-transfer: answered paid; on chain once; the key answers the same payment', async () => {
    const user = await rigUser(rig, 20);
    const key = randomUUID();
    const body = JSON.stringify({ tokenName: 'VIXP', amount: '3', myAddress: user.address, password });
    const post = () => fetch(`${rig.server.baseUrl}/v1/ict/pay`, {
      method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}`, 'idempotency-key': key },
    }).then(async (r) => ({ status: r.status, body: await r.json() as any }));
    const answer = await chainKilledAt('rest-pay.after-transfer', post);
    assert.ok(!('lost' in answer) && answer.status === 200, JSON.stringify(answer));
    assert.equal(await balanceRaw(rig, user.address), units(17));
    const retry = await post();
    assert.equal(retry.status, 200);
    assert.equal(retry.body.resultData.transactionId, answer.body.resultData.transactionId, 'the same payment');
    assert.equal(await balanceRaw(rig, user.address), units(17));
  });

  for (const [name, paid] of [['payment.before-transfer', false], ['payment.after-transfer', true]] as const) {
    test(`kill -9 of the chain node at ${name}: ${paid ? 'approved and on chain once' : 'failed, nothing moved'}; the record says so`, async () => {
      const user = await rigUser(rig, 100);
      const tranNo = `K${randomUUID().slice(0, 8)}`;
      const answer = await chainKilledAt(name, () => payment(user, tranNo));
      assert.ok(!('lost' in answer), JSON.stringify(answer));
      assert.equal(answer.common.res_code === '00', paid, `the POS heard ${JSON.stringify(answer.common)}`);
      assert.equal(await balanceRaw(rig, user.address), paid ? units(95) : units(100));
      const record = await createPaymentRepository(rig.operator.store.db).findByTranNo(store.tid, tranNo);
      assert.equal(record?.status, paid ? 'approved' : 'failed');
    });
  }

  test('kill -9 of the chain node at cancel.before-transfer: refused, nothing refunded; its tran_no then refunds once', async () => {
    const user = await rigUser(rig, 100);
    const paid = await payment(user, `K${randomUUID().slice(0, 8)}`);
    assert.equal(paid.common.res_code, '00');
    const tranNo = `KC${randomUUID().slice(0, 8)}`;
    const cancel = () => {
      const client = grpcClient(rig);
      return unary(client, 'CancelPayment', store.apiKey, { tid: store.tid, transfer_transaction_id: paid.content.transfer_transaction_id, tran_no: tranNo })
        .finally(() => client.close());
    };
    const answer = await chainKilledAt('cancel.before-transfer', cancel);
    assert.ok(!('lost' in answer) && answer.common.res_code !== '00', JSON.stringify(answer));
    assert.equal(await balanceRaw(rig, user.address), units(95), 'nothing refunded');
    assert.equal((await cancel()).common.res_code, '00', 'the refused cancellation freed its tran_no');
    assert.equal(await balanceRaw(rig, user.address), units(100), 'refunded once');
    assert.equal((await cancel()).common.res_code, '00', 'a retry answers the same cancellation');
    assert.equal(await balanceRaw(rig, user.address), units(100));
    await assertInvariants(rig);
  });
});

describe('settlement batch', () => {
  // failpoint, action, what it leaves: the transfer happens once after the restart (journaled), never
  // (not journaled), or as its authorization ended (the chain node down past its 10 s validity: the
  // re-sent batch skips it, expired, and nothing moves).
  const cases: Array<[FailpointName, 'crash' | 'crash-chain', boolean | 'as-authorized']> = [
    ['relay.before-journal', 'crash', false],
    ['relay.after-journal', 'crash', true],
    ['relay.after-broadcast', 'crash', true],
    ['relay.after-journal', 'crash-chain', 'as-authorized'],
    ['relay.after-broadcast', 'crash-chain', 'as-authorized'],
  ];
  const outcome = { true: 'the journaled batch is finished after the restart, once', false: 'never journaled, never sent: nothing moves', 'as-authorized': 'moved once if its authorization was used, nothing if it expired' };
  for (const [name, action, expected] of cases) {
    const what = action === 'crash' ? 'kill -9 of the server' : 'kill -9 of the chain node';
    test(`${what} at ${name}: ${outcome[String(expected) as keyof typeof outcome]}; the replay is 440`, async () => {
      const sender = await fundedAccount(rig, 10);
      const recipient = await fundedAccount(rig, 0);
      const request = await signedTransfer(rig, sender, recipient.address, '4');
      if (action === 'crash') {
        await crashAt(name, () => rpcOver(rig.server.baseUrl, '/token', 'transfer', request));
      } else {
        const answer = await chainKilledAt(name, () => rpcOver(rig.server.baseUrl, '/token', 'transfer', request));
        assert.notEqual(resultCodeOf(answer), '200', `not answered done without a receipt: ${JSON.stringify(answer)}`);
      }
      const [authorization] = await rig.operator.store.db.selectFrom('authorizations').select('status').where('from_address', '=', sender.address).execute();
      const moved = expected === 'as-authorized' ? authorization?.status === 'used' : expected;
      if (expected === 'as-authorized') assert.ok(authorization && ['used', 'expired', 'canceled'].includes(authorization.status), JSON.stringify(authorization));
      else assert.equal(authorization?.status, moved ? 'used' : 'expired');
      assert.equal(await balanceRaw(rig, recipient.address), moved ? units(4) : 0n, moved ? 'finished by the restart, once' : 'nothing moved');
      const replay = await rpcOver(rig.server.baseUrl, '/token', 'transfer', request);
      assert.equal(replay.resultCode, '440', `its temp key was used up with the reservation: ${JSON.stringify(replay)}`);
      assert.equal(await balanceRaw(rig, recipient.address), moved ? units(4) : 0n, 'the replay moved nothing');
      assert.equal(await balanceRaw(rig, sender.address), moved ? units(6) : units(10));
    });
  }
});
