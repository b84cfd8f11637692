import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// The repository stands alone: every link of README and docs/ reaches a file of the repository, and
// every `#anchor` a heading of that file; so do the `docs/….md#anchor` citations in code and tests.

const root = path.resolve(import.meta.dirname, '..');

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .map((file) => path.join(dir, file))
    .filter((file) => !file.includes('node_modules') && statSync(path.join(root, file)).isFile() && keep(file));
}

/** GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces to `-`, repeats numbered). */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(path.join(root, file), 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function checkTarget(from: string, target: string, base: string): string | undefined {
  const [file, anchor] = target.split('#') as [string, string | undefined];
  const resolved = file === '' ? from : path.normalize(path.join(base, decodeURIComponent(file)));
  if (!existsSync(path.join(root, resolved))) return `${from}: ${target} (no ${resolved})`;
  if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) return `${from}: ${target} (no heading #${anchor} in ${resolved})`;
  return undefined;
}

test('every relative link of README.md and docs/ reaches a file and a heading', () => {
  const broken: string[] = [];
  for (const file of ['README.md', ...filesUnder('docs', (f) => f.endsWith('.md'))]) {
    const text = readFileSync(path.join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(target!)) continue;
      const problem = checkTarget(file, target!, path.dirname(file));
      if (problem) broken.push(problem);
    }
  }
  assert.deepEqual(broken, []);
});

test('docs/….md#anchor citations in code, tests and protos reach a heading', () => {
  const broken: string[] = [];
  for (const file of [...filesUnder('src', (f) => /\.(ts|js)$/.test(f)), ...filesUnder('test', (f) => /\.(ts|py|proto)$/.test(f)), ...filesUnder('proto', (f) => /\.(proto|yaml)$/.test(f))]) {
    for (const [, target] of readFileSync(path.join(root, file), 'utf8').matchAll(/\b(docs\/[\w/-]+\.md#[\w-]+)/g)) {
      const problem = checkTarget(file, target!, '.');
      if (problem) broken.push(problem);
    }
  }
  assert.deepEqual(broken, []);
});
