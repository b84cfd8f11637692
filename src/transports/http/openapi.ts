import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { zodToOpenApi } from './route-schema.ts';

const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * The OpenAPI 3.1 document of every HTTP API at `GET /openapi.json`, and Swagger UI at `/docs`
 * (its scripts and styles served from the `@fastify/swagger-ui` package, no CDN). Call it before
 * any route is registered: the document lists the routes registered after it, their request
 * schemas generated from the zod schemas the handlers parse with (route-schema.ts).
 */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'vixpay HTTP APIs',
        version,
        description: 'Authentication, DID/VC/VP, REST payment, private IPFS and the token, block and chain JSON-RPC APIs. The guides in docs/ explain each API with examples.',
      },
      tags: [
        { name: 'auth', description: 'Password login, JWT and JWKS, website login through the app (docs/auth-api.md)' },
        { name: 'did', description: 'DIDs, verifiable credentials and presentations (docs/did-api.md)' },
        { name: 'pay', description: 'REST payment and payment lookup (docs/pay-api.md, docs/payments.md)' },
        { name: 'ipfs', description: 'Private IPFS (docs/ipfs-api.md)' },
        { name: 'json-rpc', description: 'Token, block and chain JSON-RPC 2.0 (docs/token-api.md, docs/block-api.md, docs/chain-api.md)' },
        { name: 'receipts', description: 'Verifiable receipts of approvals, refunds and reward claims (docs/receipts.md)' },
        { name: 'statements', description: 'A store\'s daily statement reconciled against the chain (docs/statements.md)' },
        { name: 'console', description: 'The operator console: its pages and the JSON it draws (docs/console.md); an operator session cookie, not a user JWT' },
        { name: 'x402', description: 'The x402 facilitator: verify and settle HTTP 402 payments (docs/x402.md)' },
        { name: 'demo', description: 'The demo website of the website login' },
        { name: 'operations', description: 'Probes' },
      ],
      components: {
        securitySchemes: {
          userJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token from POST /v2/auth/auth-user' },
          posApiKey: { type: 'http', scheme: 'bearer', description: 'A store\'s POS API key (`npx vixpay store add`)' },
          facilitatorKey: { type: 'http', scheme: 'bearer', description: 'A resource server\'s facilitator API key (`npx vixpay facilitator-key add`)' },
        },
      },
    },
    transform: zodToOpenApi,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
