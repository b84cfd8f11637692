import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

export interface DocExample {
  /** The request block: parsed JSON, or the raw text when it is not JSON (a parse-error example). */
  request: unknown;
  response: unknown;
  /** `Host: \`...\`` line of the example, when it has one. */
  host?: string;
}

/** The examples of a doc: a `<!-- example: NAME -->` marker, then a request and a response json block. */
export function readDocExamples(file: string): Map<string, DocExample> {
  const text = readFileSync(file, 'utf8');
  const examples = new Map<string, DocExample>();
  const marker = /<!-- example: ([\w-]+) -->([\s\S]*?)(?=<!-- example:|\n#|$)/g;
  for (const match of text.matchAll(marker)) {
    const blocks = [...match[2]!.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
    assert.equal(blocks.length, 2, `example ${match[1]} has a request and a response block`);
    const host = /Host: `([^`]+)`/.exec(match[2]!)?.[1];
    const parse = (t: string) => { try { return JSON.parse(t); } catch { return t; } };
    examples.set(match[1]!, { request: parse(blocks[0]!), response: JSON.parse(blocks[1]!), ...(host && { host }) });
  }
  return examples;
}

/**
 * Asserts that `actual` has exactly the documented shape: the same keys at every level, the same
 * JSON types, arrays of the same length compared element by element, and equal values for the
 * members that do not change from run to run.
 */
export function assertSameShape(documented: unknown, actual: unknown, fixedKeys: ReadonlySet<string>, at = '$'): void {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  assert.equal(kind(actual), kind(documented), `${at}: type`);
  if (Array.isArray(documented) && Array.isArray(actual)) {
    assert.equal(actual.length, documented.length, `${at}: length`);
    documented.forEach((element, index) => assertSameShape(element, actual[index], fixedKeys, `${at}[${index}]`));
    return;
  }
  if (kind(documented) === 'object') {
    const d = documented as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    assert.deepEqual(Object.keys(a).sort(), Object.keys(d).sort(), `${at}: keys`);
    for (const key of Object.keys(d)) {
      if (fixedKeys.has(key) && kind(d[key]) !== 'object' && kind(d[key]) !== 'array') assert.deepEqual(a[key], d[key], `${at}.${key}`);
      else assertSameShape(d[key], a[key], fixedKeys, `${at}.${key}`);
    }
  }
}
