import { PostgresDialect, type DatabaseConnection, type DatabaseIntrospector, type Driver, type Kysely, type PostgresDialectConfig } from 'kysely';
import { CurrentSchemaIntrospector } from './schema-introspector.ts';
import { DomainError } from '#shared/errors.ts';

/**
 * SQLSTATE classes and codes of a PostgreSQL that is gone or not taking connections: connection
 * exceptions (08), the server shutting down or starting up (57P01–57P03), too many connections.
 */
const unavailableStates = /^(08...|57P0[1-3]|53300)$/;
/** Node socket errors of a connection that could not be made or was cut. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** pg's own messages for a connection lost under a query or refused by the pool. */
const lostConnection = /Connection terminated|connection error|Client was closed|timeout exceeded when trying to connect/i;

/** `store.unavailable` for an error that says PostgreSQL does not answer (the cause kept); undefined otherwise. */
export function postgresUnavailable(error: unknown): DomainError | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  const unavailable = (typeof code === 'string' && (unavailableStates.test(code) || socketCodes.has(code))) || lostConnection.test(error.message);
  return unavailable ? new DomainError('store.unavailable', 'the database does not answer', { cause: error }) : undefined;
}

async function mapped<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw postgresUnavailable(error) ?? error;
  }
}

/** The connection with its queries' loss of the server turned into `store.unavailable`. */
function mappedConnection(connection: DatabaseConnection): DatabaseConnection {
  return new Proxy(connection, {
    get(target, property) {
      if (property === 'executeQuery') return (query: Parameters<DatabaseConnection['executeQuery']>[0]) => mapped(() => target.executeQuery(query));
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Kysely's PostgreSQL dialect whose every failure to reach the server (no connection, a connection
 * cut mid-query, a server shutting down) is the typed `store.unavailable`, so that each transport
 * answers it as "unavailable, retry" rather than as an internal error. Other errors pass as they are.
 * Its introspection (what Kysely's migrator reads) sees the connection's own schema only.
 */
export class AvailabilityMappedPostgresDialect extends PostgresDialect {
  constructor(config: PostgresDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    return new Proxy(driver, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== 'function') return value;
        if (property === 'acquireConnection') return () => mapped(() => target.acquireConnection()).then(mappedConnection);
        return value.bind(target);
      },
    });
  }

  /** The migrator's look at the database, confined to this platform's own schema. */
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
