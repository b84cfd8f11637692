import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createSettlementBatcher, type SettlementBatcherDeps } from './settlement-batcher.ts';
import type { ChainClients } from './chain-clients.ts';
import type { Lane } from './relayer-lanes.ts';
import type { RelayResult, SettlementItem } from './relay-types.ts';
import { batchBaseGas, batchItemGas } from './settlement-calldata.ts';
import type { FailpointName, Faults } from '#shared/failpoints.ts';
import { DomainError } from '#shared/errors.ts';

// When the settlement batcher sends a batch, on a chain whose blocks come at a known interval: the
// block a batch is held for, the preparation time it keeps in hand, a batch that can no longer reach
// its block held for the next one, and how many transfers one transaction may carry. The clock and
// the timers are node's mocked ones, so every moment is exact; the chain is a stand-in block schedule
// and block (settlement-batcher.test.ts drives the batcher's lanes on a real anvil, and
// test/settlement-blocks.test.ts the whole platform on an anvil mining every 2 s).

const T0 = 1_800_000_000_000;
const interval = 2_000;
const settlement: Address = '0x5e771e0000000000000000000000000000000001';
const token: Address = '0x70ce000000000000000000000000000000000002';
const accounts = [1, 2].map((n) => privateKeyToAccount(`0x${n.toString(16).padStart(64, '0')}`));
let nextNonce = 1;
const item = (extra: Partial<SettlementItem> = {}): SettlementItem => ({
  token, from: accounts[0]!.address, to: accounts[1]!.address, value: 1n, validBefore: 2n ** 40n,
  nonce: `0x${(nextNonce++).toString(16).padStart(64, '0')}`, signature: `0x${'11'.repeat(32)}${'22'.repeat(32)}1b`, ...extra,
});

beforeEach(() => { mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 }); });
afterEach(() => { mock.timers.reset(); });

/** Lets the batcher's awaited steps run (setImmediate is not mocked). */
async function flush(): Promise<void> {
  for (let i = 0; i < 30; i++) await new Promise((resolve) => setImmediate(resolve));
}
/**
 * Moves the mocked clock to `T0 + ms`, a millisecond at a time, so each timer fires at its own moment
 * and what it starts runs before the clock moves on.
 */
