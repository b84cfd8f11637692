import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// `buf lint` on the published .proto (proto/buf.yaml), with the buf binary the @bufbuild/buf
// package ships for this platform: no download, no network.
const protoDir = new URL('../../../proto/', import.meta.url).pathname;
const buf = new URL('../../../node_modules/.bin/buf', import.meta.url).pathname;
const run = (args: string[]) => promisify(execFile)(buf, args, { cwd: protoDir, encoding: 'utf8', timeout: 60_000 });

test('buf lint passes on proto/ with proto/buf.yaml', async () => {
  const { stdout, stderr } = await run(['lint']);
  assert.equal(stdout + stderr, '');
});

test("buf.yaml's exceptions are exactly the STANDARD rules that docs/interfaces.md#grpc-payments's names break", async () => {
  // Every rule of STANDARD, with no exception: what fails must be only what docs/interfaces.md#grpc-payments forces.
  const failed = await run(['lint', '--error-format=json', '--config', JSON.stringify({ version: 'v2', lint: { use: ['STANDARD'] } })])
    .then(() => '', (error: { stdout: string }) => error.stdout);
  const rules = new Set(failed.trim().split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { type: string }).type));
  assert.deepEqual([...rules].sort(), [
    'ENUM_VALUE_PREFIX', 'ENUM_ZERO_VALUE_SUFFIX', 'RPC_REQUEST_RESPONSE_UNIQUE', 'RPC_REQUEST_STANDARD_NAME', 'RPC_RESPONSE_STANDARD_NAME',
  ]);
});
