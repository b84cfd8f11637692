import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { envSchema } from '../src/config/config.ts';
import { committedReference, operationsDoc, renderConfigReference } from '../scripts/config-reference.ts';

// docs/operations.md's configuration reference is generated from the config schema (npm run docs:config).
test('docs/operations.md holds the configuration reference the schema renders (run npm run docs:config)', () => {
  assert.equal(committedReference(readFileSync(operationsDoc, 'utf8')), renderConfigReference());
});

test('the reference has one row per setting, each with a meaning', () => {
  const rows = renderConfigReference().split('\n').slice(2);
  assert.deepEqual(rows.map((row) => /^\| `([A-Z0-9_]+)` \|/.exec(row)?.[1]), Object.keys(envSchema.shape));
  for (const row of rows) assert.doesNotMatch(row, /\| *\|$/, row);
});
