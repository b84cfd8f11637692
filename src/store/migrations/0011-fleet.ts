import type { Kysely } from 'kysely';

// Many instances on one database (docs/operations.md "Many instances"):
// - `fleet`: what every instance must share, as sha256 fingerprints (never the secret): the master
//   key, the relayer address, the JWT key set. The first instance writes each; a later one with
//   another value refuses to start (src/fleet/fleet-check.ts). Also `fleet_id`: a random id the first
//   instance writes, naming the fleet's keys outside the database (its login throttle in Redis).
// - `jwt_signing_keys`: the access-token signing keys, private JWK sealed with the master key. The
//   newest key not retired signs; a retired key verifies until `verify_until` (ms).
// - `payments.run_by`: the instance (pairing desk id) running a payment attempt, so that a POS retry
//   of a payment left pending by an instance that died settles it at once instead of answering 13.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fleet')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('jwt_signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('private_jwk_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .addColumn('verify_until', 'bigint')
    .execute();
  await db.schema.alterTable('payments').addColumn('run_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payments').dropColumn('run_by').execute();
  await db.schema.dropTable('jwt_signing_keys').ifExists().execute();
  await db.schema.dropTable('fleet').ifExists().execute();
}
