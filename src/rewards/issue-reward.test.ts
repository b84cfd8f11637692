import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import { issueReward } from './issue-reward.ts';
import { lifetimeMs, openRewardParts, usdx, vixp, type RewardParts } from '../../test/support/reward-parts.ts';

// IssueReward as a store sees it (docs/interfaces.md, reward codes 01-05): a reward per (tid,
// reason), funded by the store's settlement account, its reward.issued webhook, once per tran_no.
// A real SQLite store and repositories; the chain's balances are the stand-in's (test/support/reward-parts.ts).

/** A refusal as a store reads it: its code, message and the field it names (`answered` when there is none). */
const refusal = async (promise: Promise<unknown>): Promise<{ code: string; message: string; details: string | undefined }> => {
  try { await promise; } catch (error) {
    if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  return { code: 'answered', message: '', details: undefined };
};

describe('IssueReward', () => {
  let parts: RewardParts;
  let shop: StoreRecord;
  let n = 0;
  const reason = () => `receipt-${++n}`;
  before(async () => { parts = await openRewardParts(); shop = await parts.newStore('1000'); });
  after(async () => { await parts.dispose(); });

  test('a reward of the currency amount at the notice in force, stored issued, with its reward.issued webhook', async () => {
    const store = await parts.newStore('100');
    const issued = await issueReward(parts.deps, store, { tid: store.tid, rewardReason: '  receipt 42  ', exchangeAmount: '2500.0' });
    assert.match(issued.rewardId, /^[0-9A-F]{24}$/);
    assert.deepEqual({ ...issued, rewardId: '' }, {
      rewardId: '', rewardDate: '20261128120000', contractAddress: vixp, tokenSymbol: 'VIXP', tokenAmount: '2.5',
      exchangeDateIndex: '2026112800001', exchangeRate: '1000', exchangeAmount: '2500',
    });
    const stored = await parts.deps.rewards.findReward(issued.rewardId);
    assert.deepEqual(stored, {
      id: issued.rewardId, tid: store.tid, rewardReason: 'receipt 42', network: 'ethereum', settlementAddress: store.settlementAddress,
      contractAddress: vixp, tokenSymbol: 'VIXP', tokenAmount: '2500000000000000000', exchangeAmount: '2500', exchangeCurrency: 'KRW',
      exchangeRate: '1000', exchangeDateIndex: '2026112800001', rewardDate: '20261128120000', expiresAt: parts.now + lifetimeMs,
      status: 'issued', userAddress: null, claimTransactionId: null, claimedAt: null, cancelNo: null, cancelDate: null, cancelTransactionId: null,
      createdAt: parts.now, updatedAt: parts.now,
    });
    assert.deepEqual(await parts.eventsOf(store.tid), [{
      type: 'reward.issued',
      data: {
        tid: store.tid, reward_id: issued.rewardId, reward_reason: 'receipt 42', reward_date: '20261128120000', contract_address: vixp,
        token_symbol: 'VIXP', token_amount: '2.5', exchange_date_index: '2026112800001', exchange_rate: '1000', exchange_amount: '2500',
        exchange_currency: 'KRW', res_code: '00', res_message: 'Success',
      },
    }]);
    assert.equal(parts.chain.calls.length, 0, 'nothing moves until the reward is claimed');
  });

  test('in another currency: that currency\'s notice', async () => {
    const issued = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: reason(), exchangeAmount: '3', exchangeCurrency: 'USD' });
    assert.equal(issued.tokenAmount, '6');
    assert.equal(issued.exchangeRate, '0.5');
    assert.equal((await parts.deps.rewards.findReward(issued.rewardId))?.exchangeCurrency, 'USD');
  });

  test('in an allowed token: its own notice for the currency, its own decimals; no notice for it is 17 whatever VIXP\'s say', async () => {
    const store = await parts.newStore('10');
    parts.chain.mint(store.settlementAddress, 10_867_596n, usdx);
    // 15000 KRW at 1380.25 KRW per USDX = 10.867596449…: rounded down to the 6th decimal.
    const issued = await issueReward(parts.deps, store, { tid: store.tid, rewardReason: reason(), exchangeAmount: '15000', contractAddress: usdx });
    assert.deepEqual([issued.contractAddress, issued.tokenSymbol, issued.tokenAmount, issued.exchangeRate, issued.exchangeDateIndex], [usdx, 'USDX', '10.867596', '1380.25', '2026112800002']);
    assert.equal((await parts.deps.rewards.findReward(issued.rewardId))?.tokenAmount, '10867596');
    assert.equal((await issueReward(parts.deps, store, { tid: store.tid, rewardReason: reason(), exchangeAmount: '1', tokenSymbol: 'USDX' })).tokenAmount, '0.000724');
    assert.equal((await refusal(issueReward(parts.deps, store, { tid: store.tid, rewardReason: reason(), exchangeAmount: '1', exchangeCurrency: 'USD', contractAddress: usdx }))).code, 'payment.no_rate_notice');
    const why = reason();
    await issueReward(parts.deps, store, { tid: store.tid, rewardReason: why, exchangeAmount: '5' });
    assert.equal((await refusal(issueReward(parts.deps, store, { tid: store.tid, rewardReason: why, exchangeAmount: '5', contractAddress: usdx }))).code, 'reward.already_rewarded', 'the same reason in another token');
  });

  test('the same reason again answers the first reward; another amount or currency is 05; nothing else is stored', async () => {
    const why = reason();
    const first = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '5' });
    parts.now += 1000;
    assert.deepEqual(await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: ` ${why}`, exchangeAmount: '5.00' }), first);
    assert.deepEqual(await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '7' })),
      { code: 'reward.already_rewarded', message: 'this store already issued a reward for this rewardReason', details: undefined });
    assert.equal((await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '5', exchangeCurrency: 'USD' }))).code, 'reward.already_rewarded');
    const events = (await parts.eventsOf(shop.tid)).filter((event) => event.data.reward_reason === why);
    assert.equal(events.length, 1, 'one reward.issued');
  });

  test('another store\'s tid is refused; the reason is required, at most 256 characters after trimming', async () => {
    assert.deepEqual(await refusal(issueReward(parts.deps, shop, { tid: 'T-other', rewardReason: reason(), exchangeAmount: '1' })),
      { code: 'request.unauthorized', message: 'tid is not the store of this API key', details: 'tid' });
    const invalid = { code: 'request.invalid', message: 'rewardReason is required (at most 256 characters)', details: 'rewardReason' };
    assert.deepEqual(await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: '   ', exchangeAmount: '1' })), invalid);
    assert.deepEqual(await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: undefined as unknown as string, exchangeAmount: '1' })), invalid);
    assert.deepEqual(await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: 'x'.repeat(257), exchangeAmount: '1' })), invalid);
    const longest = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: ` ${'y'.repeat(256)} `, exchangeAmount: '1' });
    assert.equal((await parts.deps.rewards.findReward(longest.rewardId))?.rewardReason, 'y'.repeat(256));
    assert.equal((await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: 'z', exchangeAmount: '1' })).tokenAmount, '0.001');
  });

  test('an amount that is not a positive decimal is 04', async () => {
    for (const exchangeAmount of ['-3', 'abc', '', '0']) {
      const answer = await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: reason(), exchangeAmount }));
      assert.deepEqual(answer, { code: 'reward.bad_amount', message: 'exchangeAmount must be a positive decimal string', details: undefined }, exchangeAmount);
    }
    // What the log of the refusal carries: the decimal check's own refusal, naming the field.
    const error = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: reason(), exchangeAmount: '-3' }).catch((e: unknown) => e);
    assert.ok(error instanceof DomainError && error.cause instanceof DomainError);
    assert.deepEqual([error.cause.code, error.cause.details], ['request.invalid', 'exchangeAmount']);
  });

  test('the store\'s account must hold the reward: exactly enough is issued, one unit less is refused', async () => {
    const store = await parts.newStore('0');
    parts.chain.mint(store.settlementAddress, 10n ** 18n - 1n);
    assert.deepEqual(await refusal(issueReward(parts.deps, store, { tid: store.tid, rewardReason: 'r1', exchangeAmount: '1000' })),
      { code: 'wallet.insufficient_balance', message: 'the store\'s account cannot fund this reward', details: undefined });
    parts.chain.mint(store.settlementAddress, 1n);
    assert.equal((await issueReward(parts.deps, store, { tid: store.tid, rewardReason: 'r1', exchangeAmount: '1000' })).tokenAmount, '1');
    // Another token's balance does not fund a VIXP reward.
    const other = await parts.newStore('0');
    parts.chain.mint(other.settlementAddress, 10n ** 30n, usdx);
    assert.equal((await refusal(issueReward(parts.deps, other, { tid: other.tid, rewardReason: 'r1', exchangeAmount: '1' }))).code, 'wallet.insufficient_balance');
  });

  test('once per tran_no: a retry answers the first reward, other parameters are 11, per store and per call', async () => {
    const why = reason();
    const first = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '10', tranNo: 'I-1' });
    assert.deepEqual(await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '10', tranNo: 'I-1' }), first);
    assert.deepEqual(await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: reason(), exchangeAmount: '10', tranNo: 'I-1' })),
      { code: 'request.invalid', message: 'tran_no I-1 was already used for another issueReward request', details: 'tran_no' });
    const other = await parts.newStore('10');
    assert.equal((await issueReward(parts.deps, other, { tid: other.tid, rewardReason: 'another', exchangeAmount: '10', tranNo: 'I-1' })).tokenAmount, '0.01');
    const keys = await parts.store.db.selectFrom('idempotency_keys').select(['scope', 'state']).where('idem_key', '=', 'I-1').orderBy('scope').execute();
    assert.deepEqual(keys.map((k) => k.scope).sort(), [`pos:${other.tid}:issueReward`, `pos:${shop.tid}:issueReward`].sort());
  });

  test('an issue interrupted mid-run (it moved nothing) runs again under its tran_no once stale', async () => {
    const why = reason();
    const { getBalance } = parts.deps.wallet;
    parts.deps.wallet.getBalance = async () => { throw new Error('the node went away'); };
    try {
      await assert.rejects(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '10', tranNo: 'I-2' }), /the node went away/);
    } finally { parts.deps.wallet.getBalance = getBalance; }
    assert.equal((await refusal(issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '10', tranNo: 'I-2' }))).code, 'payment.in_progress');
    parts.now += 60_001;
    const issued = await issueReward(parts.deps, shop, { tid: shop.tid, rewardReason: why, exchangeAmount: '10', tranNo: 'I-2' });
    assert.equal((await parts.deps.rewards.findReward(issued.rewardId))?.rewardReason, why);
  });
});
