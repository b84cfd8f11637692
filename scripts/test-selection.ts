/**
 * Which test files a test switch can change: the matrix (scripts/test-matrix.ts) runs a file again on
 * another store or pairing desk only if that run can differ from `npm test`'s.
 *
 * The rule, with nothing to opt into and nothing to forget: a switch (VIXPAY_TEST_STORE,
 * VIXPAY_TEST_PAIRING) is read by name, so every source file whose text names it is a *reader*. A test
 * file is picked for a switch when a reader is in its closure: the file itself, every module it imports
 * (static, dynamic, `#shared/…`), and every `.ts`/`.js` file it names in a string (a child process it
 * spawns: `src/main.ts`, `bin/vixpay.js`, a script under test/support), followed transitively. A test
 * that does not reach a reader runs exactly what `npm test` ran, so running it again proves nothing.
 */
import { existsSync, globSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export type TestSwitch = 'VIXPAY_TEST_STORE' | 'VIXPAY_TEST_PAIRING';

const sourceExtensions = /\.(ts|js|mjs|cjs)$/;
const skippedDirectories = new Set(['node_modules', '.git', 'docs', 'scripts', 'bench', 'contracts', 'reports']);

/** The files `spec` (a glob of the test:unit script, e.g. `src/**\/*.test.ts`) matches, relative and sorted. */
export function expandTestGlob(projectRoot: string, spec: string): string[] {
  return globSync(spec, { cwd: projectRoot }).map((file) => file.split(path.sep).join('/')).sort();
}

/** Every source file of the project (relative, `/`-separated), outside node_modules, docs, scripts and the like. */
export function listSources(projectRoot: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(projectRoot, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!skippedDirectories.has(entry.name) && !entry.name.startsWith('.')) walk(rel);
      } else if (sourceExtensions.test(entry.name)) {
        found.push(rel);
      }
    }
  };
  walk('');
  return found;
}

/** The project files `file` imports or names (relative to the project root). */
export function referencedFiles(projectRoot: string, file: string, text = readFileSync(path.join(projectRoot, file), 'utf8')): string[] {
  const out = new Set<string>();
  const dir = path.posix.dirname(file);
  const consider = (spec: string): void => {
    const candidates = spec.startsWith('#shared/')
      ? [`src/shared/${spec.slice('#shared/'.length)}`]
      : spec.startsWith('.') ? [path.posix.normalize(path.posix.join(dir, spec))] : [path.posix.normalize(spec), path.posix.normalize(path.posix.join(dir, spec))];
    for (const candidate of candidates) {
      if (candidate.startsWith('..') || candidate.startsWith('node_modules/')) continue;
      const full = path.join(projectRoot, candidate);
      if (existsSync(full) && statSync(full).isFile()) out.add(candidate);
    }
  };
  // Every quoted string that ends in a source extension: import specifiers, import(), new URL(),
  // spawn arguments; but not a type-only import or export, which is gone at run time.
  const runtime = text.replace(/\b(?:import|export)\s+type\s+[^;'"`]*?\bfrom\s*(['"])[^'"]*\1/g, '');
  for (const m of runtime.matchAll(/(['"`])([#\w./@-]+\.(?:ts|js|mjs|cjs))\1/g)) consider(m[2]!);
  return [...out];
}

/**
 * The test files of `tests` whose closure reaches a reader of `name`, each with the reader it reached
 * through (for the matrix's listing).
 */
export function testsReaching(projectRoot: string, tests: string[], name: TestSwitch): Map<string, string> {
  const texts = new Map<string, string>();
  const read = (file: string): string => {
    let text = texts.get(file);
    if (text === undefined) {
      text = readFileSync(path.join(projectRoot, file), 'utf8');
      texts.set(file, text);
    }
    return text;
  };
  const picked = new Map<string, string>();
  for (const test of tests) {
    const seen = new Set<string>([test]);
    const queue = [test];
    while (queue.length > 0) {
      const file = queue.shift()!;
      const text = read(file);
      if (text.includes(name)) {
        picked.set(test, file);
        break;
      }
      for (const next of referencedFiles(projectRoot, file, text)) {
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
  }
  return picked;
}
