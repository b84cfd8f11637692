import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StoreRecord } from '../store/merchant-repository.ts';
import { formatDateTime } from '../commerce/platform-dates.ts';
import { issueReward } from './issue-reward.ts';
import { claimReward } from './claim-reward.ts';
import { cancelReward } from './cancel-reward.ts';
import { settleStaleReward, settleStaleRewardCancel, settleStaleRewards } from './settle-stale-reward.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { openRewardParts, randomAddress, staleMs, vixp, type RewardParts, type ScriptedTransfer } from '../../test/support/reward-parts.ts';

// A reward left claiming or canceling by an interrupted run ends as its latest transfer did, once
// stale (and only then): paid makes it claimed (reward.claimed), never signed or cancelled puts it
// back to issued for anyone to claim; a give-back executed makes it canceled (numbered then,
// reward.canceled), otherwise claimed again; a transfer that may still execute leaves it as it is.
// A real SQLite store and repositories; the transfers' records are the stand-in chain's (test/support/reward-parts.ts).

describe('settling an interrupted reward operation', () => {
  let parts: RewardParts;
  let shop: StoreRecord;
  let n = 0;
  before(async () => { parts = await openRewardParts(); shop = await parts.newStore('1000'); });
  after(async () => { await parts.dispose(); });
  const rewardOf = async (id: string) => (await parts.deps.rewards.findReward(id))!;

  /** A reward whose claim stopped after its payout was recorded `status` (never answered). */
  const interruptedClaim = async (step: ScriptedTransfer | 'before-transfer', user = randomAddress(), store = shop) => {
    parts.now += 1000;
    const reward = await issueReward(parts.deps, store, { tid: store.tid, rewardReason: `r-${++n}`, exchangeAmount: '2500' });
    if (step === 'before-transfer') {
      parts.arm('reward-claim.after-claiming');
      await assert.rejects(claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user }));
    } else {
      parts.chain.script.push(step);
      void claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user }).catch(() => undefined);
      await parts.chain.untilRecorded(`reward:${reward.rewardId}:`);
    }
    return { id: reward.rewardId, user, at: parts.now };
  };
  /** A claimed reward whose cancellation stopped after its give-back was recorded `status`. */
  const interruptedCancel = async (step: ScriptedTransfer | 'before-transfer', store = shop) => {
    parts.now += 1000;
    const reward = await issueReward(parts.deps, store, { tid: store.tid, rewardReason: `r-${++n}`, exchangeAmount: '2500' });
    const user = randomAddress();
    parts.now += 1000;
    await claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: user });
    parts.now += 1000;
    if (step === 'before-transfer') {
      parts.arm('reward-cancel.after-canceling');
      await assert.rejects(cancelReward(parts.deps, store, { rewardId: reward.rewardId }));
    } else {
      parts.chain.script.push(step);
      void cancelReward(parts.deps, store, { rewardId: reward.rewardId }).catch(() => undefined);
      await parts.chain.untilRecorded(`reward-cancel:${reward.rewardId}:`);
    }
    return { id: reward.rewardId, user, at: parts.now };
  };

  test('a claim whose payout executed ends claimed with its transaction and reward.claimed, only once stale', async () => {
    const store = await parts.newStore('10');
    const claim = await interruptedClaim({ kind: 'interrupted', status: 'used' }, randomAddress(), store);
    parts.now = claim.at + staleMs;
    assert.equal((await settleStaleReward(parts.deps, await rewardOf(claim.id))).status, 'claiming', 'not stale at the window\'s millisecond');
    parts.now = claim.at + staleMs + 1;
    const settled = await settleStaleReward(parts.deps, await rewardOf(claim.id));
    const [payout] = (await parts.chain.records()).filter((r) => r.reference.startsWith(`reward:${claim.id}:`));
    assert.deepEqual([settled.status, settled.claimTransactionId, settled.claimedAt, settled.userAddress, settled.updatedAt],
      ['claimed', payout!.tx_hash, parts.now, claim.user, parts.now]);
    const events = await parts.eventsOf(store.tid);
    assert.deepEqual(events.map((e) => e.type), ['reward.issued', 'reward.claimed']);
    assert.deepEqual(events[1]!.data, {
      tid: store.tid, reward_id: claim.id, user_address: claim.user, contract_address: vixp, token_symbol: 'VIXP', token_amount: '2.5',
      transfer_transaction_id: payout!.tx_hash, exchange_date_index: '2026112800001', exchange_rate: '1000', exchange_amount: '2500',
      exchange_currency: 'KRW', res_code: '00', res_message: 'Success',
    });
    const warned = parts.logs.filter((line) => line.msg === 'interrupted reward operation settled from its transfer');
    assert.deepEqual(warned.map((line) => [line.level, line.rewardId, line.tid, line.was, line.transfer]), [[40, claim.id, store.tid, 'claiming', 'used']]);
    assert.equal(parts.chain.balanceOf(claim.user), 25n * 10n ** 17n, 'paid once');
  });

  test('a reward in an allowed token is settled and announced in that token\'s decimals', async () => {
    const store = await parts.newStore('0');
    parts.now += 1000;
    const id = await parts.usdxReward(store);
    const user = randomAddress();
    parts.chain.script.push({ kind: 'interrupted', status: 'used' });
    void claimReward(parts.deps, { rewardId: id, tokenAmount: '1.5', account: user }).catch(() => undefined);
    await parts.chain.untilRecorded(`reward:${id}:`);
    parts.now += staleMs + 1;
    assert.equal((await settleStaleReward(parts.deps, await rewardOf(id))).status, 'claimed');
    const [claimed] = await parts.eventsOf(store.tid);
    assert.deepEqual([claimed?.type, claimed?.data.token_amount, claimed?.data.token_symbol], ['reward.claimed', '1.5', 'USDX']);
  });

  test('a claim whose payout never went out, was cancelled or expired goes back to issued, claimable by anyone', async () => {
    for (const step of ['before-transfer', { kind: 'interrupted', status: 'canceled' }, { kind: 'interrupted', status: 'expired' }] as const) {
      const claim = await interruptedClaim(step);
      parts.now += staleMs + 1;
      const settled = await settleStaleReward(parts.deps, await rewardOf(claim.id));
      assert.deepEqual([settled.status, settled.userAddress, settled.claimTransactionId, settled.updatedAt], ['issued', null, null, parts.now], JSON.stringify(step));
      const other = randomAddress();
      assert.equal((await claimReward(parts.deps, { rewardId: claim.id, tokenAmount: '2.5', account: other })).userAddress, other);
      assert.equal(parts.chain.balanceOf(claim.user), 0n);
    }
  });

  test('a run slower than the staleness window cannot move tokens once the sweep put its reward back: its transfer is refused, the next one moves once', async () => {
    const store = await parts.newStore('10');
    parts.now += 1000;
    const reward = await issueReward(parts.deps, store, { tid: store.tid, rewardReason: `r-${++n}`, exchangeAmount: '2500' });
    const [late, next] = [randomAddress(), randomAddress()];
    /** Starts `run` with its transfer held before anything is recorded; settles the reward once stale, then lets the run go on. */
    const overtaken = async (run: () => Promise<unknown>, prefix: string, settledAs: string) => {
      let release!: () => void;
      parts.chain.script.push({ kind: 'held', release: new Promise<void>((resolve) => { release = resolve; }) });
      const slow = run();
      await waitFor(async () => parts.chain.calls.some((call) => call.reference?.startsWith(prefix)), { timeoutMs: 5_000, message: 'the run reached its transfer' });
      parts.now += staleMs + 1;
      assert.equal((await settleStaleReward(parts.deps, await rewardOf(reward.rewardId))).status, settledAs);
      release();
      await assert.rejects(slow, (error: { code: string }) => error.code === 'request.invalid');
      assert.equal((await rewardOf(reward.rewardId)).status, settledAs, 'left as the sweep settled it');
      assert.deepEqual((await parts.chain.records()).filter((r) => r.reference.startsWith(prefix)).map((r) => [r.status, r.value]), [['void', '0']]);
    };
    await overtaken(() => claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: late }), `reward:${reward.rewardId}:`, 'issued');
    assert.equal(parts.chain.balanceOf(late), 0n, 'the late payout moved nothing');
    parts.now += 1000;
    assert.equal((await claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: next })).userAddress, next);
    assert.equal(parts.chain.balanceOf(next), 25n * 10n ** 17n, 'paid once');
    parts.now += 1000;
    await overtaken(() => cancelReward(parts.deps, store, { rewardId: reward.rewardId }), `reward-cancel:${reward.rewardId}:`, 'claimed');
    assert.equal(parts.chain.balanceOf(next), 25n * 10n ** 17n, 'the late give-back moved nothing');
    assert.deepEqual((await parts.eventsOf(store.tid)).map((e) => e.type), ['reward.issued', 'reward.claimed']);
  });

  test('a payout that may still execute leaves the reward claiming: no second payout', async () => {
    for (const status of ['submitted', 'reserved'] as const) {
      const claim = await interruptedClaim({ kind: 'interrupted', status });
      parts.now += staleMs + 1;
      const logged = parts.logs.length;
      assert.equal((await settleStaleReward(parts.deps, await rewardOf(claim.id))).status, 'claiming');
      assert.equal(parts.logs.length, logged);
      const calls = parts.chain.calls.length;
      assert.equal((await claimReward(parts.deps, { rewardId: claim.id, tokenAmount: '2.5', account: randomAddress() }).catch((e: { code: string }) => e.code)), 'reward.already_rewarded');
      assert.equal(parts.chain.calls.length, calls);
      // The relayer lands it later: the next look settles it claimed.
      const [payout] = (await parts.chain.records()).filter((r) => r.reference.startsWith(`reward:${claim.id}:`));
      await parts.chain.update(payout!.reference, 'used');
      assert.equal((await settleStaleReward(parts.deps, await rewardOf(claim.id))).status, 'claimed');
      assert.equal(parts.chain.balanceOf(claim.user), 25n * 10n ** 17n);
    }
  });

  test('a cancellation whose give-back executed ends canceled, numbered now, reward.canceled; one that never moved ends claimed', async () => {
    const store = await parts.newStore('10');
    const cancel = await interruptedCancel({ kind: 'interrupted', status: 'used' }, store);
    parts.now = cancel.at + staleMs;
    assert.equal((await settleStaleReward(parts.deps, await rewardOf(cancel.id))).status, 'canceling');
    parts.now = cancel.at + staleMs + 1;
    const settled = await settleStaleReward(parts.deps, await rewardOf(cancel.id));
    const [giveBack] = (await parts.chain.records()).filter((r) => r.reference.startsWith(`reward-cancel:${cancel.id}:`));
    const date = formatDateTime(parts.now, 'Asia/Seoul');
    assert.match(settled.cancelNo ?? '', /^20261128\d{8}$/);
    assert.deepEqual([settled.status, settled.cancelDate, settled.cancelTransactionId, settled.updatedAt], ['canceled', date, giveBack!.tx_hash, parts.now]);
    const events = await parts.eventsOf(store.tid);
    assert.deepEqual(events.map((e) => e.type), ['reward.issued', 'reward.claimed', 'reward.canceled']);
    assert.deepEqual(events[2]!.data, {
      tid: store.tid, reward_id: cancel.id, contract_address: vixp, token_symbol: 'VIXP', user_address: cancel.user, token_amount: '2.5',
      transfer_transaction_id: giveBack!.tx_hash, approval_no: settled.cancelNo, approval_date: date, res_code: '00', res_message: 'Success',
    });
    const warned = parts.logs.filter((line) => line.rewardId === cancel.id);
    assert.deepEqual(warned.map((line) => [line.was, line.transfer]), [['canceling', 'used']]);

    for (const step of ['before-transfer', { kind: 'interrupted', status: 'canceled' }] as const) {
      const stopped = await interruptedCancel(step);
      parts.now += staleMs + 1;
      const back = await settleStaleReward(parts.deps, await rewardOf(stopped.id));
      assert.deepEqual([back.status, back.userAddress, back.cancelNo, back.updatedAt], ['claimed', stopped.user, null, parts.now]);
      assert.equal(parts.chain.balanceOf(stopped.user), 25n * 10n ** 17n);
    }
    const open = await interruptedCancel({ kind: 'interrupted', status: 'submitted' });
    parts.now += staleMs + 1;
    assert.equal((await settleStaleReward(parts.deps, await rewardOf(open.id))).status, 'canceling');
  });

  test('only claiming and canceling rewards are settled; an issued or claimed one is answered as it is', async () => {
    parts.now += 1000;
    const reward = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: `r-${++n}`, exchangeAmount: '2500' });
    parts.now += staleMs + 1;
    const calls = parts.chain.calls.length;
    const issued = await rewardOf(reward.rewardId);
    assert.equal(await settleStaleReward(parts.deps, issued), issued);
    await claimReward(parts.deps, { rewardId: reward.rewardId, tokenAmount: '2.5', account: randomAddress() });
    parts.now += staleMs + 1;
    const claimed = await rewardOf(reward.rewardId);
    assert.equal(await settleStaleReward(parts.deps, claimed), claimed);
    assert.equal(parts.chain.calls.length, calls + 1);
  });

  test('a CancelReward retry of an interrupted run: 13 while the give-back may execute, its answer once canceled, a rerun otherwise', async () => {
    assert.equal(await settleStaleRewardCancel(parts.deps, 'NOPE'), 'rerun');
    const open = await interruptedCancel({ kind: 'interrupted', status: 'submitted' });
    parts.now += staleMs + 1;
    assert.equal(await settleStaleRewardCancel(parts.deps, open.id), 'pending');
    const moved = await interruptedCancel({ kind: 'interrupted', status: 'used' });
    parts.now += staleMs + 1;
    const answer = await settleStaleRewardCancel(parts.deps, moved.id);
    const stored = await rewardOf(moved.id);
    assert.deepEqual(answer, { outcome: {
      contractAddress: vixp, tokenSymbol: 'VIXP', userAddress: moved.user, tokenAmount: '2.5', transferTransactionId: stored.cancelTransactionId,
      approvalNo: stored.cancelNo, approvalDate: stored.cancelDate,
    } });
    const never = await interruptedCancel('before-transfer');
    parts.now += staleMs + 1;
    assert.equal(await settleStaleRewardCancel(parts.deps, never.id), 'rerun');
    // A reward voided (nothing moved) answers its cancellation without a user or transaction.
    parts.now += 1000;
    const voided = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: `r-${++n}`, exchangeAmount: '2500' });
    const canceled = await cancelReward(parts.deps, shop, { rewardId: voided.rewardId });
    assert.deepEqual(await settleStaleRewardCancel(parts.deps, voided.rewardId), { outcome: canceled });
    const issued = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: `r-${++n}`, exchangeAmount: '2500' });
    assert.equal(await settleStaleRewardCancel(parts.deps, issued.rewardId), 'rerun');
  });

  test('the sweep settles every stale reward and counts those that ended', async () => {
    const sweepStore = await parts.newStore('100');
    // Everything before is settled first, so the count is this test's.
    parts.now += staleMs + 1;
    await settleStaleRewards(parts.deps);
    const paid = await interruptedClaim({ kind: 'interrupted', status: 'used' }, randomAddress(), sweepStore);
    const lost = await interruptedClaim('before-transfer', randomAddress(), sweepStore);
    const open = await interruptedClaim({ kind: 'interrupted', status: 'submitted' }, randomAddress(), sweepStore);
    const fresh = await interruptedClaim('before-transfer', randomAddress(), sweepStore);
    parts.now = fresh.at + staleMs - 1000 + 1;
    assert.equal(await settleStaleRewards(parts.deps), 2);
    assert.deepEqual([(await rewardOf(paid.id)).status, (await rewardOf(lost.id)).status, (await rewardOf(open.id)).status, (await rewardOf(fresh.id)).status],
      ['claimed', 'issued', 'claiming', 'claiming']);
    parts.now = fresh.at + staleMs + 1;
    assert.equal(await settleStaleRewards(parts.deps), 1);
    assert.equal((await rewardOf(fresh.id)).status, 'issued');
  });
});
