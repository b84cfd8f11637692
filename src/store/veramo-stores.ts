import type { IIdentifier, IKey, ManagedKeyInfo } from '@veramo/core';
import { AbstractKeyStore, AbstractPrivateKeyStore, type ImportablePrivateKey, type ManagedPrivateKey } from '@veramo/key-manager';
import { AbstractDIDStore } from '@veramo/did-manager';
import type { Db } from './db.ts';
import type { DidKeysTable } from './schema.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Clock } from '#shared/clock.ts';

// Veramo's three stores over our Kysely tables (SQLite and PostgreSQL alike). Veramo reports a
// missing entry by throwing; its messages start with `not_found:` as its own stores' do.

function toKey(row: DidKeysTable): IKey {
  const key: IKey = { kid: row.kid, kms: row.kms, type: row.type, publicKeyHex: row.public_key_hex };
  if (row.meta_json) key.meta = JSON.parse(row.meta_json);
  return key;
}

/** Public key data of every managed key (`did_keys`). */
export class KyselyKeyStore extends AbstractKeyStore {
  readonly #db: Db;
  readonly #clock: Clock;

  constructor(db: Db, clock: Clock) {
    super();
    this.#db = db;
    this.#clock = clock;
  }

  async importKey(args: Partial<IKey>): Promise<boolean> {
    if (!args.kid || !args.kms || !args.type || !args.publicKeyHex) throw new Error('invalid_argument: kid, kms, type and publicKeyHex are required');
    await this.#db.insertInto('did_keys').values({
      kid: args.kid, kms: args.kms, type: args.type, public_key_hex: args.publicKeyHex,
      meta_json: args.meta ? JSON.stringify(args.meta) : null, created_at: this.#clock(),
    }).onConflict((oc) => oc.column('kid').doNothing()).execute();
    return true;
  }

  async getKey({ kid }: { kid: string }): Promise<IKey> {
    const row = await this.#db.selectFrom('did_keys').selectAll().where('kid', '=', kid).executeTakeFirst();
    if (!row) throw new Error(`not_found: Key not found for kid=${kid}`);
    return toKey(row);
  }

  async deleteKey({ kid }: { kid: string }): Promise<boolean> {
    const result = await this.#db.deleteFrom('did_keys').where('kid', '=', kid).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async listKeys(): Promise<ManagedKeyInfo[]> {
    const rows = await this.#db.selectFrom('did_keys').selectAll().orderBy('created_at').execute();
    return rows.map(toKey);
  }
}

/** Private keys (`did_private_keys`), sealed by the key vault. Used only by Veramo's local KMS. */
export class VaultPrivateKeyStore extends AbstractPrivateKeyStore {
  readonly #db: Db;
  readonly #vault: KeyVault;
  readonly #clock: Clock;

  constructor(db: Db, vault: KeyVault, clock: Clock) {
    super();
    this.#db = db;
    this.#vault = vault;
    this.#clock = clock;
  }

