import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Migrator, sql } from 'kysely';
import { storeFactories } from '../../test/support/store-factories.ts';
import { migrations } from './migrations/index.ts';
import { createX402SettlementRepository } from './x402-settlement-repository.ts';

const nonce = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const row = (n: number, validBefore: bigint | string) => ({
  nonce: nonce(n), network: 'ethereum', payer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', pay_to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3', amount: '1000', valid_before: validBefore, signature: '0x11', key_id: 'k',
  status: 'accepted', tx_hash: null, error_reason: null, created_at: n, updated_at: n,
});

for (const factory of storeFactories) {
  describe(`x402 settlements keep validBefore exactly (${factory.name})`, () => {
    test('any uint256 is stored and read back as signed; rows of the bigint column survive migration 0021 with their value', async () => {
      const { store, dispose } = await factory.open();
      try {
        const repository = createX402SettlementRepository(store.db);
        for (const [i, value] of [2n ** 53n + 1n, 99999999999999999999n, 2n ** 256n - 1n].entries()) {
          const record = {
            id: `ethereum:a:p:${nonce(100 + i)}`, nonce: nonce(100 + i), network: 'ethereum', payer: 'p', payTo: 't', asset: 'a', amount: '1', validBefore: value.toString(),
            signature: '0x11', keyId: 'k', createdAt: 1, updatedAt: 1,
          };
          assert.equal(await repository.accept(record), true);
          assert.equal((await repository.find(record.id))?.validBefore, value.toString());
        }
        // Back to the schema before 0021 (its bigint column), a row written there, and up again.
        const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrations }, ...(store.dialect === 'postgres' && {
          migrationTableSchema: (await sql<{ schema: string }>`select current_schema() as schema`.execute(store.db)).rows[0]?.schema,
        }) });
        await sql`delete from x402_settlements`.execute(store.db);
        const down = await migrator.migrateTo('0020-x402-statement-lines');
        assert.equal(down.error, undefined);
        await store.db.insertInto('x402_settlements').values([row(1, 2n ** 53n + 1n), row(2, 1_900_000_000n)] as never).execute();
        const up = await migrator.migrateToLatest();
        assert.equal(up.error, undefined);
        assert.deepEqual((await repository.listAccepted(10, 10)).map((r) => r.validBefore), ['9007199254740993', '1900000000']);
      } finally {
        await dispose();
      }
    });
  });
}
