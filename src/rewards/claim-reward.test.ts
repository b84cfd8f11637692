import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { RewardRepository } from '../store/reward-repository.ts';
import type { SessionEvent } from '../pairing/session-events.ts';
import { issueReward, type IssuedReward } from './issue-reward.ts';
import { claimReward, claimRewardAtPos } from './claim-reward.ts';
import { cancelReward } from './cancel-reward.ts';
import { openRewardParts, randomAddress, usdx, userMade, vixp, lifetimeMs, type RewardParts } from '../../test/support/reward-parts.ts';

// A reward claim as a user and a store see it: paid once from the store's account to the user's,
// reward.claimed, the codes 01-05 for a reward that cannot be claimed, a refused payout leaving it
// claimable, a payout not settled keeping it claiming (never paid twice). A real SQLite store and
// repositories, the in-process pairing desk; the chain is the stand-in of test/support/reward-parts.ts.

/** A refusal as a store reads it: its code, message and the field it names (`answered` when there is none). */
const refusal = async (promise: Promise<unknown>): Promise<{ code: string; message: string; details: string | undefined }> => {
  try { await promise; } catch (error) {
    if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  return { code: 'answered', message: '', details: undefined };
};
const sink = () => {
  const events: SessionEvent[] = [];
  const controller = new AbortController();
  return { events, send: (event: SessionEvent) => { events.push(event); }, signal: controller.signal };
};

describe('claiming a reward', () => {
  let parts: RewardParts;
  let shop: StoreRecord;
  let n = 0;
  before(async () => { parts = await openRewardParts(); shop = await parts.newStore('1000'); });
  after(async () => { await parts.dispose(); });
  const issue = (exchangeAmount = '2500', store = shop) => issueReward(parts.deps, store, { tid: store.tid, rewardReason: `r-${++n}`, exchangeAmount });
  const statusOf = async (id: string) => (await parts.deps.rewards.findReward(id))?.status;

  test('from a receipt: the tokens move once from the store to the user, reward.claimed; a second claim is 05', async () => {
    const store = await parts.newStore('10');
    const reward = await issue('2500', store);
    const user = randomAddress();
    parts.now += 5_000;
    const claim = await claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', tokenSymbol: 'VIXP', account: user, userAddress: user.toLowerCase() });
    assert.match(claim.transferTransactionId, /^0x[0-9a-f]{64}$/);
    assert.deepEqual(claim, {
      rewardId: reward.rewardId, contractAddress: vixp, tokenSymbol: 'VIXP', userAddress: user, tokenAmount: '2.5', transferTransactionId: claim.transferTransactionId,
      exchangeDateIndex: '2026112800001', exchangeRate: '1000', exchangeAmount: '2500', exchangeCurrency: 'KRW',
    });
    assert.equal(parts.chain.balanceOf(user), 25n * 10n ** 17n);
    assert.equal(parts.chain.balanceOf(store.settlementAddress), 75n * 10n ** 17n);
    const [call] = parts.chain.calls.slice(-1);
    assert.deepEqual({ ...call, reference: '' }, { fromAddress: store.settlementAddress, toAddress: user, amount: '2.5', contractAddress: vixp, reference: '' });
    assert.equal(call!.reference, `reward:${reward.rewardId}:${parts.now}`, 'the attempt named by the time it began');
    const stored = await parts.deps.rewards.findReward(reward.rewardId);
    assert.deepEqual({ status: stored?.status, userAddress: stored?.userAddress, claimTransactionId: stored?.claimTransactionId, claimedAt: stored?.claimedAt, updatedAt: stored?.updatedAt },
      { status: 'claimed', userAddress: user, claimTransactionId: claim.transferTransactionId, claimedAt: parts.now, updatedAt: parts.now });
    const events = await parts.eventsOf(store.tid);
    assert.deepEqual(events.map((e) => e.type), ['reward.issued', 'reward.claimed']);
    assert.deepEqual(events[1]!.data, {
      tid: store.tid, reward_id: reward.rewardId, user_address: user, contract_address: vixp, token_symbol: 'VIXP', token_amount: '2.5',
      transfer_transaction_id: claim.transferTransactionId, exchange_date_index: '2026112800001', exchange_rate: '1000', exchange_amount: '2500',
      exchange_currency: 'KRW', res_code: '00', res_message: 'Success',
    });
    const calls = parts.chain.calls.length;
    assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user })),
      { code: 'reward.already_rewarded', message: 'the reward was already claimed', details: undefined });
    assert.equal(parts.chain.calls.length, calls, 'never paid twice');
  });

  test('a reward that cannot be claimed: 01 unknown, of another store or without id, 02 expired (from its millisecond), 03 canceled', async () => {
    const user = randomAddress();
    const notIssued = { code: 'reward.not_issued', message: 'no such reward', details: undefined };
    assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: 'NOPE', tokenAmount: '1', account: user })), notIssued);
    assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: '', tokenAmount: '1', account: user })),
      { code: 'reward.not_issued', message: 'reward_id is required', details: undefined });
    const reward = await issue();
    assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user, tid: 'T-other' })), notIssued);
    const expiring = await issue();
    const issuedAt = parts.now;
    parts.now = issuedAt + lifetimeMs;
    assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: expiring.rewardId, tokenAmount: '2.5', account: user })),
      { code: 'reward.expired', message: 'the reward has expired', details: undefined });
    parts.now = issuedAt + lifetimeMs - 1;
    assert.equal((await claimReward(parts.deps, { rewardId: expiring.rewardId, tokenAmount: '2.5', account: user, tid: shop.tid })).tokenAmount, '2.5');
    const canceled = await issue();
    await cancelReward(parts.deps, shop, { rewardId: canceled.rewardId });
    assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: canceled.rewardId, tokenAmount: '2.5', account: user })),
      { code: 'reward.already_canceled', message: 'the reward was canceled', details: undefined });
  });

  test('a claim states the reward\'s amount, token and the user\'s own address, or is refused before anything moves', async () => {
    const reward = await issue();
    const user = randomAddress();
    const claim = (overrides: Partial<Parameters<typeof claimReward>[1]>) => refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user, ...overrides }));
    const calls = parts.chain.calls.length;
    assert.deepEqual(await claim({ userAddress: randomAddress() }), { code: 'request.invalid', message: 'userAddress is not the app user\'s account', details: 'userAddress' });
    assert.deepEqual(await claim({ tokenSymbol: 'USDX' }), { code: 'reward.bad_amount', message: 'tokenSymbol is not the reward\'s token', details: undefined });
    assert.deepEqual(await claim({ tokenAmount: '2.4' }), { code: 'reward.bad_amount', message: 'tokenAmount is not the reward\'s amount', details: undefined });
    assert.deepEqual(await claim({ tokenAmount: 'lots' }), { code: 'reward.bad_amount', message: 'tokenAmount is not a token amount', details: undefined });
    assert.deepEqual(await claim({ contractAddress: usdx }), { code: 'request.invalid', message: 'contractAddress is not the reward\'s token', details: 'contractAddress' });
    assert.equal((await claim({ contractAddress: userMade })).code, 'payment.token_not_accepted');
    assert.equal(parts.chain.calls.length, calls);
    assert.equal(await statusOf(reward.rewardId), 'issued');
    assert.equal((await claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.50', account: user, userAddress: user, contractAddress: vixp.toLowerCase() })).userAddress, user);
  });

  test('a reward in an allowed token is paid in that token, its amount in its decimals', async () => {
    const store = await parts.newStore('0');
    parts.chain.mint(store.settlementAddress, 10n ** 9n, usdx);
    const now = parts.now;
    const reward = await parts.deps.rewards.insertReward({
      id: 'USDXREWARD', tid: store.tid, rewardReason: 'usdx', network: 'ethereum', settlementAddress: store.settlementAddress, contractAddress: usdx,
      tokenSymbol: 'USDX', tokenAmount: '1500000', exchangeAmount: '3', exchangeCurrency: 'USD', exchangeRate: '2', exchangeDateIndex: '2026112800001',
      rewardDate: '20261128120000', expiresAt: now + lifetimeMs, createdAt: now, updatedAt: now,
    });
    assert.equal(reward.inserted, true);
    const user = randomAddress();
    assert.equal((await refusal(claimReward(parts.deps, { rewardId: 'USDXREWARD', tokenAmount: '1.5', account: user, contractAddress: vixp }))).details, 'contractAddress');
    const claim = await claimReward(parts.deps, { rewardId: 'USDXREWARD', tokenAmount: '1.5', tokenSymbol: 'USDX', account: user, contractAddress: usdx });
    assert.deepEqual([claim.tokenAmount, claim.contractAddress, claim.tokenSymbol], ['1.5', usdx, 'USDX']);
    assert.equal(parts.chain.balanceOf(user, usdx), 1_500_000n);
    assert.equal(parts.chain.calls.at(-1)?.amount, '1.5');
  });

  test('a refused payout puts the reward back to issued (claimable again, by anyone); a pending one keeps it claiming', async () => {
    const reward = await issue();
    const user = randomAddress();
    parts.chain.script.push({ kind: 'refused', code: 'chain.transaction_failed' });
    parts.now += 1000;
    assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user })),
      { code: 'chain.transaction_failed', message: 'refused: chain.transaction_failed', details: undefined });
    const back = await parts.deps.rewards.findReward(reward.rewardId);
    assert.deepEqual([back?.status, back?.userAddress, back?.updatedAt], ['issued', null, parts.now]);
    assert.equal(parts.chain.balanceOf(user), 0n);

    // The next attempt, a moment later: its transfer's reference is its own (reward:<id>:<when it began>).
    parts.now += 1;
    parts.chain.script.push({ kind: 'pending' });
    assert.equal((await refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user }))).code, 'chain.outcome_pending');
    const pending = await parts.deps.rewards.findReward(reward.rewardId);
    assert.deepEqual([pending?.status, pending?.userAddress], ['claiming', user]);
    const calls = parts.chain.calls.length;
    assert.equal((await refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: randomAddress() }))).code, 'reward.already_rewarded');
    assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId }))).code, 'payment.in_progress');
    assert.equal(parts.chain.calls.length, calls, 'a claiming reward is never paid again');
  });

  test('two claims at once: one is paid, the other is 05', async () => {
    const reward = await issue();
    const [a, b] = [randomAddress(), randomAddress()];
    const answers = await Promise.all([a, b].map((account) => refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account }))));
    assert.deepEqual(answers.map((answer) => answer.code).sort(), ['answered', 'reward.already_rewarded']);
    assert.equal(parts.chain.balanceOf(a) + parts.chain.balanceOf(b), 25n * 10n ** 17n);
  });

  test('a claim that loses its compare-and-set to a cancellation is 03, and one that loses it to a claim 05; nothing moves', async () => {
    const real = parts.deps.rewards;
    const raced = (before: () => Promise<unknown>): RewardRepository => {
      let first = true;
      return { ...real, transition: async (...args) => { if (first) { first = false; await before(); } return real.transition(...args); } };
    };
    const reward = await issue();
    const calls = parts.chain.calls.length;
    parts.deps.rewards = raced(() => real.transition(reward.rewardId, 'issued', 'canceled', {}, parts.now));
    try {
      assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: randomAddress() })),
        { code: 'reward.already_canceled', message: 'the reward was canceled', details: undefined });
      const other = await issue();
      parts.deps.rewards = raced(() => real.transition(other.rewardId, 'issued', 'claiming', {}, parts.now));
      assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: other.rewardId, tokenAmount: '2.5', account: randomAddress() })),
        { code: 'reward.already_rewarded', message: 'the reward was already claimed', details: undefined });
      // Another claim took it and its payout was refused: claimable again, but not by this attempt.
      const third = await issue();
      parts.deps.rewards = {
        ...real,
        transition: async (...args) => {
          parts.deps.rewards = real;
          await real.transition(third.rewardId, 'issued', 'claiming', {}, parts.now);
          const moved = await real.transition(...args);
          await real.transition(third.rewardId, 'claiming', 'issued', { userAddress: null }, parts.now);
          return moved;
        },
      };
      assert.deepEqual(await refusal(claimReward(parts.deps, { rewardId: third.rewardId, tokenAmount: '2.5', account: randomAddress() })),
        { code: 'reward.already_rewarded', message: 'the reward was claimed at the same time', details: undefined });
      assert.equal(await statusOf(third.rewardId), 'issued');
    } finally { parts.deps.rewards = real; }
    assert.equal(parts.chain.calls.length, calls);
  });

  test('a claim interrupted before its payout or after it: the reward stays claiming until settled stale', async () => {
    const reward = await issue();
    const user = randomAddress();
    parts.arm('reward-claim.after-claiming');
    await assert.rejects(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user }), /failpoint reward-claim.after-claiming/);
    assert.equal(await statusOf(reward.rewardId), 'claiming');
    assert.equal(parts.chain.calls.filter((c) => c.reference?.startsWith(`reward:${reward.rewardId}:`)).length, 0);

    const paid = await issue();
    parts.arm('reward-claim.after-transfer');
    await assert.rejects(claimReward(parts.deps, { rewardId: paid.rewardId, tokenAmount: '2.5', account: user }), /failpoint reward-claim.after-transfer/);
    assert.equal(await statusOf(paid.rewardId), 'claiming');
    assert.equal(parts.chain.balanceOf(user), 25n * 10n ** 17n);
  });

  describe('at the POS (START_REWARD)', () => {
    const posRequest = (reward: IssuedReward, userUuid: string) => ({ tid: shop.tid, tranNo: `P-${++n}`, rewardId: reward.rewardId, tokenAmount: reward.tokenAmount, userUuid });

    test('pairs with the app, pays the app user\'s account, END_REWARD to both', async () => {
      const reward = await issue();
      const app = sink();
      const user = randomAddress();
      parts.desk.connectApp({ userUuid: 'u-1', userId: 'user-1', userAddress: user, sink: app });
      const pos = sink();
      await claimRewardAtPos(parts.deps, shop, { ...posRequest(reward, 'u-1'), userAddress: user, contractAddress: vixp }, pos);
      assert.equal(pos.events.length, 1);
      assert.equal(pos.events[0]!.type, 'end_reward');
      assert.deepEqual(app.events, pos.events);
      assert.equal(parts.chain.balanceOf(user), 25n * 10n ** 17n);
    });

    test('the POS\'s own tid and a user_uuid are required (thrown: nothing paired)', async () => {
      const reward = await issue();
      const pos = sink();
      assert.deepEqual(await refusal(claimRewardAtPos(parts.deps, shop, { ...posRequest(reward, 'u-2'), tid: 'T-other' }, pos)),
        { code: 'request.unauthorized', message: 'tid is not the store of this API key', details: 'tid' });
      assert.deepEqual(await refusal(claimRewardAtPos(parts.deps, shop, posRequest(reward, ''), pos)),
        { code: 'request.invalid', message: 'user_uuid is required', details: 'user_uuid' });
      assert.deepEqual(pos.events, []);
    });

    test('a reward that cannot be claimed fails the POS and the waiting app before pairing (the app is not taken)', async () => {
      const reward = await issue();
      await cancelReward(parts.deps, shop, { rewardId: reward.rewardId });
      const app = sink();
      parts.desk.connectApp({ userUuid: 'u-3', userId: 'user-3', userAddress: randomAddress(), sink: app });
      const pos = sink();
      const request = posRequest(reward, 'u-3');
      await claimRewardAtPos(parts.deps, shop, request, pos);
      assert.deepEqual(pos.events.map((e) => e.type === 'failed' && [e.error.code, e.flow, e.tranNo]), [['reward.already_canceled', 'reward', request.tranNo]]);
      assert.deepEqual(app.events.map((e) => e.type === 'failed' && [e.error.code, e.flow, e.tranNo]), [['reward.already_canceled', 'reward', request.tranNo]]);
      // Another store's reward: 01, the app's token refused before pairing alike.
      const other = await issue('2500', await parts.newStore('10'));
      const pos2 = sink();
      await claimRewardAtPos(parts.deps, shop, posRequest(other, 'u-4'), pos2);
      assert.equal(pos2.events[0]?.type === 'failed' && pos2.events[0].error.code, 'reward.not_issued');
      const pos3 = sink();
      await claimRewardAtPos(parts.deps, shop, { ...posRequest(await issue(), 'u-5'), contractAddress: usdx }, pos3);
      assert.equal(pos3.events[0]?.type === 'failed' && pos3.events[0].error.code, 'request.invalid');
    });

    test('after pairing: a POS naming another user address, or a refused payout, fails both sides; the reward stays claimable', async () => {
      const reward = await issue();
      const app = sink();
      parts.desk.connectApp({ userUuid: 'u-6', userId: 'user-6', userAddress: randomAddress(), sink: app });
      const pos = sink();
      await claimRewardAtPos(parts.deps, shop, { ...posRequest(reward, 'u-6'), userAddress: randomAddress() }, pos);
      assert.deepEqual(pos.events.map((e) => e.type === 'failed' && e.error.code), ['request.invalid']);
      assert.deepEqual(app.events.map((e) => e.type === 'failed' && [e.error.code, e.flow]), [['request.invalid', 'reward']]);

      const app2 = sink();
      parts.desk.connectApp({ userUuid: 'u-7', userId: 'user-7', userAddress: randomAddress(), sink: app2 });
      parts.chain.script.push({ kind: 'refused', code: 'wallet.insufficient_balance' });
      const pos2 = sink();
      await claimRewardAtPos(parts.deps, shop, posRequest(reward, 'u-7'), pos2);
      assert.deepEqual(pos2.events.map((e) => e.type === 'failed' && e.error.code), ['wallet.insufficient_balance']);
      assert.deepEqual(app2.events.map((e) => e.type === 'failed' && e.error.code), ['wallet.insufficient_balance']);
      assert.equal(await statusOf(reward.rewardId), 'issued');
    });

    test('an unexpected failure is internal to both sides and logged', async () => {
      const reward = await issue();
      const app = sink();
      parts.desk.connectApp({ userUuid: 'u-8', userId: 'user-8', userAddress: randomAddress(), sink: app });
      parts.arm('reward-claim.after-claiming');
      const pos = sink();
      await claimRewardAtPos(parts.deps, shop, posRequest(reward, 'u-8'), pos);
      const failed = pos.events[0];
      assert.ok(failed?.type === 'failed');
      assert.deepEqual([failed.error.code, failed.error.message, (failed.error.cause as Error).message], ['internal', 'the reward claim failed', 'failpoint reward-claim.after-claiming']);
      assert.deepEqual(app.events.map((e) => e.type === 'failed' && e.error.code), ['internal']);
      const logged = parts.logs.filter((line) => line.msg === 'reward claim failed');
      assert.equal(logged.length, 1);
      assert.equal(logged[0]!.tid, shop.tid);
      assert.equal(logged[0]!.level, 50);
      const pos2 = sink();
      await claimRewardAtPos(parts.deps, shop, posRequest(reward, 'u-9'), pos2);
      assert.deepEqual(pos2.events.map((e) => e.type === 'failed' && e.error.code), ['reward.already_rewarded']);
      assert.equal(parts.logs.filter((line) => line.msg === 'reward claim failed').length, 1, 'a domain refusal is not logged as a failure');
    });
  });
});
