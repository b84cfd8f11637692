import { DomainError } from '#shared/errors.ts';
import type { IpfsLimits } from './ipfs-limits.ts';

export type PathLimits = Pick<IpfsLimits, 'maxPathBytes' | 'maxNameBytes' | 'maxDepth'>;

const encoder = new TextEncoder();

/**
 * Checks a path inside an added tree (or a sub path of a read) and returns it in canonical
 * form: segments joined by `/`, without empty segments or `.`; a trailing `/` is dropped.
 * Refused with `request.invalid`: an absolute path (`/x`, `C:\x`, `\\host`), a `..` segment,
 * a NUL or other control character, a backslash, and a path or segment over the limits.
 * `''` (no path at all) is returned as is; callers decide whether it is allowed.
 *
 * @example normalizeEntryPath('folderName/./file.txt', limits) === 'folderName/file.txt'
 */
export function normalizeEntryPath(raw: string, limits: PathLimits, what = 'path'): string {
  if (raw === '') return '';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw invalid(what, raw, 'contains a control character (NUL, newline, …)');
  if (raw.includes('\\')) throw invalid(what, raw, 'contains a backslash; use / between names');
  if (raw.startsWith('/') || /^[a-zA-Z]:/.test(raw)) throw invalid(what, raw, 'is absolute; give a path relative to the added tree');
  if (encoder.encode(raw).byteLength > limits.maxPathBytes) {
    throw invalid(what, raw, `is longer than ${limits.maxPathBytes} bytes`);
  }
  const segments: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') throw invalid(what, raw, 'contains a ".." segment');
    if (encoder.encode(segment).byteLength > limits.maxNameBytes) {
      throw invalid(what, raw, `has a name longer than ${limits.maxNameBytes} bytes`);
    }
    segments.push(segment);
  }
  if (segments.length > limits.maxDepth) throw invalid(what, raw, `is nested more than ${limits.maxDepth} levels deep`);
  if (segments.length === 0) throw invalid(what, raw, 'names nothing');
  // `./C:x` is `C:x` once `.` is dropped: the canonical path is held to the same rule as the raw one.
  if (/^[a-zA-Z]:/.test(segments[0]!)) throw invalid(what, raw, 'is absolute; give a path relative to the added tree');
  return segments.join('/');
}

/** The directories containing a canonical path, outermost first: `a/b/c` → `a`, `a/b`. */
export function parentPaths(path: string): string[] {
  const parents: string[] = [];
  let index = path.indexOf('/');
  while (index !== -1) {
    parents.push(path.slice(0, index));
    index = path.indexOf('/', index + 1);
  }
  return parents;
}

function invalid(what: string, raw: string, reason: string): DomainError {
  const shown = JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
  return new DomainError('request.invalid', `${what} ${shown} ${reason}`);
}
