/**
 * The `mutate` entries of the mutation areas (stryker/<area>.conf.json), for scripts/test-mutation.ts.
 * Besides Stryker's own forms (a file; a line range, `file.ts:28-37`) an entry may name a top-level
 * declaration, `file.ts#name`: its lines, found by parsing the file at each run. A line range stays
 * put while the code under it moves (an area once mutated lines past its file's end, and so nothing);
 * a name follows its code, and a name not found is refused.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The file a `mutate` entry names: without its declaration (`#name`) or line range (`:28-37`). */
export const fileOf = (entry: string): string => entry.replace(/#[\w$]+$/, '').replace(/:\d+-\d+$/, '');

/**
 * A `mutate` entry as Stryker takes it: `file.ts#name` becomes the line range of the top-level
 * function or const `name` (its JSDoc left out); undefined when the file declares no such name.
 * Other entries are returned as they are.
 */
export function resolveMutate(projectRoot: string, entry: string): string | undefined {
  const [file, name] = entry.split('#') as [string, string | undefined];
  if (name === undefined) return entry;
  const source = ts.createSourceFile(file, readFileSync(path.join(projectRoot, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const line = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  for (const statement of source.statements) {
    const names = ts.isFunctionDeclaration(statement) ? [statement.name?.text]
      : ts.isVariableStatement(statement) ? statement.declarationList.declarations.map((d) => (ts.isIdentifier(d.name) ? d.name.text : undefined))
        : [];
    if (names.includes(name)) return `${file}:${line(statement.getStart())}-${line(statement.getEnd())}`;
  }
  return undefined;
}

/** What a run records of an area's score (reports/mutation/<area>/run.json, beside its commit and date). */
export interface AreaScore { percent: number; killed: number; survived: number; noCoverage: number; valid: number; text: string }

/**
 * The mutation score of a mutation-testing-report-schema JSON (an area's incremental.json, which
 * Stryker writes at the end of each run with every mutant's status): killed and timed-out mutants
 * over all valid ones (compile errors and ignored mutants left out), rounded down to 0.01%.
 */
export function scoreOf(file: string): AreaScore {
  const report = JSON.parse(readFileSync(file, 'utf8')) as { files: Record<string, { mutants: Array<{ status: string }> }> };
  const statuses = Object.values(report.files).flatMap((f) => f.mutants.map((m) => m.status));
  const count = (...of: string[]) => statuses.filter((s) => of.includes(s)).length;
  const killed = count('Killed', 'Timeout');
  const survived = count('Survived');
  const noCoverage = count('NoCoverage');
  const valid = killed + survived + noCoverage;
  const percent = valid === 0 ? 100 : Math.floor((10_000 * killed) / valid) / 100;
  return { percent, killed, survived, noCoverage, valid, text: `${percent.toFixed(2)}% (${killed} of ${valid} killed, ${survived} survived, ${noCoverage} without coverage)` };
}
