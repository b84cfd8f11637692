import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertSameShape } from './support/doc-examples.ts';

// The doc-example comparison must fail on what a reader of the docs would call a difference.
const fixed = new Set(['code']);

test('every array element is compared, not the first one only', () => {
  const documented = [{ code: 'a', id: 1 }, { code: 'b', id: 2 }];
  assertSameShape(documented, [{ code: 'a', id: 7 }, { code: 'b', id: 8 }], fixed);
  assert.throws(() => assertSameShape(documented, [{ code: 'a', id: 7 }, { code: 'c', id: 8 }], fixed), /\$\[1\]\.code/);
  assert.throws(() => assertSameShape(documented, [{ code: 'a', id: 7 }, { code: 'b', id: '8' }], fixed), /\$\[1\]\.id: type/);
  assert.throws(() => assertSameShape(documented, [{ code: 'a', id: 7 }, { code: 'b' }], fixed), /\$\[1\]: keys/);
});

test('arrays of another length differ', () => {
  assert.throws(() => assertSameShape([{ code: 'a' }], [{ code: 'a' }, { code: 'a' }], fixed), /\$: length/);
  assert.throws(() => assertSameShape({ list: [1, 2] }, { list: [] }, fixed), /\$\.list: length/);
  assertSameShape({ list: [] }, { list: [] }, fixed);
});
