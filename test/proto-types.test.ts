import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { listFiles, protoTypesDir, renderProtoTypes, writeProtoTypes } from '../scripts/generate-proto.ts';

// The committed src/gen/proto/ must be exactly what `npm run proto:gen` makes from proto/ today.
const fresh = renderProtoTypes();

test('src/gen/proto holds exactly the generated files (run npm run proto:gen)', () => {
  assert.deepEqual(listFiles(protoTypesDir), [...fresh.keys()].sort());
});

test('generated type files are byte-for-byte what the generator makes (nobody edited them)', () => {
  for (const [file, text] of fresh) {
    assert.equal(readFileSync(path.join(protoTypesDir, file), 'utf8'), text, file);
  }
});

test('proto:gen writes the same tree into an empty directory', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-proto-types-'));
  try {
    const written = writeProtoTypes(path.join(dir, 'proto'));
    assert.deepEqual(listFiles(path.join(dir, 'proto')), written.sort());
    for (const file of written) assert.equal(readFileSync(path.join(dir, 'proto', file), 'utf8'), fresh.get(file), file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the generated types are erasable syntax: no enum, no namespace (Node strips them as they are)', () => {
  for (const [file, text] of fresh) {
    assert.doesNotMatch(text, /^\s*(export\s+)?(declare\s+)?(const\s+)?(enum|namespace|module)\s/m, file);
  }
});
