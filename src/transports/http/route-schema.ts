import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';

/** A request part described by zod, or a body given per media type (multipart uploads). */
type ZodPart = z.ZodType;
type BodyByMediaType = { content: Record<string, { schema: ZodPart | Record<string, unknown> }> };

/**
 * The schema of a route whose request parts are zod schemas: the objects its handler parses the
 * request with. The OpenAPI document (openapi.ts) is generated from them, so the document and
 * the validation cannot drift apart.
 */
export interface ZodRouteSchema extends Omit<FastifySchema, 'body' | 'querystring' | 'params' | 'headers'> {
  body?: ZodPart | BodyByMediaType;
  querystring?: ZodPart;
  params?: ZodPart;
  headers?: ZodPart;
}

// Fastify's own validation step lets every request through: each handler parses with the same
// zod object and refuses an invalid request itself, after the route's authentication and in its
// API's error shape (docs/interfaces.md#authentication-api: `{error}` for auth and DID, `{resultCode, …}` for pay, JSON-RPC
// errors for /token), as it did before the document existed.
const handlerValidates: FastifySchemaCompiler<unknown> = () => () => true;

/**
 * Route options carrying the route's zod schema into its definition.
 *
 * @example
 * app.post('/auth-user', { bodyLimit, ...zodRoute({ body: authUserBody, summary: 'Password login' }) }, handler);
 */
export function zodRoute<S extends ZodRouteSchema>(schema: S): { schema: S; validatorCompiler: FastifySchemaCompiler<unknown> } {
  return { schema, validatorCompiler: handlerValidates };
}

/** Security requirement of the routes that take a user's access token (`/v2/auth/auth-user`). */
export const userJwt = [{ userJwt: [] }];
/** Security requirement of the routes that take a store's POS API key (`vixpay store add`). */
export const posApiKey = [{ posApiKey: [] }];

export function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/**
 * The JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) of what a zod schema accepts as input.
 * `z.undefined()` members of a union (an omitted JSON-RPC `params`) become `{not: {}}`: "no
 * value", which the enclosing object expresses by leaving the key out of `required`. An empty
 * tuple's `prefixItems: []` (invalid in 2020-12) is dropped; its `maxItems: 0` says the same.
 */
export function requestJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema._zod.def.type === 'undefined') jsonSchema.not = {};
      if (Array.isArray(jsonSchema.prefixItems) && jsonSchema.prefixItems.length === 0) delete jsonSchema.prefixItems;
    },
  });
  return json;
}

/**
 * `@fastify/swagger`'s `transform`: each zod request part of a route becomes its JSON Schema;
 * routes without zod parts are left as they are.
 */
export function zodToOpenApi({ schema, url }: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
  if (!schema) return { schema, url };
  const converted: Record<string, unknown> = { ...schema };
  for (const part of ['body', 'querystring', 'params', 'headers'] as const) {
    const value = schema[part];
    if (isZodSchema(value)) converted[part] = requestJsonSchema(value);
    else if (part === 'body' && value && typeof value === 'object' && 'content' in value) {
      const content = (value as BodyByMediaType).content;
      converted.body = {
        content: Object.fromEntries(Object.entries(content).map(([type, media]) => [
          type, { ...media, schema: isZodSchema(media.schema) ? requestJsonSchema(media.schema) : media.schema },
        ])),
      };
    }
  }
  return { schema: converted as FastifySchema, url };
}

/** A request part parsed with its zod schema; the first issue becomes `request.invalid`, naming its path. */
export function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new DomainError('request.invalid', `${issue?.path.join('.') || 'request'}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}
