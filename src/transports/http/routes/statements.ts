import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../../../store/merchant-repository.ts';
import type { StatementService } from '../../../statements/statement-service.ts';
import type { OpenStatement } from '../../../statements/statement.ts';
import { batched, statementCsv, statementJson } from '../../../statements/statement-render.ts';
import { posApiKey, zodRoute, parsed } from '../route-schema.ts';

export interface StatementRoutesDeps {
  statements: Pick<StatementService, 'open'>;
  authenticateStore(apiKey: string): Promise<StoreRecord>;
}

const statementParams = z.object({
  tid: z.string().describe('The store\'s terminal id (tid)'),
  date: z.string().describe('The day, yyyy-mm-dd in the platform\'s time zone (TIME_ZONE)'),
});

/** Whether the client asked for CSV: `Accept: text/csv` (or `?format=csv`, for a plain link). */
export function wantsCsv(request: FastifyRequest): boolean {
  const format = (request.query as { format?: unknown } | undefined)?.format;
  return format === 'csv' || (format !== 'json' && /\btext\/csv\b/i.test(request.headers.accept ?? ''));
}

/** Streams an opened statement: JSON, or CSV as a download named after the store and the day. */
export function sendStatement(reply: FastifyReply, statement: OpenStatement, csv: boolean): FastifyReply {
  const { tid, date } = statement.header;
  reply.header('cache-control', 'no-store');
  if (!csv) return reply.type('application/json; charset=utf-8').send(Readable.from(batched(statementJson(statement))));
  const file = `statement-${tid.replace(/[^\w.-]/g, '_')}-${date}.csv`;
  return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${file}"`)
    .send(Readable.from(batched(statementCsv(statement))));
}

/**
 * `GET /v1/stores/{tid}/statements/{yyyy-mm-dd}` (docs/statements.md) with the store's POS API key:
 * the day's statement, reconciled against the chain. Another store's key is refused like every
 * other store read (401), whatever tid it names.
 */
export async function statementRoutes(app: FastifyInstance, deps: StatementRoutesDeps): Promise<void> {
  app.get('/stores/:tid/statements/:date', zodRoute({
    params: statementParams, tags: ['statements'], security: posApiKey, produces: ['application/json', 'text/csv'],
    summary: 'A store\'s daily statement, every line matched to its Transfer log on chain (JSON, or CSV with Accept: text/csv)',
  }), async (request: FastifyRequest, reply) => {
    const { tid, date } = parsed(statementParams, request.params);
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1]) throw new DomainError('request.unauthorized', 'Authorization: Bearer <POS API key> required');
    const store = await deps.authenticateStore(match[1]);
    if (store.tid !== tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
    return sendStatement(reply, await deps.statements.open(tid, date), wantsCsv(request));
  });
}
