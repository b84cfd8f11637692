import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyedLock } from './keyed-lock.ts';

const later = <T>(value: T, order: string[], name: string) => new Promise<T>((resolve) => setTimeout(() => { order.push(name); resolve(value); }, 5));

test('works of one key run one after another in the order asked, works of other keys meanwhile, each answering its own result', async () => {
  const lock = keyedLock();
  const order: string[] = [];
  const started: string[] = [];
  const endedBefore = new Map<string, string[]>();
  const work = (name: string) => () => { started.push(name); endedBefore.set(name, [...order]); return later(name, order, name); };
  const answers = await Promise.all([lock('a', work('a1')), lock('b', work('b1')), lock('a', work('a2'))]);
  assert.deepEqual(answers, ['a1', 'b1', 'a2']);
  assert.deepEqual(started.slice(0, 2), ['a1', 'b1'], 'b does not wait for a');
  assert.deepEqual(endedBefore.get('a2')?.includes('a1'), true, 'a2 starts after a1 ended');
  assert.deepEqual(endedBefore.get('b1'), [], 'b1 starts before anything ended');
});

test('a work that fails answers its error and does not stop the next work of its key', async () => {
  const lock = keyedLock();
  const failed = lock('a', () => Promise.reject(new Error('no')));
  const next = lock('a', () => Promise.resolve('next'));
  await assert.rejects(failed, /no/);
  assert.equal(await next, 'next');
});
