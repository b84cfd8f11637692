import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { RewardRepository } from '../store/reward-repository.ts';
import { issueReward } from './issue-reward.ts';
import { claimReward } from './claim-reward.ts';
import { cancelReward } from './cancel-reward.ts';
import { formatDateTime } from '../commerce/platform-dates.ts';
import { openRewardParts, randomAddress, staleMs, usdx, vixp, type RewardParts } from '../../test/support/reward-parts.ts';

// CancelReward as a store sees it: an unclaimed reward voided (nothing moves), a claimed one moved
// back from the user to the store, numbered from the approvals' daily sequence, reward.canceled; 03 a
// second time, 13 while it is being claimed or canceled, 04 for another amount; a give-back refused
// leaves it claimed, one not settled keeps it canceling; once per tran_no, an interrupted one settled
// from its transfer. A real SQLite store and repositories; the stand-in chain of test/support/reward-parts.ts.

/** A refusal as a store reads it: its code, message and the field it names (`answered` when there is none). */
const refusal = async (promise: Promise<unknown>): Promise<{ code: string; message: string; details: string | undefined }> => {
  try { await promise; } catch (error) {
    if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  return { code: 'answered', message: '', details: undefined };
};

describe('canceling a reward', () => {
  let parts: RewardParts;
  let shop: StoreRecord;
  let n = 0;
  before(async () => { parts = await openRewardParts(); shop = await parts.newStore('1000'); });
  after(async () => { await parts.dispose(); });
  /** The platform's date of now (Asia/Seoul), as approval dates carry it. */
  const today = () => formatDateTime(parts.now, 'Asia/Seoul');
  const issue = (store = shop) => issueReward(parts.deps, store, { tid: store.tid, rewardReason: `r-${++n}`, exchangeAmount: '2500' });
  const claimed = async (user = randomAddress()) => {
    const reward = await issue();
    await claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user });
    return { reward, user };
  };

  test('an unclaimed reward is voided: nothing moves, an approval number, reward.canceled; again is 03', async () => {
    const store = await parts.newStore('10');
    const reward = await issue(store);
    parts.now += 1000;
    const calls = parts.chain.calls.length;
    const first = await cancelReward(parts.deps, store, { rewardId: reward.rewardId, tokenAmount: '2.5' });
    const second = await cancelReward(parts.deps, shop, { rewardId: (await issue()).rewardId });
    assert.match(first.approvalNo, /^20261128\d{8}$/);
    assert.equal(BigInt(second.approvalNo), BigInt(first.approvalNo) + 1n, 'one daily sequence');
    assert.deepEqual(first, { contractAddress: vixp, tokenSymbol: 'VIXP', userAddress: '', tokenAmount: '2.5', transferTransactionId: '', approvalNo: first.approvalNo, approvalDate: '20261128120001' });
    assert.equal(parts.chain.calls.length, calls);
    const stored = await parts.deps.rewards.findReward(reward.rewardId);
    assert.deepEqual([stored?.status, stored?.cancelNo, stored?.cancelDate, stored?.cancelTransactionId, stored?.updatedAt], ['canceled', first.approvalNo, '20261128120001', null, parts.now]);
    const events = await parts.eventsOf(store.tid);
    assert.deepEqual(events.map((e) => e.type), ['reward.issued', 'reward.canceled']);
    assert.deepEqual(events[1]!.data, {
      tid: store.tid, reward_id: reward.rewardId, contract_address: vixp, token_symbol: 'VIXP', user_address: '', token_amount: '2.5',
      transfer_transaction_id: '', approval_no: first.approvalNo, approval_date: '20261128120001', res_code: '00', res_message: 'Success',
    });
    assert.deepEqual(await refusal(cancelReward(parts.deps, store, { rewardId: reward.rewardId })),
      { code: 'reward.already_canceled', message: 'the reward was already canceled', details: undefined });
  });

  test('a claimed reward moves back from the user to the store\'s account, reward.canceled with the transaction', async () => {
    const store = await parts.newStore('10');
    const reward = await issue(store);
    const user = randomAddress();
    parts.now += 1000;
    await claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user });
    parts.now += 2000;
    const canceled = await cancelReward(parts.deps, store, { rewardId: reward.rewardId });
    assert.match(canceled.transferTransactionId, /^0x[0-9a-f]{64}$/);
    assert.deepEqual(canceled, {
      contractAddress: vixp, tokenSymbol: 'VIXP', userAddress: user, tokenAmount: '2.5', transferTransactionId: canceled.transferTransactionId,
      approvalNo: canceled.approvalNo, approvalDate: today(),
    });
    assert.equal(parts.chain.balanceOf(user), 0n);
    assert.equal(parts.chain.balanceOf(store.settlementAddress), 10n * 10n ** 18n);
    const call = parts.chain.calls.at(-1)!;
    assert.deepEqual({ ...call, reference: '' }, { fromAddress: user, toAddress: store.settlementAddress, amount: '2.5', contractAddress: vixp, reference: '' });
    assert.equal(call.reference, `reward-cancel:${reward.rewardId}:${parts.now}`, 'the attempt named by the time it began');
    const stored = await parts.deps.rewards.findReward(reward.rewardId);
    assert.deepEqual([stored?.status, stored?.cancelNo, stored?.cancelDate, stored?.cancelTransactionId], ['canceled', canceled.approvalNo, today(), canceled.transferTransactionId]);
    const events = await parts.eventsOf(store.tid);
    assert.deepEqual(events.map((e) => e.type), ['reward.issued', 'reward.claimed', 'reward.canceled']);
    assert.deepEqual(events[2]!.data, {
      tid: store.tid, reward_id: reward.rewardId, contract_address: vixp, token_symbol: 'VIXP', user_address: user, token_amount: '2.5',
      transfer_transaction_id: canceled.transferTransactionId, approval_no: canceled.approvalNo, approval_date: today(), res_code: '00', res_message: 'Success',
    });
    const calls = parts.chain.calls.length;
    assert.equal((await refusal(cancelReward(parts.deps, store, { rewardId: reward.rewardId }))).code, 'reward.already_canceled');
    assert.equal(parts.chain.calls.length, calls, 'never moved back twice');
  });

  test('01 for no reward, none of this store\'s; 04 for another amount; 13 while it is being claimed or canceled', async () => {
    const notIssued = { code: 'reward.not_issued', message: 'no such reward of this store', details: undefined };
    assert.deepEqual(await refusal(cancelReward(parts.deps, shop, { rewardId: '' })), notIssued);
    assert.deepEqual(await refusal(cancelReward(parts.deps, shop, { rewardId: 'NOPE' })), notIssued);
    const reward = await issue();
    assert.deepEqual(await refusal(cancelReward(parts.deps, await parts.newStore('0'), { rewardId: reward.rewardId })), notIssued);
    const badAmount = { code: 'reward.bad_amount', message: 'tokenAmount is not the reward\'s amount', details: undefined };
    assert.deepEqual(await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tokenAmount: '2.4' })), badAmount);
    assert.deepEqual(await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tokenAmount: 'all' })),
      { code: 'reward.bad_amount', message: 'tokenAmount is not a token amount', details: undefined });
    assert.equal((await parts.deps.rewards.findReward(reward.rewardId))?.status, 'issued');
    assert.equal((await cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tokenAmount: '2.50' })).tokenAmount, '2.5');

    const claiming = await issue();
    parts.chain.script.push({ kind: 'pending' });
    await assert.rejects(claimReward(parts.deps, { rewardId: claiming.rewardId, tokenAmount: '2.5', account: randomAddress() }), { code: 'chain.outcome_pending' });
    assert.deepEqual(await refusal(cancelReward(parts.deps, shop, { rewardId: claiming.rewardId })),
      { code: 'payment.in_progress', message: 'the reward is being claimed right now', details: undefined });

    const { reward: canceling } = await claimed();
    parts.chain.script.push({ kind: 'pending' });
    assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: canceling.rewardId }))).code, 'chain.outcome_pending');
    assert.equal((await parts.deps.rewards.findReward(canceling.rewardId))?.status, 'canceling');
    const calls = parts.chain.calls.length;
    assert.deepEqual(await refusal(cancelReward(parts.deps, shop, { rewardId: canceling.rewardId })),
      { code: 'payment.in_progress', message: 'the reward is being canceled right now', details: undefined });
    assert.equal((await refusal(claimReward(parts.deps, { rewardId: canceling.rewardId, tokenAmount: '2.5', account: randomAddress() }))).code, 'reward.already_canceled');
    assert.equal(parts.chain.calls.length, calls);
  });

  test('a reward in an allowed token is checked and answered in that token\'s decimals, and moved back in it', async () => {
    const voided = await parts.usdxReward(shop);
    assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: voided, tokenAmount: '1.6' }))).code, 'reward.bad_amount');
    const answer = await cancelReward(parts.deps, shop, { rewardId: voided, tokenAmount: '1.5' });
    assert.deepEqual([answer.contractAddress, answer.tokenSymbol, answer.tokenAmount], [usdx, 'USDX', '1.5']);
    const paid = await parts.usdxReward(shop);
    const user = randomAddress();
    await claimReward(parts.deps, { rewardId: paid, tokenAmount: '1.5', account: user });
    assert.equal(parts.chain.balanceOf(user, usdx), 1_500_000n);
    assert.equal((await cancelReward(parts.deps, shop, { rewardId: paid })).tokenAmount, '1.5');
    assert.equal(parts.chain.balanceOf(user, usdx), 0n);
  });

  test('a refused give-back leaves the reward claimed (the user keeps the tokens); it can be canceled again', async () => {
    const { reward, user } = await claimed();
    parts.chain.script.push({ kind: 'refused', code: 'wallet.insufficient_balance' });
    parts.now += 1000;
    assert.deepEqual(await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId })),
      { code: 'wallet.insufficient_balance', message: 'refused: wallet.insufficient_balance', details: undefined });
    const stored = await parts.deps.rewards.findReward(reward.rewardId);
    assert.deepEqual([stored?.status, stored?.updatedAt, stored?.cancelNo], ['claimed', parts.now, null]);
    assert.equal(parts.chain.balanceOf(user), 25n * 10n ** 17n);
    assert.equal((await cancelReward(parts.deps, shop, { rewardId: reward.rewardId })).userAddress, user);
    assert.equal(parts.chain.balanceOf(user), 0n);
  });

  test('a cancellation that loses its compare-and-set runs again on the reward as it stands', async () => {
    const real = parts.deps.rewards;
    const raced = (before: () => Promise<unknown>): RewardRepository => {
      let first = true;
      return { ...real, transition: async (...args) => { if (first) { first = false; await before(); } return real.transition(...args); } };
    };
    const reward = await issue();
    parts.deps.rewards = raced(() => real.transition(reward.rewardId, 'issued', 'claiming', { userAddress: randomAddress() }, parts.now));
    try {
      assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId }))).code, 'payment.in_progress');
      const { reward: paid, user } = await claimed();
      parts.deps.rewards = raced(() => real.transition(paid.rewardId, 'claimed', 'canceling', {}, parts.now));
      assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: paid.rewardId }))).code, 'payment.in_progress');
      assert.equal(parts.chain.balanceOf(user), 25n * 10n ** 17n, 'nothing moved back');
    } finally { parts.deps.rewards = real; }
  });

  test('once per tran_no: a retry answers the first cancellation, other parameters are 11, the tran_no is the store\'s CancelReward\'s', async () => {
    const { reward } = await claimed();
    const first = await cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-1' });
    const calls = parts.chain.calls.length;
    assert.deepEqual(await cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-1' }), first);
    assert.equal(parts.chain.calls.length, calls);
    assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tokenAmount: '2.5', tranNo: 'C-1' }))).code, 'request.invalid');
    const keys = await parts.store.db.selectFrom('idempotency_keys').select(['scope', 'reference']).where('idem_key', '=', 'C-1').execute();
    assert.deepEqual(keys.map((key) => ({ ...key })), [{ scope: `pos:${shop.tid}:cancelReward`, reference: reward.rewardId }]);
    const other = await parts.newStore('10');
    const otherReward = await issue(other);
    assert.equal((await cancelReward(parts.deps, other, { rewardId: otherReward.rewardId, tranNo: 'C-1' })).transferTransactionId, '');
  });

  test('interrupted before its give-back: the tran_no\'s retry, once stale, puts it back to claimed and moves it back once', async () => {
    const { reward, user } = await claimed();
    parts.arm('reward-cancel.after-canceling');
    await assert.rejects(cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-2' }), /failpoint reward-cancel.after-canceling/);
    assert.equal((await parts.deps.rewards.findReward(reward.rewardId))?.status, 'canceling');
    assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-2' }))).code, 'payment.in_progress');
    parts.now += staleMs + 1;
    const canceled = await cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-2' });
    assert.equal(canceled.userAddress, user);
    assert.equal(parts.chain.balanceOf(user), 0n);
    assert.equal(parts.chain.calls.filter((c) => c.reference?.startsWith(`reward-cancel:${reward.rewardId}:`)).length, 1);
  });

  test('interrupted after its give-back: the retry answers the cancellation from the transfer without moving again', async () => {
    const { reward, user } = await claimed();
    parts.arm('reward-cancel.after-transfer');
    await assert.rejects(cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-3' }), /failpoint reward-cancel.after-transfer/);
    assert.equal(parts.chain.balanceOf(user), 0n);
    parts.now += staleMs + 1;
    const canceled = await cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-3' });
    const [giveBack] = (await parts.chain.records()).filter((r) => r.reference.startsWith(`reward-cancel:${reward.rewardId}:`));
    assert.deepEqual({ ...canceled, approvalNo: '' }, {
      contractAddress: vixp, tokenSymbol: 'VIXP', userAddress: user, tokenAmount: '2.5', transferTransactionId: giveBack!.tx_hash, approvalNo: '', approvalDate: today(),
    });
    assert.match(canceled.approvalNo, /^20261128\d{8}$/);
    assert.equal(parts.chain.calls.filter((c) => c.reference?.startsWith(`reward-cancel:${reward.rewardId}:`)).length, 1);
    assert.equal(parts.chain.balanceOf(user), 0n);
  });

  test('a tran_no retried for a reward whose cancellation is still in flight on chain stays 13', async () => {
    const { reward } = await claimed();
    parts.chain.script.push({ kind: 'interrupted', status: 'submitted' });
    void cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-4' });
    await parts.chain.untilRecorded(`reward-cancel:${reward.rewardId}:`);
    parts.now += staleMs + 1;
    assert.equal((await refusal(cancelReward(parts.deps, shop, { rewardId: reward.rewardId, tranNo: 'C-4' }))).code, 'payment.in_progress');
    assert.equal((await parts.deps.rewards.findReward(reward.rewardId))?.status, 'canceling');
  });
});