  async importKey(args: ImportablePrivateKey): Promise<ManagedPrivateKey> {
    const alias = args.alias;
    // Veramo's KMS always passes the kid as alias; a random alias would make the key unreachable.
    if (!alias) throw new Error('invalid_argument: a private key needs an alias');
    const existing = await this.#db.selectFrom('did_private_keys').selectAll().where('alias', '=', alias).executeTakeFirst();
    if (existing) {
      if (this.#vault.decrypt(existing.private_key_enc).toLowerCase() !== args.privateKeyHex.toLowerCase()) {
        throw new Error('key_already_exists: key exists with different data, please use a different alias');
      }
    } else {
      await this.#db.insertInto('did_private_keys').values({
        alias, type: args.type, private_key_enc: this.#vault.encrypt(args.privateKeyHex), created_at: this.#clock(),
      }).onConflict((oc) => oc.column('alias').doNothing()).execute();
    }
    return { alias, type: args.type, privateKeyHex: args.privateKeyHex };
  }

  async getKey({ alias }: { alias: string }): Promise<ManagedPrivateKey> {
    const row = await this.#db.selectFrom('did_private_keys').selectAll().where('alias', '=', alias).executeTakeFirst();
    if (!row) throw new Error(`not_found: PrivateKey not found for alias=${alias}`);
    return { alias: row.alias, type: row.type, privateKeyHex: this.#vault.decrypt(row.private_key_enc) };
  }

  async deleteKey({ alias }: { alias: string }): Promise<boolean> {
    const result = await this.#db.deleteFrom('did_private_keys').where('alias', '=', alias).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async listKeys(): Promise<ManagedPrivateKey[]> {
    const rows = await this.#db.selectFrom('did_private_keys').selectAll().orderBy('created_at').execute();
    return rows.map((row) => ({ alias: row.alias, type: row.type, privateKeyHex: this.#vault.decrypt(row.private_key_enc) }));
  }
}

/** DIDs (`dids`) with their keys from `did_keys`. The `role` column is ours (did-repository.ts). */
export class KyselyDidStore extends AbstractDIDStore {
  readonly #db: Db;
  readonly #clock: Clock;

  constructor(db: Db, clock: Clock) {
    super();
    this.#db = db;
    this.#clock = clock;
  }

  async importDID(args: IIdentifier): Promise<boolean> {
    const values = {
      provider: args.provider, alias: args.alias ?? null, controller_key_id: args.controllerKeyId ?? null,
      key_ids_json: JSON.stringify(args.keys.map((key) => key.kid)), services_json: JSON.stringify(args.services ?? []),
    };
    await this.#db.insertInto('dids').values({ did: args.did, ...values, role: null, created_at: this.#clock() })
      .onConflict((oc) => oc.column('did').doUpdateSet(values)).execute();
    return true;
  }

  async getDID(args: { did: string } | { alias: string }): Promise<IIdentifier> {
    let query = this.#db.selectFrom('dids').selectAll();
    query = 'did' in args ? query.where('did', '=', args.did) : query.where('alias', '=', args.alias).orderBy('created_at');
    const row = await query.executeTakeFirst();
    if (!row) throw new Error('not_found: DID not found');
    return (await this.#withKeys([row]))[0]!;
  }

  async deleteDID({ did }: { did: string }): Promise<boolean> {
    const result = await this.#db.deleteFrom('dids').where('did', '=', did).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async listDIDs(args: { alias?: string; provider?: string }): Promise<IIdentifier[]> {
    let query = this.#db.selectFrom('dids').selectAll().orderBy('created_at');
    if (args.alias !== undefined) query = query.where('alias', '=', args.alias);
    if (args.provider !== undefined) query = query.where('provider', '=', args.provider);
    return this.#withKeys(await query.execute());
  }

  async #withKeys(rows: Array<{ did: string; provider: string; alias: string | null; controller_key_id: string | null; key_ids_json: string; services_json: string }>): Promise<IIdentifier[]> {
    const kids = rows.flatMap((row) => JSON.parse(row.key_ids_json) as string[]);
    const keyRows = kids.length === 0 ? [] : await this.#db.selectFrom('did_keys').selectAll().where('kid', 'in', kids).execute();
    const keys = new Map(keyRows.map((row) => [row.kid, toKey(row)]));
    return rows.map((row) => {
      const identifier: IIdentifier = {
        did: row.did, provider: row.provider,
        keys: (JSON.parse(row.key_ids_json) as string[]).flatMap((kid) => keys.get(kid) ?? []),
        services: JSON.parse(row.services_json),
      };
      if (row.alias !== null) identifier.alias = row.alias;
      if (row.controller_key_id !== null) identifier.controllerKeyId = row.controller_key_id;
      return identifier;
    });
  }
}

/** The DID agent's three stores over our tables (did/did-agent.ts). */
export function createVeramoStores(db: Db, vault: KeyVault, clock: Clock): { keys: KyselyKeyStore; privateKeys: VaultPrivateKeyStore; dids: KyselyDidStore } {
  return { keys: new KyselyKeyStore(db, clock), privateKeys: new VaultPrivateKeyStore(db, vault, clock), dids: new KyselyDidStore(db, clock) };
}
