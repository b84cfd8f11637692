import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DomainError } from '#shared/errors.ts';
import { normalizeEntryPath, parentPaths } from './entry-path.ts';

// Paths inside an added tree or a read (multipart file names, `?arg=<cid>/<path>`): any string is
// its canonical path inside the tree, or refused with request.invalid; never one that climbs out,
// names a drive or a host, or carries a control character.
const seed = 29;
const limits = { maxPathBytes: 512, maxNameBytes: 64, maxDepth: 8 };
const pieces = fc.constantFrom('a', 'b.txt', '.', '..', '', '/', '\\', 'C:', '\u0000', '\n', ' ', 'é', '…', '%2e%2e', '.hidden', '...', 'x'.repeat(70));
const paths = fc.oneof(fc.string({ maxLength: 80 }), fc.array(pieces, { maxLength: 12 }).map((p) => p.join('')), fc.array(pieces, { maxLength: 12 }).map((p) => p.join('/')));

test('any path is canonical (idempotent, inside the tree, within the limits) or refused with request.invalid', () => {
  fc.assert(fc.property(paths, (raw) => {
    let canonical: string;
    try {
      canonical = normalizeEntryPath(raw, limits);
    } catch (error) {
      return error instanceof DomainError && error.code === 'request.invalid' && error.message.startsWith('path ');
    }
    if (raw === '') return canonical === '';
    const segments = canonical.split('/');
    return normalizeEntryPath(canonical, limits) === canonical
      && segments.every((s) => s !== '' && s !== '.' && s !== '..' && new TextEncoder().encode(s).byteLength <= limits.maxNameBytes)
      && segments.length <= limits.maxDepth
      // eslint-disable-next-line no-control-regex
      && !/[\u0000-\u001f\u007f\\]/.test(canonical) && !canonical.startsWith('/') && !/^[a-zA-Z]:/.test(canonical)
      && canonical === raw.split('/').filter((s) => s !== '' && s !== '.').join('/');
  }), { seed, numRuns: 4000 });
});

test('parent paths are the canonical path\'s prefixes at each /, outermost first', () => {
  fc.assert(fc.property(fc.array(fc.stringMatching(/^[a-z]{1,4}$/), { minLength: 1, maxLength: 8 }), (segments) => {
    const parents = parentPaths(segments.join('/'));
    return parents.length === segments.length - 1 && parents.every((p, i) => p === segments.slice(0, i + 1).join('/'));
  }), { seed, numRuns: 500 });
  for (const [raw, reason] of [['../x', '".."'], ['a/../../x', '".."'], ['/etc/passwd', 'absolute'], ['C:x', 'absolute'], ['\\\\host\\x', 'backslash'], ['a\u0000b', 'control'], ['./', 'names nothing'], ['./C:x', 'absolute'], ['.//d:/x', 'absolute']]) {
    assert.throws(() => normalizeEntryPath(raw!, limits), (e: DomainError) => e.code === 'request.invalid' && e.message.includes(reason!), raw);
  }
});
