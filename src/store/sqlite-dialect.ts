import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { SqliteDialect, type SqliteDatabase } from 'kysely';

/**
 * Kysely's SqliteDialect speaks the better-sqlite3 interface; node:sqlite's DatabaseSync is the
 * same shape except that parameters are spread and `reader` is derived from the result columns.
 */
export function createNodeSqliteDialect(file: string): SqliteDialect {
  return new SqliteDialect({
    database: async () => {
      const db = new DatabaseSync(file);
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
      return adapt(db);
    },
  });
}

function adapt(db: DatabaseSync): SqliteDatabase {
  return {
    close: () => db.close(),
    prepare(sql) {
      const statement = db.prepare(sql);
      const params = (values: ReadonlyArray<unknown>) => values as SQLInputValue[];
      return {
        reader: statement.columns().length > 0,
        all: (values) => statement.all(...params(values)),
        run: (values) => statement.run(...params(values)),
        iterate: (values) => statement.iterate(...params(values)),
      };
    },
  };
}
