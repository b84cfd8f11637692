import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expandTestGlob, testsReaching } from '../scripts/test-selection.ts';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

function project(files: Record<string, string>): { root: string; dispose(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'vixpay-selection-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return { root, dispose: () => rmSync(root, { recursive: true, force: true }) };
}

test('the matrix picks a test when what it imports, spawns or names reaches a reader of the switch, transitively', () => {
  const p = project({
    'test/support/stores.ts': "export const store = () => process.env.VIXPAY_TEST_STORE;\n",
    'test/support/platform.ts': "import { store } from './stores.ts';\nexport const start = () => store();\n",
    'test/support/factories.ts': "export const both = ['sqlite', 'postgres'];\n",
    'test/support/child.ts': "import '#shared/env.ts';\n",
    'src/shared/env.ts': "console.log(process.env['VIXPAY_TEST_STORE']);\n",
    'test/through-platform.test.ts': "import { start } from './support/platform.ts';\nstart();\n",
    'test/dynamic.test.ts': "await import('./support/platform.ts');\n",
    'test/spawns.test.ts': "spawn(process.execPath, ['test/support/child.ts']);\n",
    'test/reads-it.test.ts': "if (process.env.VIXPAY_TEST_STORE === 'postgres') {}\n",
    'test/factories-only.test.ts': "import { both } from './support/factories.ts';\n",
    'test/type-only.test.ts': "import type { start } from './support/platform.ts';\nexport type S = typeof start;\n",
    'test/nothing.test.ts': "import assert from 'node:assert';\nassert.ok(1);\n",
  });
  try {
    const tests = expandTestGlob(p.root, 'test/*.test.ts');
    assert.equal(tests.length, 7);
    const picked = testsReaching(p.root, tests, 'VIXPAY_TEST_STORE');
    assert.deepEqual([...picked.keys()].sort(), ['test/dynamic.test.ts', 'test/reads-it.test.ts', 'test/spawns.test.ts', 'test/through-platform.test.ts']);
    assert.equal(picked.get('test/through-platform.test.ts'), 'test/support/stores.ts');
    assert.equal(picked.get('test/spawns.test.ts'), 'src/shared/env.ts');
    assert.equal(testsReaching(p.root, tests, 'VIXPAY_TEST_PAIRING').size, 0);
  } finally {
    p.dispose();
  }
});

test("on this project: the payment suites are picked for both switches, the platform tests for the store's, pure unit tests for neither", () => {
  const tests = [...expandTestGlob(projectRoot, 'src/**/*.test.ts'), ...expandTestGlob(projectRoot, 'test/*.test.ts')];
  const store = testsReaching(projectRoot, tests, 'VIXPAY_TEST_STORE');
  const pairing = testsReaching(projectRoot, tests, 'VIXPAY_TEST_PAIRING');
  for (const file of ['test/payments.test.ts', 'test/rewards.test.ts']) {
    assert.ok(store.has(file) && pairing.has(file), file);
  }
  for (const file of ['test/token-api.test.ts', 'test/cli.test.ts', 'test/x402.test.ts']) assert.ok(store.has(file) && !pairing.has(file), file);
  // Repository tests open both dialects by name (test/support/store-factories.ts): the switch changes nothing.
  for (const file of ['src/commerce/exchange.test.ts', 'src/store/payment-repository.test.ts', 'test/docs-links.test.ts']) {
    assert.ok(!store.has(file) && !pairing.has(file), file);
  }
});