async function at(ms: number): Promise<void> {
  await flush();
  while (Date.now() < T0 + ms) {
    mock.timers.tick(1);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await flush();
}

interface Sent { at: number; lane: Address; nonces: readonly string[]; intent: unknown; to: Address | undefined }

/**
 * A batcher on a chain whose blocks come every `interval` ms from `T0 + phase` (not one we run), one
 * lane by default; the sender journals at once unless `hold()` was called (then the journal waits
 * until `release()`), and the waiter answers `signed` at once.
 */
function setUp(options: { lanes?: number; gasLimit?: bigint; maxItems?: number; phase?: number; blockMarginMs?: number; managed?: boolean; interval?: number } = {}) {
  let origin = T0 + (options.phase ?? 0);
  const interval = options.interval ?? 2_000;
  const aimed: { at: number; expectedAt: number | undefined }[] = [];
  const blocksAsked: unknown[] = [];
  let failBlock = 0;
  const chains = {
    ethereum: {
      managed: options.managed ?? false,
      blocks: {
        intervalMs: () => interval,
        nextBlockAt: (now: number) => origin + (Math.floor((now - origin) / interval) + 1) * interval,
        sent: (sentAt: number, expectedAt?: number) => {
          aimed.push({ at: sentAt - T0, expectedAt: expectedAt === undefined ? undefined : expectedAt - T0 });
          return () => {};
        },
      },
      client: {
        getBlock: async (args: unknown) => {
          blocksAsked.push(args);
          if (failBlock > 0) { failBlock--; throw new Error('connect ECONNREFUSED'); }
          return { gasLimit: options.gasLimit ?? 30_000_000n };
        },
      },
    },
  } as unknown as ChainClients;
  const lanes: Lane[] = accounts.slice(0, options.lanes ?? 1).map((account) => ({ account, preparing: 0, inFlight: 0 }));
  const sent: Sent[] = [];
  /** Authorizations released before their batch was journaled. */
  const released = new Set<string>();
  const gates: (() => void)[] = [];
  let holding = false;
  let journalError: Error | undefined;
  let receiptsHeld: Promise<void> | undefined;
  let answerReceipts = () => undefined as void;
  const failpoints: FailpointName[] = [];
  const faults = { at: (name: FailpointName) => { failpoints.push(name); } } as Faults;
  const sizes: number[] = [];
  const deps: SettlementBatcherDeps = {
    chains,
    lanes: async () => lanes,
    sender: {
      fees: async () => ({ maxFeePerGas: 2n, maxPriorityFeePerGas: 1n }),
      async journal(_network, account, entry, _fees, call) {
        if (holding) await new Promise<void>((resolve) => gates.push(resolve));
        if (journalError) throw journalError;
        const included = (entry.authorizationNonces ?? []).filter((nonce) => !released.has(nonce));
        if (included.length === 0) return 'released';
        sent.push({ at: Date.now() - T0, lane: account.address, nonces: included, intent: entry.intent, to: call(included).to });
        const txHash: Hex = `0x${sent.length.toString(16).padStart(64, '0')}`;
        return { id: txHash, rawTx: '0x00', txHash, included };
      },
      broadcast: async () => undefined,
    },
    waiter: {
      async finish(_network, _id, hashes): Promise<RelayResult> {
        await receiptsHeld;
        return { txHash: hashes[0]!, status: 'signed' };
      },
    },
    batch: { windowMs: 3, maxItems: options.maxItems ?? 100, ...(options.blockMarginMs !== undefined && { blockMarginMs: options.blockMarginMs }) },
    onBatch: (_network, size) => sizes.push(size),
    faults,
  };
  const batcher = createSettlementBatcher(deps);
  const answers: Promise<RelayResult>[] = [];
  return {
    batcher, lanes, sent, aimed, sizes, failpoints, blocksAsked,
    /** A transfer handed to the batcher now. */
    settle(it: SettlementItem = item(), to: Address = settlement) {
      const answer = batcher.settle('ethereum', to, it);
      answer.catch(() => undefined);
      answers.push(answer);
      return answer;
    },
    answers,
    /** The block schedule's prediction moves by `ms` (its fit of the blocks seen changed a little). */
    shift(ms: number) { origin += ms; },
    hold() { holding = true; },
    release() { holding = false; for (const open of gates.splice(0)) open(); },
    failNextBlocks(n: number) { failBlock = n; },
    released,
    failJournal(error: Error | undefined) { journalError = error; },
    /** Receipts are not answered until `answerReceipts()`. */
    holdReceipts() { receiptsHeld = new Promise<void>((resolve) => { answerReceipts = resolve; }); },
    answerReceipts() { answerReceipts(); },
  };
}

test('a batch is held for the next block it can reach: it closes 250 ms before it, and a transfer accepted meanwhile joins it', async () => {
  const chain = setUp();
  await at(100);
  const first = chain.settle();
  await at(1_000);
  const second = chain.settle();
  await at(1_749);
  assert.equal(chain.sent.length, 0, 'still open 251 ms before the block');
  await at(1_750);
  assert.deepEqual(chain.sent.map((s) => [s.at, s.nonces.length]), [[1_750, 2]]);
  assert.deepEqual(chain.aimed, [{ at: 1_750, expectedAt: 2_000 }], 'the schedule is told the block it lands in (the one it was held for, when on time)');
  assert.deepEqual((await Promise.all([first, second])).map((r) => r.status), ['signed', 'signed']);

  // 100 ms before that block is too late for it: the next batch is held for the one after.
  await at(1_900);
  chain.settle();
  await at(3_749);
  assert.equal(chain.sent.length, 1);
  await at(3_750);
  assert.deepEqual(chain.sent.map((s) => s.at), [1_750, 3_750], 'no preparation learnt: the first was journaled at once');
  assert.deepEqual(chain.aimed.at(-1), { at: 3_750, expectedAt: 4_000 });
  assert.deepEqual(chain.lanes.map((l) => [l.preparing, l.inFlight]), [[0, 0]], 'the lane is free again');
  assert.deepEqual(chain.batcher.queue(), { ethereum: 0 });
});

test('a transfer accepted exactly one window before a block\'s closing still goes in it; one later waits for the next block', async () => {
  const onTime = setUp();
  await at(1_747);
  onTime.settle();
  await at(1_750);
  assert.deepEqual(onTime.aimed, [{ at: 1_750, expectedAt: 2_000 }]);
  mock.timers.reset();
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  const late = setUp();
  await at(1_748);
  late.settle();
  await at(3_750);
  assert.deepEqual(late.aimed, [{ at: 3_750, expectedAt: 4_000 }]);
});

test('the block the previous batch was held for is not aimed at again when its prediction moves later; a block half an interval on is', async () => {
  const chain = setUp();
  await at(100);
  chain.settle();
  await at(1_750);
  // The prediction of that block moves 200 ms later: it is still the block the first batch went to.
  chain.shift(200);
  await at(1_800);
  chain.settle();
  await at(3_949);
  assert.equal(chain.sent.length, 1);
  await at(3_950);
  assert.deepEqual(chain.aimed.map((a) => a.expectedAt), [2_000, 4_200]);
  assert.deepEqual(chain.sent.map((s) => s.at), [1_750, 3_950]);

  mock.timers.reset();
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  const moved = setUp();
  await at(100);
  moved.settle();
  await at(1_750);
  // Half an interval later than the block the first batch was held for: another block.
  moved.shift(1_000);
  await at(1_800);
  moved.settle();
  await at(3_000);
  assert.deepEqual(moved.aimed.map((a) => a.expectedAt), [2_000, 3_000]);
});

test('a batch closes earlier by the slowest of the last 8 preparations, at most half a block', async () => {
  const chain = setUp();
  // The first batch takes 300 ms from closing to broadcast.
  chain.hold();
  await at(100);
  chain.settle();
  await at(2_050);
  chain.release();
  await flush();
  assert.deepEqual(chain.sent.map((s) => s.at), [2_050]);
  let block = 4_000;
  // Eight quick batches after it: the slow one is still among the last 8 each time one is opened.
  for (let n = 0; n < 8; n++) {
    await at(block - 1_900);
    chain.settle();
    await at(block - 551);
    assert.equal(chain.sent.length, n + 1, `batch ${n + 2} still open 551 ms before its block`);
    await at(block - 550);
    assert.equal(chain.sent.at(-1)?.at, block - 550, `batch ${n + 2} closes 250 + 300 ms before its block`);
    block += interval;
  }
  // A ninth: the slow one has left the last 8.
  await at(block - 1_900);
  chain.settle();
  await at(block - 251);
  assert.equal(chain.sent.length, 9);
  await at(block - 250);
  assert.equal(chain.sent.at(-1)?.at, block - 250, 'back to the margin alone');
  assert.equal(chain.aimed.at(-1)?.expectedAt, block);

  mock.timers.reset();
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  // A preparation of 1.5 s counts as half a block.
  const slow = setUp();
  slow.hold();
  await at(100);
  slow.settle();
  await at(3_250);
  slow.release();
  await flush();
  await at(4_100);
  slow.settle();
  await at(4_749);
  assert.equal(slow.sent.length, 1);
  await at(4_750);
  assert.deepEqual(slow.sent.map((s) => s.at), [3_250, 4_750]);
  assert.deepEqual(slow.aimed.at(-1), { at: 4_750, expectedAt: 6_000 });
});

test('a batch that can no longer reach its block, its lane still busy, is held for the next block and keeps filling; it never leaves before its window', async () => {
  const chain = setUp();
  chain.hold();
  await at(100);
  chain.settle();
  await at(1_750);
  // The first batch is still being journaled when the second opens, aiming at the block of 4 s.
  await at(2_100);
  chain.settle();
  // The first is journaled at 2.5 s (750 ms of preparation): the second's window has not passed.
  await at(2_500);
  chain.release();
  await flush();
  assert.deepEqual(chain.sent.map((s) => s.at), [2_500], 'the open batch waits for its window');
  // At its closing (3.75 s) 750 ms of preparation cannot reach the block of 4 s: held for 6 s, closing at 5 s.
  await at(4_000);
  chain.settle();
  await at(4_999);
  assert.equal(chain.sent.length, 1);
  await at(5_000);
  assert.deepEqual(chain.sent.map((s) => [s.at, s.nonces.length]), [[2_500, 1], [5_000, 2]]);
  assert.deepEqual(chain.aimed.map((a) => a.expectedAt), [4_000, 6_000]);

  mock.timers.reset();
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  // The lane is free only after the window passed and too late for the block: the next block.
  const busy = setUp();
  busy.hold();
  await at(100);
  busy.settle();
  await at(1_750);
  await at(1_800);
  busy.settle();
  await at(3_900);
  busy.release();
  await flush();
  assert.deepEqual(busy.sent.map((s) => s.at), [3_900], 'the first only');
  await at(4_749);
  assert.equal(busy.sent.length, 1);
  await at(4_750);
  assert.deepEqual(busy.aimed.map((a) => a.expectedAt), [6_000, 6_000]);
});

test('a transaction carries as many transfers as 90% of the block gas limit holds, at least one; the block is asked once', async () => {
  // 90% of 777,780 is 700,002: the base (60,000) and 3 items (175,000 each), not 4.
  assert.equal((777_780n * 9n) / 10n, 700_002n);
  assert.equal(batchBaseGas + 3n * batchItemGas <= 700_002n && batchBaseGas + 4n * batchItemGas > 700_002n, true);
  const chain = setUp({ gasLimit: 777_780n, managed: true });
  await at(0);
  chain.settle(); chain.settle();
  await flush();
  assert.equal(chain.sent.length, 0);
  chain.settle();
  await flush();
  assert.deepEqual(chain.sent.map((s) => [s.at, s.nonces.length]), [[0, 3]], 'full at 3: sent at once');
  assert.deepEqual(chain.blocksAsked, [{ blockTag: 'latest' }]);

  const tiny = setUp({ gasLimit: 100_000n, managed: true });
  tiny.settle();
  await flush();
  assert.deepEqual(tiny.sent.map((s) => [s.nonces.length, s.to]), [[1, token]], 'a block that holds none still carries one transfer, to its token');

  const setting = setUp({ maxItems: 2, managed: true });
  setting.settle(); setting.settle();
  await flush();
  assert.deepEqual(setting.sent.map((s) => [s.nonces.length, s.to]), [[2, settlement]], 'the setting when the block holds more');
});

test('a node that cannot say its block gas limit: the transfer is refused chain.unavailable, and the next one asks again', async () => {
  const chain = setUp({ managed: true });
  chain.failNextBlocks(1);
  await assert.rejects(chain.settle(), (error: unknown) => error instanceof DomainError && error.code === 'chain.unavailable'
    && error.message === 'network ethereum does not answer (Error: connect ECONNREFUSED)');
  assert.deepEqual(chain.batcher.queue(), {}, 'nothing queued');
  const answer = chain.settle();
  await at(10);
  assert.equal((await answer).status, 'signed');
  assert.equal(chain.blocksAsked.length, 2);
});

test('a full batch with every lane busy goes on the lane with the fewest batches in flight; so does a contract account\'s transfer', async () => {
  const chain = setUp({ lanes: 2, maxItems: 1, managed: true });
  const [a, b] = chain.lanes as [Lane, Lane];
  a.preparing = 1; a.inFlight = 2;
  b.preparing = 1; b.inFlight = 1;
  chain.settle();
  await flush();
  assert.deepEqual(chain.sent.map((s) => s.lane), [b.account.address]);
  b.inFlight = 3;
  chain.settle(item({ alone: true }));
  await flush();
  assert.deepEqual(chain.sent.map((s) => s.lane), [b.account.address, a.account.address]);
  assert.deepEqual([a.preparing, a.inFlight, b.preparing, b.inFlight], [1, 2, 1, 3], 'each lane back where it was');
  a.inFlight = 3;
  chain.settle();
  await flush();
  assert.equal(chain.sent.at(-1)?.lane, a.account.address, 'as busy as each other: the first lane');
});

test('each batch is journaled as a settlement of its contract between the relay failpoints, counted, and one network has one settlement contract', async () => {
  const chain = setUp({ managed: true });
  chain.settle();
  const other = chain.settle(item(), '0x5e771e0000000000000000000000000000000009');
  await assert.rejects(other, /^Error: one network has one settlement contract$/);
  chain.settle();
  await at(3);
  assert.deepEqual(chain.sent.map((s) => [s.intent, s.to]), [[{ kind: 'settlement', contractAddress: settlement }, settlement]]);
  assert.deepEqual(chain.failpoints, ['relay.before-journal', 'relay.after-journal', 'relay.after-broadcast']);
  assert.deepEqual(chain.sizes, [2]);
  assert.deepEqual(chain.aimed, [{ at: 3, expectedAt: undefined }], 'a chain we run: no block aimed at');
});

test('a batch whose lane took 250 ms to prepare the last one cannot reach a block 250 ms away: it is held for the next', async () => {
  const chain = setUp();
  chain.hold();
  await at(100);
  chain.settle();
  await at(1_750);
  await at(1_800);
  chain.settle();
  await at(2_000);
  chain.release();
  await flush();
  await at(3_750);
  assert.deepEqual(chain.sent.map((s) => s.at), [2_000], '3.75 s + 250 ms is 125 ms past the closing margin of the block of 4 s');
  await at(5_499);
  assert.equal(chain.sent.length, 1);
  await at(5_500);
  assert.deepEqual(chain.aimed.map((a) => a.expectedAt), [4_000, 6_000]);

  mock.timers.reset();
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  // The lane is free at 4.6 s with a second's preparation: the block of 6 s is still reachable. The
  // first batch, broadcast at 4.6 s, lands in it too: on 2 s blocks (longer than the margin and the
  // preparation) a late batch is the exception, and shares the block rather than delay the next.
  const late = setUp();
  late.hold();
  await at(100);
  late.settle();
  await at(1_750);
  await at(1_800);
  late.settle();
  await at(4_600);
  late.release();
  await flush();
  await at(4_750);
  assert.deepEqual(late.sent.map((s) => s.at), [4_600, 4_750]);
  assert.deepEqual(late.aimed.map((a) => a.expectedAt), [6_000, 6_000]);
});

test('while a batch waits for its receipt its lane takes the next batch; a batch the journal refuses answers its transfers with that error and frees the lane', async () => {
  const chain = setUp({ managed: true });
  chain.holdReceipts();
  const first = chain.settle();
  await at(3);
  const second = chain.settle();
  await at(6);
  assert.deepEqual(chain.sent.map((s) => [s.at, s.lane]), [[3, accounts[0]!.address], [6, accounts[0]!.address]], 'one lane, two batches in flight');
  assert.deepEqual(chain.lanes.map((l) => [l.preparing, l.inFlight]), [[0, 2]]);
  chain.answerReceipts();
  assert.deepEqual((await Promise.all([first, second])).map((r) => r.status), ['signed', 'signed']);

  const refusal = new Error('SQLITE_BUSY: database is locked');
  chain.failJournal(refusal);
  const refused = [chain.settle(), chain.settle()];
  await at(10);
  for (const answer of refused) await assert.rejects(answer, (error: unknown) => error === refusal);
  assert.deepEqual(chain.lanes.map((l) => [l.preparing, l.inFlight]), [[0, 0]], 'the lane is free again');
  chain.failJournal(undefined);
  const after = chain.settle();
  await at(14);
  assert.equal((await after).status, 'signed');
  assert.equal(chain.sent.length, 3);
});

test('a transfer whose authorization was released before its batch was journaled is refused, the rest of its batch sent', async () => {
  const chain = setUp({ managed: true });
  const [kept, gone] = [item(), item()];
  chain.released.add(gone.nonce);
  const answers = [chain.settle(kept), chain.settle(gone)];
  await at(3);
  assert.equal((await answers[0])?.status, 'signed');
  await assert.rejects(answers[1]!, (error: unknown) => error instanceof DomainError && error.code === 'chain.transaction_failed'
    && error.message === 'the transfer authorization was released before it was sent');
  assert.deepEqual(chain.sent.map((s) => s.nonces), [[kept.nonce]]);
  assert.deepEqual(chain.sizes, [1]);
});

test('0.45 s blocks, shorter than margin and preparation: a batch prepared before the block the previous broadcast lands in waits for that block, and the next aims past it', async () => {
  // Blocks every 450 ms from T0. The first batch, held for the block of 450 ms, takes 220 ms to
  // prepare and is broadcast at 420 ms: within 100 ms of that block, it lands there or in the block
  // of 900 ms, and takes the later.
  const chain = setUp({ interval: 450, lanes: 2 });
  chain.hold();
  await at(10);
  chain.settle();
  await at(210);
  chain.settle();
  await at(420);
  chain.release();
  await flush();
  assert.deepEqual(chain.aimed, [{ at: 420, expectedAt: 900 }]);
  // The second, held for 900 ms, can no longer reach it with 220 ms of preparation at its closing
  // (650 ms): held for 1,350 ms, it closes at 880 ms, prepared at once on the other lane, and waits
  // until a tenth of a block past 900 ms before its broadcast.
  await at(944);
  assert.equal(chain.aimed.length, 1, 'not broadcast into the block the first one takes');
  await at(945);
  assert.deepEqual(chain.aimed.map((a) => a.at), [420, 945]);
  assert.deepEqual(chain.sent.map((s) => s.at), [420, 880], 'journaled at its closing');

  // The third, opened at 960 ms, aims at 1,800 ms (the second takes 1,350 ms), closing at 1,330 ms:
  // broadcast then it would join the second in the block of 1,350 ms, so it waits until 1,395 ms.
  await at(960);
  chain.settle();
  await at(1_394);
  assert.equal(chain.aimed.length, 2);
  await at(1_395);
  assert.deepEqual(chain.aimed.at(-1), { at: 1_395, expectedAt: 1_800 });
});

test('a batch that leaves full gives back the later block it was held for: the next one aims at the block after the one the full batches land in', async () => {
  // Blocks every 2 s from T0, batches of two. The second full batch opened aiming at 4 s (2 s was the
  // first one's) and left at once, into the block of 2 s: the batch after it aims at 4 s, not 6 s.
  const chain = setUp({ lanes: 2, maxItems: 2 });
  await at(100);
  chain.settle();
  chain.settle();
  await at(200);
  chain.settle();
  chain.settle();
  await at(300);
  assert.deepEqual(chain.sent.map((s) => [s.at, s.nonces.length]), [[100, 2], [200, 2]]);
  chain.settle();
  await at(3_750);
  assert.deepEqual(chain.sent.map((s) => s.at), [100, 200, 3_750]);
  assert.equal(chain.aimed.at(-1)?.expectedAt, 4_000);
});
