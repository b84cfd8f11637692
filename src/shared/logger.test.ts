import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { consoleLogDestination, createLogger, formatLogLine } from './logger.ts';

function lines(level = 'info') {
  const out: string[] = [];
  const logger = createLogger(level, new Writable({ write(chunk, _encoding, done) { out.push(formatLogLine(chunk.toString())); done(); } }));
  return { logger, out };
}

test('a terminal log line is readable: time, level, component, message, fields', () => {
  const { logger, out } = lines();
  logger.child({ component: 'payments' }).info({ tid: 'T001', tran_no: 'P 1', amount: '12.5' }, 'payment approved');
  assert.match(out[0]!, /^\d\d:\d\d:\d\d\.\d{3} {2}INFO +payments {2}payment approved {2}tid=T001 {2}tran_no="P 1" {2}amount=12\.5$/);
});

test('request lines show method, URL, status and time; errors their message, and their stack at error level', () => {
  const { logger, out } = lines();
  logger.info({ req: { method: 'GET', url: '/token' }, res: { statusCode: 200 }, responseTime: 3.14, reqId: 'req-1' }, 'request completed');
  assert.match(out[0]!, /INFO +request completed {2}GET \/token {2}200 3\.1 ms {2}reqId=req-1$/);
  logger.error({ err: new Error('boom') }, 'failed');
  assert.match(out[1]!, /ERROR +failed {2}Error: boom\n\s+at /);
  logger.warn({ err: new Error('soft') }, 'retrying');
  assert.doesNotMatch(out[2]!, /\n/);
});

test('secrets stay redacted in readable lines', () => {
  const { logger, out } = lines();
  logger.info({ password: 'hunter2', nested: { secretKey: 'abc' } }, 'x');
  assert.doesNotMatch(out[0]!, /hunter2|abc/);
});

test('not a terminal: the stream itself, for JSON lines', () => {
  const stream = Object.assign(new Writable({ write(_c, _e, done) { done(); } }), { isTTY: false }) as unknown as NodeJS.WriteStream;
  assert.equal(consoleLogDestination(stream), stream);
});
