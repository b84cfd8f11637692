import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '../store/db.ts';
import { createFacilitatorKeyRepository } from '../store/facilitator-key-repository.ts';
import { createX402SettlementRepository } from '../store/x402-settlement-repository.ts';
import { ownSettlement, type AskingKey } from './settlement-status.ts';

// Who may look a settlement up (docs/x402.md "Status and receipts"): the key that settled it, or
// another key of the same store; any other resource server learns nothing, not even that it exists.

const payer = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const nonce = `0x${'ab'.repeat(32)}`;
const asset = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

describe('a settlement is read by its own store only (SQLite)', () => {
  let store: Store;
  let dataDir: string;
  let deps: Parameters<typeof ownSettlement>[0];
  const key = (id: string, tid: string | null): AskingKey => ({ id, tid });
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-x402-status-'));
    store = await openStore({ dataDir });
    const keys = createFacilitatorKeyRepository(store.db);
    const settlements = createX402SettlementRepository(store.db);
    deps = { keys, settlements };
    for (const [id, tid] of [['cafe-1', 'T1'], ['cafe-2', 'T1'], ['shop', 'T2'], ['loose-1', null], ['loose-2', null]] as const) {
      await keys.insert({ id, name: id, tid, ratePerSecond: 10, createdAt: 1, revokedAt: null, keyHash: `hash-${id}` });
    }
    const accepted = (network: string, keyId: string, at: number, n = nonce) => settlements.accept({
      id: `${network}:${asset.toLowerCase()}:${payer.toLowerCase()}:${n}`, nonce: n, network, payer, payTo: payer, asset, amount: '1000',
      validBefore: '1900000000', signature: '0x11', keyId, createdAt: at, updatedAt: at,
    });
    assert.equal(await accepted('ethereum', 'cafe-1', 100), true);
    assert.equal(await accepted('ethereum', 'loose-1', 100, `0x${'cd'.repeat(32)}`), true);
  });
  after(async () => { await store.close(); rmSync(dataDir, { recursive: true, force: true }); });

  test('the settling key and another key of its store read it; a key of another store, or of none, does not', async () => {
    for (const asking of [key('cafe-1', 'T1'), key('cafe-2', 'T1')]) {
      assert.equal((await ownSettlement(deps, payer, nonce, asking))?.keyId, 'cafe-1', asking.id);
    }
    for (const asking of [key('shop', 'T2'), key('loose-1', null), key('unknown', 'T9')]) {
      assert.equal(await ownSettlement(deps, payer, nonce, asking), undefined, asking.id);
    }
  });

  test('a key of no store reads only its own: another storeless key does not share them', async () => {
    const loose = `0x${'cd'.repeat(32)}`;
    assert.equal((await ownSettlement(deps, payer, loose, key('loose-1', null)))?.keyId, 'loose-1');
    assert.equal(await ownSettlement(deps, payer, loose, key('loose-2', null)), undefined);
    assert.equal(await ownSettlement(deps, payer, loose, key('cafe-1', 'T1')), undefined);
  });

  test('the payer in any case and the nonce in either hex case find it; anything else finds nothing', async () => {
    const asking = key('cafe-1', 'T1');
    assert.ok(await ownSettlement(deps, payer.toLowerCase(), nonce.toUpperCase().replace('0X', '0x'), asking));
    const miscased = `0x${[...payer.slice(2)].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')}`;
    assert.notEqual(miscased, payer);
    assert.ok(await ownSettlement(deps, miscased, nonce, asking), 'a payer whose letters are not in its EIP-55 case');
    for (const [p, n] of [['0x1234', nonce], [payer, '0x1234'], [payer, `${nonce}00`], [`${payer} `, nonce], ['', ''], [payer, `0x${'zz'.repeat(32)}`]]) {
      assert.equal(await ownSettlement(deps, p!, n!, asking), undefined, `${p} ${n}`);
    }
  });

  test('the same nonce on two networks: the newest the key may read', async () => {
    const other = `0x${'ef'.repeat(32)}`;
    const accepted = (network: string, keyId: string, at: number) => deps.settlements.accept({
      id: `${network}:${asset.toLowerCase()}:${payer.toLowerCase()}:${other}`, nonce: other, network, payer, payTo: payer, asset, amount: '1',
      validBefore: '1900000000', signature: '0x11', keyId, createdAt: at, updatedAt: at,
    });
    await accepted('ethereum', 'cafe-1', 200);
    await accepted('optimism', 'shop', 300);
    assert.equal((await ownSettlement(deps, payer, other, key('cafe-2', 'T1')))?.network, 'ethereum');
    assert.equal((await ownSettlement(deps, payer, other, key('shop', 'T2')))?.network, 'optimism');
  });
});
