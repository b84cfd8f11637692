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
