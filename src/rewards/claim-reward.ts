import { formatTokenAmount, parseTokenAmount } from '#shared/amount.ts';
import { DomainError, isDomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { RewardRecord } from '../store/reward-repository.ts';
import type { RewardClaim } from '../pairing/session-events.ts';
import type { PosSide } from '../pairing/session-events.ts';
import type { PairedApp } from '../pairing/pairing-desk.ts';
import { resolveSettlementToken, type SettlementToken } from '../commerce/settlement-token.ts';
import type { RewardDeps } from './reward-deps.ts';
import { rewardClaimedEvent } from '../webhooks/webhook-events.ts';
import { claimOf, claimTransferPrefix, settleStaleReward, transferAttempt } from './settle-stale-reward.ts';

export interface ClaimRewardParameters {
  rewardId: string;
  /** As printed on the receipt or sent by the POS; must be the reward's amount. */
  tokenAmount: string;
  tokenSymbol?: string;
  /** The account to pay: the authenticated app user's. */
  account: string;
  /** userAddress as the request states it; must be `account` when present. */
  userAddress?: string;
  /** Only this store's rewards (a claim at its POS). */
  tid?: string;
  /** contractAddress as the request states it (outside the contract's fields); must be the reward's token when present. */
  contractAddress?: string;
}

/** A reward as it stands, an operation on it interrupted mid-run settled first (settle-stale-reward.ts). */
export async function findSettledReward(deps: RewardDeps, rewardId: string): Promise<RewardRecord | undefined> {
  const reward = await deps.rewards.findReward(rewardId);
  return reward && settleStaleReward(deps, reward);
}

/** Throws the contract's reward code for a reward that cannot be claimed now. */
function assertClaimable(reward: RewardRecord | undefined, now: number, tid?: string): asserts reward is RewardRecord {
  if (!reward || (tid !== undefined && reward.tid !== tid)) throw new DomainError('reward.not_issued', 'no such reward');
  if (reward.status === 'canceled' || reward.status === 'canceling') throw new DomainError('reward.already_canceled', 'the reward was canceled');
  if (reward.status === 'claimed' || reward.status === 'claiming') throw new DomainError('reward.already_rewarded', 'the reward was already claimed');
  if (reward.expiresAt <= now) throw new DomainError('reward.expired', 'the reward has expired');
}

/**
 * The reward's token, refused unless it is a settlement token (VIXP or allowed) and, when the
 * request names a contract, that very token.
 */
async function rewardToken(deps: RewardDeps, reward: RewardRecord, namedContract?: string): Promise<SettlementToken> {
  if (namedContract) {
    const named = await resolveSettlementToken(deps, deps.network, { contractAddress: namedContract });
    if (named.contractAddress.toLowerCase() !== reward.contractAddress.toLowerCase()) {
      throw new DomainError('request.invalid', 'contractAddress is not the reward\'s token', { details: 'contractAddress' });
    }
  }
  return resolveSettlementToken(deps, deps.network, { contractAddress: reward.contractAddress });
}

/**
 * Pays a reward once: issued -> claiming (compare-and-set) -> transfer from the store's account ->
 * claimed. A failed transfer puts it back to issued; a second claim is `reward.already_rewarded`.
 */
export async function claimReward(deps: RewardDeps, params: ClaimRewardParameters): Promise<RewardClaim> {
  if (!params.rewardId) throw new DomainError('reward.not_issued', 'reward_id is required');
  const reward = await findSettledReward(deps, params.rewardId);
  assertClaimable(reward, deps.clock(), params.tid);
  if (params.userAddress && params.userAddress.toLowerCase() !== params.account.toLowerCase()) {
    throw new DomainError('request.invalid', 'userAddress is not the app user\'s account', { details: 'userAddress' });
  }
  if (params.tokenSymbol && params.tokenSymbol !== reward.tokenSymbol) throw new DomainError('reward.bad_amount', 'tokenSymbol is not the reward\'s token');
  const token = await rewardToken(deps, reward, params.contractAddress);
  let units: bigint;
  try {
    units = parseTokenAmount(params.tokenAmount, token.decimals, 'tokenAmount');
  } catch {
    throw new DomainError('reward.bad_amount', 'tokenAmount is not a token amount');
  }
  if (units !== BigInt(reward.tokenAmount)) throw new DomainError('reward.bad_amount', 'tokenAmount is not the reward\'s amount');

  const claimingAt = deps.clock();
  if (!(await deps.rewards.transition(reward.id, 'issued', 'claiming', { userAddress: params.account }, claimingAt))) {
    assertClaimable(await deps.rewards.findReward(reward.id), deps.clock());
    throw new DomainError('reward.already_rewarded', 'the reward was claimed at the same time');
  }
  deps.faults?.at('reward-claim.after-claiming');
  const payout = await deps.wallet.transferFromCustody(deps.network, {
    fromAddress: reward.settlementAddress, toAddress: params.account, amount: formatTokenAmount(units, token.decimals),
    contractAddress: reward.contractAddress, reference: transferAttempt(claimTransferPrefix(reward.id), claimingAt).reference,
  });
  if (payout.status !== 'settled') {
    // Put back to issued only when nothing moved; an unsettled payout keeps the reward claiming.
    if (payout.status === 'refused') await deps.rewards.transition(reward.id, 'claiming', 'issued', { userAddress: null }, deps.clock());
    throw payout.error;
  }
  const { transactionId } = payout;
  deps.faults?.at('reward-claim.after-transfer');
  const now = deps.clock();
  const claim = claimOf(reward, token, params.account, transactionId);
  await deps.rewards.transition(reward.id, 'claiming', 'claimed', { claimTransactionId: transactionId, claimedAt: now }, now, rewardClaimedEvent(reward.tid, claim));
  return claim;
}

/** The POS's StartPayment START_REWARD. */
export interface ClaimAtPosRequest {
  tid: string;
  tranNo: string;
  rewardId: string;
  tokenAmount: string;
  userUuid: string;
  userAddress?: string;
  contractAddress?: string;
}

/** A reward claim at the POS: pairs with the app's DoPayment START_PAY, pays, END_REWARD to both. */
export async function claimRewardAtPos(deps: RewardDeps, store: StoreRecord, request: ClaimAtPosRequest, pos: PosSide): Promise<void> {
  if (request.tid !== store.tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
  if (!request.userUuid) throw new DomainError('request.invalid', 'user_uuid is required', { details: 'user_uuid' });
  let app: PairedApp | undefined;
  try {
    // Refuse a reward that cannot be claimed before making the app wait for it.
    const reward = await findSettledReward(deps, request.rewardId);
    assertClaimable(reward, deps.clock(), store.tid);
    await rewardToken(deps, reward, request.contractAddress);
    app = await deps.desk.takeApp(request.userUuid, deps.pairingWindowMs, pos.signal);
    const claim = await claimReward(deps, {
      rewardId: request.rewardId, tokenAmount: request.tokenAmount, account: app.userAddress, tid: store.tid,
      ...(request.userAddress && { userAddress: request.userAddress }),
      // Stryker disable next-line ObjectLiteral: equivalent (the POS's contractAddress was checked against the reward's token before pairing, and a reward's token never changes)
      ...(request.contractAddress && { contractAddress: request.contractAddress }),
    });
    pos.send({ type: 'end_reward', claim });
    app.send({ type: 'end_reward', claim });
  } catch (error) {
    const failure = isDomainError(error) ? error : new DomainError('internal', 'the reward claim failed', { cause: error });
    if (!isDomainError(error)) deps.logger.error({ err: error, tid: store.tid }, 'reward claim failed');
    if (app) app.send({ type: 'failed', error: failure, flow: 'reward', tranNo: request.tranNo });
    else deps.desk.failWaitingApp(request.userUuid, { error: failure, flow: 'reward', tranNo: request.tranNo });
    pos.send({ type: 'failed', error: failure, flow: 'reward', tranNo: request.tranNo });
  }
}
