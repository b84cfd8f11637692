import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from '../store/db.ts';
import { createFacilitatorKeyRepository, type FacilitatorKeyRepository } from '../store/facilitator-key-repository.ts';
import { createX402SettlementRepository, type X402SettlementRecord, type X402SettlementRepository } from '../store/x402-settlement-repository.ts';
import { createLogger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';
import { finishSettlement, issueReceipt } from './finish-settlement.ts';

// How an accepted x402 settlement is ended: the row, its webhook event for the key's store in the
// same transaction, the outcome counted once, and a settled one's receipt (docs/x402.md "Events").
// The real settlement and facilitator-key repositories and webhook table on SQLite; the receipts are
// a recorder of the ids asked for (their issuing is the receipts' own tests).

const factory = storeFactories.find((f) => f.name === 'sqlite')!;
let store: Store;
let dispose: () => Promise<void>;
let settlements: X402SettlementRepository;
let keys: FacilitatorKeyRepository;
before(async () => {
  ({ store, dispose } = await factory.open());
  settlements = createX402SettlementRepository(store.db);
  keys = createFacilitatorKeyRepository(store.db);
  await keys.insert({ id: 'store-key', name: 'shop', tid: 'T-shop', ratePerSecond: 10, createdAt: 1, revokedAt: null, keyHash: 'h1' });
  await keys.insert({ id: 'bare-key', name: 'bare', tid: null, ratePerSecond: 10, createdAt: 1, revokedAt: null, keyHash: 'h2' });
});
after(async () => { await dispose?.(); });

const chains = { ethereum: { chainId: 31337 }, optimism: { chainId: 10 }, bnb: { chainId: 56 }, opbnb: { chainId: 204 } } as never;
const payer = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const txHash = `0x${'cd'.repeat(32)}`;

function harness(o: { failingReceipts?: boolean; noReceipts?: boolean } = {}) {
  const outcomes: Array<[NetworkName, string]> = [];
  const issued: string[] = [];
  const logs = new PassThrough();
  const lines: string[] = [];
  logs.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const receipts = {
    issue: async (id: string) => {
      issued.push(id);
      if (o.failingReceipts) throw new Error('DID key store unavailable');
    },
    missing: async () => [], find: async () => undefined,
  };
  const deps = {
    settlements, keys, chains, clock: () => 5_000, logger: createLogger('warn', logs),
    onOutcome: (network: NetworkName, status: string) => { outcomes.push([network, status]); },
    ...(!o.noReceipts && { receipts }),
  };
  return { deps, outcomes, issued, lines };
}

async function accepted(n: number, keyId: string, network = 'ethereum'): Promise<X402SettlementRecord> {
  const nonce = `0x${n.toString(16).padStart(64, '0')}`;
  const id = `${network}:a:${payer}:${nonce}`;
  await settlements.accept({
    id, nonce, network, payer, payTo: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', asset: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
    amount: '1000', validBefore: '1900000000', signature: '0x11', keyId, createdAt: 1, updatedAt: 1,
  });
  return (await settlements.find(id))!;
}

const eventsOf = async (nonce: string) => (await store.db.selectFrom('webhook_events').select(['type', 'tid', 'data', 'created_at']).execute())
  .map((e) => ({ type: e.type, tid: e.tid, data: JSON.parse(e.data) as Record<string, unknown>, at: Number(e.created_at) }))
  .filter((e) => e.data.nonce === nonce);

test('a settled settlement of a store\'s key: the row settled, its x402.settled event for that store, counted once, its receipt issued', async () => {
  const { deps, outcomes, issued } = harness();
  const record = await accepted(1, 'store-key', 'optimism');
  await finishSettlement(deps, record, { status: 'settled', txHash });
  const row = await settlements.find(record.id);
  assert.deepEqual([row?.status, row?.txHash, row?.updatedAt], ['settled', txHash, 5_000]);
  const events = await eventsOf(record.nonce);
  assert.equal(events.length, 1);
  assert.deepEqual([events[0]?.type, events[0]?.tid, events[0]?.data.network, events[0]?.data.transaction, events[0]?.at], ['x402.settled', 'T-shop', 'eip155:10', txHash, 5_000]);
  assert.deepEqual(outcomes, [['optimism', 'settled']]);
  assert.deepEqual(issued, [record.id]);

  // Ended again (another caller, later): nothing changes, nothing counted; the receipt is asked for again (kept once issued).
  await finishSettlement(deps, record, { status: 'failed', errorReason: 'late' });
  assert.equal((await settlements.find(record.id))?.status, 'settled');
  assert.equal((await eventsOf(record.nonce)).length, 1);
  assert.deepEqual(outcomes, [['optimism', 'settled']]);
  assert.deepEqual(issued, [record.id]);
});

test('a failed settlement: the row failed with its reason and transaction, x402.failed for the store, counted, no receipt', async () => {
  const { deps, outcomes, issued } = harness();
  const record = await accepted(2, 'store-key');
  await finishSettlement(deps, record, { status: 'failed', errorReason: 'insufficient_funds', txHash });
  const row = await settlements.find(record.id);
  assert.deepEqual([row?.status, row?.errorReason, row?.txHash], ['failed', 'insufficient_funds', txHash]);
  const events = await eventsOf(record.nonce);
  assert.deepEqual(events.map((e) => [e.type, e.tid, e.data.error_reason, e.data.network]), [['x402.failed', 'T-shop', 'insufficient_funds', 'eip155:31337']]);
  assert.deepEqual(outcomes, [['ethereum', 'failed']]);
  assert.deepEqual(issued, []);
});

test('a key of no store, or one no longer there: the settlement ends without an event', async () => {
  const { deps, outcomes, issued } = harness();
  const bare = await accepted(3, 'bare-key');
  await finishSettlement(deps, bare, { status: 'settled', txHash });
  const gone = await accepted(4, 'deleted-key');
  await finishSettlement(deps, gone, { status: 'failed', errorReason: 'x' });
  assert.equal((await settlements.find(bare.id))?.status, 'settled');
  assert.equal((await settlements.find(gone.id))?.status, 'failed');
  assert.deepEqual([...await eventsOf(bare.nonce), ...await eventsOf(gone.nonce)], []);
  assert.deepEqual(outcomes, [['ethereum', 'settled'], ['ethereum', 'failed']]);
  assert.deepEqual(issued, [bare.id]);
});

test('a receipt that cannot be issued now never fails the settlement: a warning names it for the sweep', async () => {
  const { deps, issued, lines } = harness({ failingReceipts: true });
  const record = await accepted(5, 'bare-key');
  await finishSettlement(deps, record, { status: 'settled', txHash });
  assert.equal((await settlements.find(record.id))?.status, 'settled');
  assert.deepEqual(issued, [record.id]);
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(line.msg, 'x402 receipt not issued yet; the sweep issues it');
  assert.equal(line.settlement, record.id);
  assert.match(String(line.reason), /DID key store unavailable/);

  const without = harness({ noReceipts: true });
  await issueReceipt(without.deps, record.id);
  assert.deepEqual(without.lines, [], 'no receipts configured: nothing to issue, nothing logged');
});
