import { DomainError } from '#shared/errors.ts';
import { normalizeEntryPath, parentPaths, type PathLimits } from './entry-path.ts';
import type { AddEntry, AddOptions, AddResult, IpfsBackend } from './ipfs-backend.ts';

export interface AddContentParameters {
  /** Entries as the caller named them (raw paths); checked and normalised here. */
  entries: AsyncIterable<AddEntry>;
  options: AddOptions;
  limits: PathLimits;
}

export type AddContentDeps = Pick<IpfsBackend, 'addEntries'>;

/**
 * Adds files and directories, in any order, to IPFS and returns the root CID (`{cid}` of
 * POST /v1/ipfs/add). Every path is checked (`normalizeEntryPath`); the same path twice, or a
 * file where a directory is (`a` and `a/b.txt`), is `request.invalid`. A directory entry for a
 * directory already seen or implied by a file path is dropped (it adds nothing).
 * Checks run as entries stream through, so a bad entry fails the add after earlier entries were
 * imported: no root is recorded then, and their blocks stay as unreferenced orphans.
 */
export async function addContent(deps: AddContentDeps, parameters: AddContentParameters): Promise<AddResult> {
  return deps.addEntries(checkedEntries(parameters.entries, parameters.limits), parameters.options);
}

async function* checkedEntries(entries: AsyncIterable<AddEntry>, limits: PathLimits): AsyncGenerator<AddEntry> {
  const files = new Set<string>();
  const directories = new Set<string>();
  for await (const entry of entries) {
    if (entry.kind === 'file' && entry.path === '') {
      yield entry;
      continue;
    }
    const what = entry.kind === 'file' ? 'file name' : 'directory name';
    if (entry.path === '') throw new DomainError('request.invalid', `a ${what} is required on a directory part`);
    const path = normalizeEntryPath(entry.path, limits, what);
    for (const parent of parentPaths(path)) {
      if (files.has(parent)) throw conflict(parent, path);
      directories.add(parent);
    }
    if (entry.kind === 'directory') {
      if (files.has(path)) throw conflict(path, path);
      if (directories.has(path)) continue;
      directories.add(path);
      yield { kind: 'directory', path };
    } else {
      if (files.has(path)) throw new DomainError('request.invalid', `file ${JSON.stringify(path)} is given twice`);
      if (directories.has(path)) throw conflict(path, path);
      files.add(path);
      yield { kind: 'file', path, content: entry.content };
    }
  }
}

function conflict(file: string, path: string): DomainError {
  const detail = file === path ? `${JSON.stringify(path)} is given both as a file and as a directory` : `${JSON.stringify(path)} needs ${JSON.stringify(file)} to be a directory, but it is a file`;
  return new DomainError('request.invalid', detail);
}
