import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { StatementService } from '../../../statements/statement-service.ts';
import { operatorDayCsv } from '../../../statements/operator-day.ts';
import { zodRoute, parsed } from '../route-schema.ts';
import { sendStatement } from './statements.ts';

export interface ConsoleStatementDeps {
  statements: Pick<StatementService, 'open' | 'operatorDay'>;
}

const format = z.enum(['csv', 'json']).default('csv').describe('csv (a download) or json');
const statementQuery = z.object({ tid: z.string().min(1).max(64), date: z.string(), format });
const dayQuery = z.object({ date: z.string(), format });

/** The console's downloads (operator session, see console.ts): any store's statement and the operator's day. */
export async function consoleStatementRoutes(app: FastifyInstance, deps: ConsoleStatementDeps): Promise<void> {
  const api = { tags: ['console'] };
  app.get('/statement', zodRoute({ ...api, querystring: statementQuery, summary: 'A store\'s daily statement (docs/statements.md)' }), async (request, reply) => {
    const { tid, date, format: asked } = parsed(statementQuery, request.query);
    return sendStatement(reply, await deps.statements.open(tid, date), asked === 'csv');
  });
  app.get('/operator-day', zodRoute({ ...api, querystring: dayQuery, summary: 'Settlement transactions, gas and fees of a day per network' }), async (request, reply) => {
    const { date, format: asked } = parsed(dayQuery, request.query);
    const day = await deps.statements.operatorDay(date);
    reply.header('cache-control', 'no-store');
    if (asked === 'json') return day;
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="operator-day-${date}.csv"`).send(operatorDayCsv(day));
  });
}
