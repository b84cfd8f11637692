import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, inject, type TestApp } from '../../test/support/ipfs-http.ts';
import { defaultIpfsLimits } from './ipfs-limits.ts';

// item 7 of issue 19: a file under 2,000 nested directories (a 4,005-byte path, within maxPathBytes)
// overflowed the importer's stack: 500. Deeper than maxDepth is the caller's error: 400, named.
let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => t?.close());

const nested = (depth: number) => `${'a/'.repeat(depth)}f.txt`;

test('a file under 2,000 nested directories is refused 400 with the depth limit; at the limit it is added', async () => {
  for (const depth of [2000, defaultIpfsLimits.maxDepth]) {
    const refused = await inject(t.app, [{ filename: nested(depth), data: 'deep' }]);
    assert.equal(refused.statusCode, 400, `${depth} directories: ${refused.body.slice(0, 300)}`);
    assert.equal(refused.json().error.code, 'request.invalid');
    assert.match(refused.json().error.message, new RegExp(`nested more than ${defaultIpfsLimits.maxDepth} levels deep`));
  }
  // As a directory part too.
  const directory = await inject(t.app, [{ filename: 'a/'.repeat(2000).slice(0, -1), contentType: 'application/x-directory' }]);
  assert.equal(directory.statusCode, 400, directory.body.slice(0, 300));
  const deepest = await inject(t.app, [{ filename: nested(defaultIpfsLimits.maxDepth - 1), data: 'deep' }]);
  assert.equal(deepest.statusCode, 200, deepest.body.slice(0, 300));
  assert.match(deepest.json().cid, /^Qm/);
});
