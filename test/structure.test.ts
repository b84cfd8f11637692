import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The structure docs/architecture.md describes, checked on the source: no two files of src/ import
// each other, directly or around a circle (type imports too: a circle of types is still a circle to
// read), and the chain and config files stay short enough to read at once.

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const sourceFiles = readdirSync(path.join(projectRoot, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.startsWith(`gen${path.sep}`))
  .map((file) => path.join('src', file));

/** The files of src/ that `file` imports or re-exports, resolved as Node resolves them (relative paths and #shared/*). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path.join(projectRoot, file), 'utf8'), true, true);
  return importedFiles.flatMap(({ fileName }) => {
    if (fileName.startsWith('#shared/')) return [path.join('src', 'shared', fileName.slice('#shared/'.length))];
    if (fileName.startsWith('.')) return [path.normalize(path.join(path.dirname(file), fileName))];
    return [];
  }).filter((target) => sourceFiles.includes(target));
}

/** The circles of a graph: its strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== file);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

test('no file of src/ imports another that imports it back, directly or around a circle', () => {
  const graph = new Map(sourceFiles.map((file) => [file, importsOf(file)]));
  assert.ok([...graph.values()].some((targets) => targets.length > 0), 'the imports are read');
  assert.deepEqual(circles(graph), []);
  // The check itself: a two-file and a three-file circle are found.
  assert.deepEqual(circles(new Map([['a', ['b']], ['b', ['a']], ['c', ['d']], ['d', ['e']], ['e', ['c']], ['f', ['a']]])), [['a', 'b'], ['c', 'd', 'e']]);
});

test('each chain file is at most 250 lines, each config file at most 350', () => {
  const lines = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8').split('\n').length - 1;
  const over = sourceFiles.filter((file) => (file.startsWith(path.join('src', 'chain') + path.sep) && lines(file) > 250)
    || (file.startsWith(path.join('src', 'config') + path.sep) && lines(file) > 350)).map((file) => `${file}: ${lines(file)} lines`);
  assert.deepEqual(over, []);
});
