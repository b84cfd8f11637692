import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileOf, resolveMutate } from '../scripts/mutation-areas.ts';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

test('a mutate entry naming a declaration is that declaration\'s lines, its JSDoc left out; a name the file lacks is refused', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'vixpay-areas-'));
  try {
    writeFileSync(path.join(root, 'money.ts'), [
      "import { x } from './x.ts';", // 1
      '', // 2
      '/** Doubles. */', // 3
      'export function double(n: bigint): bigint {', // 4
      '  return n * 2n;', // 5
      '}', // 6
      '', // 7
      'export const half = (n: bigint) =>', // 8
      '  n / 2n;', // 9
      'const a = 1, third = (n: bigint) => n / 3n;', // 10
      'export class Ledger {}', // 11
    ].join('\n'));
    assert.equal(resolveMutate(root, 'money.ts#double'), 'money.ts:4-6');
    assert.equal(resolveMutate(root, 'money.ts#half'), 'money.ts:8-9');
    assert.equal(resolveMutate(root, 'money.ts#third'), 'money.ts:10-10');
    assert.equal(resolveMutate(root, 'money.ts#Ledger'), undefined, 'only functions and consts');
    assert.equal(resolveMutate(root, 'money.ts#triple'), undefined);
    assert.equal(resolveMutate(root, 'money.ts'), 'money.ts');
    assert.equal(resolveMutate(root, 'money.ts:4-6'), 'money.ts:4-6');
    assert.deepEqual(['money.ts#double', 'money.ts:4-6', 'money.ts'].map(fileOf), ['money.ts', 'money.ts', 'money.ts']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('every mutation area names what it mutates by file or declaration, never by bare line numbers, and each name is found', () => {
  const configs = readdirSync(path.join(projectRoot, 'stryker')).filter((name) => name.endsWith('.conf.json'));
  assert.ok(configs.length > 0);
  for (const name of configs) {
    const { mutate } = JSON.parse(readFileSync(path.join(projectRoot, 'stryker', name), 'utf8')) as { mutate: string[] };
    for (const entry of mutate) {
      assert.doesNotMatch(entry, /:\d+-\d+$/, `${name}: ${entry} is a line range, which stays put while the code moves: name the declaration (file.ts#name)`);
      assert.notEqual(resolveMutate(projectRoot, entry), undefined, `${name}: ${entry} is not in its file`);
    }
  }
});
