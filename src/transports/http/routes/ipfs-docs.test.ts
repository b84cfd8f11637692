import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { boundary, buildTestApp, multipartBody, testToken, type TestApp, type TestPart } from '../../../../test/support/ipfs-http.ts';

/**
 * Keeps docs/ipfs-api.md true: every `printf '…' > file` line sets up a file, every `curl` command
 * in a sh block is sent to a real server (the subset of curl the doc uses: -H, -F with @file, <file,
 * ;filename= and ;type=, -r, -o), and its `# → ` line must match the answer (`…` matches anything).
 */
const docPath = new URL('../../../../docs/ipfs-api.md', import.meta.url);

let t: TestApp;
let apiUrl: string;
before(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
after(async () => t.close());

interface Example {
  command: string;
  expected: string | undefined;
}

function examples(markdown: string): { files: Map<string, string>; examples: Example[] } {
  const files = new Map<string, string>([['/dev/null', '']]);
  const found: Example[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = (block[1] ?? '').replace(/\\\n\s*/g, '').split('\n');
    lines.forEach((line, index) => {
      const printf = /^printf '((?:[^'\\]|\\.)*)' > (\S+)$/.exec(line);
      if (printf) files.set(printf[2] ?? '', (printf[1] ?? '').replace(/\\n/g, '\n'));
      if (line.startsWith('curl ')) {
        const answer = lines[index + 1]?.startsWith('# → ') ? lines[index + 1]?.slice(4) : undefined;
        found.push({ command: line, expected: answer });
      }
    });
  }
  return { files, examples: found };
}

/** Shell words of one command line: single and double quotes, `$API_URL` and `$TOKEN` expanded. */
function words(command: string): string[] {
  const expand = (text: string) => text.replace(/\$API_URL/g, apiUrl).replace(/\$TOKEN/g, testToken);
  return [...command.split('|')[0]!.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)].map((m) => (m[2] !== undefined ? m[2] : expand(m[1] ?? m[3] ?? '')));
}

async function run(command: string, files: Map<string, string>): Promise<Response> {
  const args = words(command).slice(1);
  const headers = new Headers();
  const parts: TestPart[] = [];
  let url = '';
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    const value = () => args[++index] ?? '';
    if (arg === '-sS') continue;
    else if (arg === '-H') {
      const header = value();
      headers.set(header.slice(0, header.indexOf(':')), header.slice(header.indexOf(':') + 1).trim());
    } else if (arg === '-r') headers.set('range', `bytes=${value()}`);
    else if (arg === '-o') value();
    else if (arg === '-F') {
      const [field, ...options] = value().split(';');
      const source = field!.slice(field!.indexOf('=') + 1);
      const option = (key: string) => options.find((o) => o.startsWith(`${key}=`))?.slice(key.length + 1);
      const path = source.slice(1);
      const content = files.get(path);
      assert.ok(content !== undefined, `the doc never creates ${path}`);
      // As curl sends them: `<file` is a field without a file name, `@file` a file part.
      if (source.startsWith('<')) parts.push({ contentType: 'text/plain', data: content });
      else parts.push({ filename: option('filename') ?? path.split('/').at(-1), contentType: option('type') ?? 'text/plain', data: content });
    } else if (arg.startsWith('http')) url = arg;
    else assert.fail(`the doc's curl uses ${arg}, which this test does not know`);
  }
  if (parts.length === 0) return fetch(url, { headers });
  headers.set('content-type', `multipart/form-data; boundary=${boundary}`);
  return fetch(url, { method: 'POST', headers, body: multipartBody(parts) });
}

test('docs/ipfs-api.md: every curl example gives the documented answer', async () => {
  const { files, examples: list } = examples(await readFile(docPath, 'utf8'));
  assert.ok(list.length >= 10, `only ${list.length} examples found`);
  for (const { command, expected } of list) {
    const response = await run(command, files);
    const body = (await response.text()).replace(/\n$/, '');
    assert.ok(response.status < 300, `${command}\n→ ${response.status} ${body}`);
    if (expected === undefined) continue;
    const pattern = new RegExp(`^${expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
    assert.match(body, pattern, command);
  }
});
