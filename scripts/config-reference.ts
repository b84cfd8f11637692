/**
 * The configuration reference of docs/operations.md, rendered from the config schema itself
 * (`envSchema` in src/config/schema.ts: each setting's default, range and `.describe()` text).
 * `npm run docs:config` writes it between the marker comments; test/config-reference.test.ts fails
 * when the committed page differs from what this renders.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { envSchema } from '../src/config/config.ts';

export const operationsDoc = fileURLToPath(new URL('../docs/operations.md', import.meta.url));
export const startMarker = '<!-- config-reference:start (npm run docs:config writes this table from src/config/config.ts) -->';
export const endMarker = '<!-- config-reference:end -->';

interface InputJsonSchema {
  type?: string;
  default?: unknown;
  description?: string;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  format?: string;
}

/** The reference table: one row per environment variable, in the schema's order. */
export function renderConfigReference(): string {
  const rows = Object.entries(envSchema.shape).map(([name, setting]) => {
    const schema = z.toJSONSchema(setting, { io: 'input' }) as InputJsonSchema;
    if (!schema.description) throw new Error(`${name} has no .describe() in src/config/schema.ts`);
    return `| \`${name}\` | ${defaultOf(schema)} | ${allowedValues(schema)} | ${cell(schema.description)} |`;
  });
  return ['| Variable | Default | Allowed | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

function defaultOf(schema: InputJsonSchema): string {
  return schema.default === undefined ? '—' : `\`${String(schema.default)}\``;
}

function allowedValues(schema: InputJsonSchema): string {
  if (schema.enum) return schema.enum.map((value) => `\`${String(value)}\``).join(', ');
  if (schema.type === 'integer' || schema.type === 'number') {
    // zod's .int() adds the safe-integer bounds; they say nothing to an operator.
    const maximum = schema.maximum === Number.MAX_SAFE_INTEGER ? undefined : schema.maximum;
    const minimum = schema.minimum === Number.MIN_SAFE_INTEGER ? undefined : schema.minimum;
    if (minimum !== undefined && maximum !== undefined) return `${schema.type} ${minimum}–${maximum}`;
    const bounds = [
      minimum !== undefined && `≥ ${minimum}`,
      schema.exclusiveMinimum !== undefined && `> ${schema.exclusiveMinimum}`,
      maximum !== undefined && `≤ ${maximum}`,
      schema.exclusiveMaximum !== undefined && `< ${schema.exclusiveMaximum}`,
    ].filter((bound): bound is string => typeof bound === 'string');
    return bounds.length === 0 ? schema.type : `${schema.type} ${bounds.join(', ')}`;
  }
  if (schema.format === 'uri') return 'URL';
  if (schema.pattern !== undefined) return `\`${cell(schema.pattern)}\``;
  return 'text';
}

/** A table cell: `|` would end it. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The page with its reference replaced by `reference`; throws when the markers are missing. */
export function withReference(page: string, reference: string): string {
  const start = page.indexOf(startMarker);
  const end = page.indexOf(endMarker);
  if (start < 0 || end < start) throw new Error(`docs/operations.md has no ${startMarker} … ${endMarker} section`);
  return `${page.slice(0, start + startMarker.length)}\n${reference}\n${page.slice(end)}`;
}

/** The reference as docs/operations.md holds it now, between the markers. */
export function committedReference(page: string): string {
  const start = page.indexOf(startMarker);
  const end = page.indexOf(endMarker);
  if (start < 0 || end < start) throw new Error(`docs/operations.md has no ${startMarker} … ${endMarker} section`);
  return page.slice(start + startMarker.length, end).trim();
}

if (import.meta.main) {
  const page = readFileSync(operationsDoc, 'utf8');
  const updated = withReference(page, renderConfigReference());
  if (updated !== page) writeFileSync(operationsDoc, updated);
  console.log(updated === page ? 'docs/operations.md: configuration reference up to date' : 'docs/operations.md: configuration reference written');
}
