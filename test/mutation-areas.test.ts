import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileOf, resolveMutate, scoreOf } from '../scripts/mutation-areas.ts';

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

test('each area\'s recorded score is its kept report\'s, and the table of docs/reliability.md says the same', () => {
  const reports = path.join(projectRoot, 'reports', 'mutation');
  const doc = readFileSync(path.join(projectRoot, 'docs', 'reliability.md'), 'utf8');
  const table = /<!-- stryker-scores:start -->([\s\S]*?)<!-- stryker-scores:end -->/.exec(doc)?.[1];
  assert.ok(table, 'docs/reliability.md has the scores table');
  const rows = new Map(table.split('\n').filter((line) => line.startsWith('| ')).map((line) => {
    const cells = line.split(' | ');
    return [cells[0]!.slice(2), cells] as const;
  }));
  const areas = readdirSync(path.join(projectRoot, 'stryker')).filter((f) => f.endsWith('.conf.json')).map((f) => f.slice(0, -'.conf.json'.length));
  let recorded = 0;
  for (const area of areas) {
    const runFile = path.join(reports, area, 'run.json');
    let run: { commit: string; date: string; percent: number; killed: number; survived: number; noCoverage: number };
    try {
      run = JSON.parse(readFileSync(runFile, 'utf8'));
    } catch {
      // Not run yet: the table lists it as such, or not at all.
      assert.ok(!rows.has(area) || rows.get(area)!.includes('not run yet'), `${area} has no report, and the table gives it no score`);
      continue;
    }
    recorded++;
    const kept = scoreOf(path.join(reports, area, 'incremental.json'));
    assert.deepEqual({ percent: run.percent, killed: run.killed, survived: run.survived, noCoverage: run.noCoverage },
      { percent: kept.percent, killed: kept.killed, survived: kept.survived, noCoverage: kept.noCoverage }, `${area}: run.json is the score of its incremental.json`);
    const cells = rows.get(area);
    assert.ok(cells, `${area} has a row in docs/reliability.md`);
    assert.deepEqual(cells.slice(3, 8), [`**${run.percent.toFixed(2)}%**`, String(run.killed), String(run.survived), String(run.noCoverage), run.date.slice(0, 10)], `${area}'s row`);
    assert.ok(cells[8]!.startsWith(run.commit.slice(0, 7)), `${area}'s row names the commit of its report, ${run.commit.slice(0, 7)}`);
  }
  assert.ok(recorded >= 10, 'the areas with reports are checked');
});
