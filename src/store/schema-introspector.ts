import { PostgresIntrospector, sql, type DatabaseIntrospector, type DatabaseMetadataOptions, type Kysely, type TableMetadata } from 'kysely';

interface ColumnRow {
  schema: string; table: string; kind: string; column: string; type: string; type_schema: string;
  not_null: boolean; has_default: boolean; auto_incrementing: string | null; description: string | null;
}

/**
 * Kysely's PostgreSQL introspection confined to the connection's own schema (`current_schema()`,
 * the search_path's first), which is all the migrator asks about. Kysely's own reads every table of
 * every schema in the database and looks each schema up by name, so another tenant of the database
 * dropping a schema at that moment failed this platform's start with "schema … does not exist".
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<any>;
  readonly #schemas: PostgresIntrospector;

  constructor(db: Kysely<any>) {
    this.#db = db;
    this.#schemas = new PostgresIntrospector(db);
  }

  /** Every schema's name (pg_namespace alone: no lookup that another schema's drop can fail). */
  getSchemas() {
    return this.#schemas.getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select ns.nspname as schema, c.relname as table, c.relkind as kind, a.attname as column, typ.typname as type, tns.nspname as type_schema,
        a.attnotnull as not_null, a.atthasdef as has_default, col_description(a.attrelid, a.attnum) as description,
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as auto_incrementing
      from pg_catalog.pg_namespace ns
        join pg_catalog.pg_class c on c.relnamespace = ns.oid
        join pg_catalog.pg_attribute a on a.attrelid = c.oid
        join pg_catalog.pg_type typ on typ.oid = a.atttypid
        join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum >= 0 and not a.attisdropped
        and (${options.withInternalKyselyTables} or c.relname not in ('kysely_migration', 'kysely_migration_lock'))
      order by c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, { name: string; schema: string; isView: boolean; columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      let table = tables.get(row.table);
      if (!table) tables.set(row.table, table = { name: row.table, schema: row.schema, isView: row.kind === 'v', columns: [] });
      table.columns.push({
        name: row.column, dataType: row.type, dataTypeSchema: row.type_schema, isNullable: !row.not_null,
        hasDefaultValue: row.has_default, isAutoIncrementing: row.auto_incrementing !== null, comment: row.description ?? undefined,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions) {
    return { tables: await this.getTables(options) };
  }
}
