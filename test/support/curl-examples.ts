import assert from 'node:assert/strict';

// The shell examples of our API guides, read and run the way a reader's shell would run them, so a
// test can keep each documented command and its documented answer true. Markers look like
// `<!-- NAME: example-name [key=value ...] -->`, followed by a ```sh block and then the block
// showing what it prints (```http for curl, any other fence for other commands).

export interface ShellExample {
  name: string;
  attrs: Map<string, string>;
  command: string;
  /** The fenced block after the command: its language and text. */
  output: { lang: string; text: string };
}

/** The examples under `<!-- marker: name ... -->` comments, in document order. */
export function readShellExamples(markdown: string, marker: string): ShellExample[] {
  const found: ShellExample[] = [];
  for (const match of markdown.matchAll(new RegExp(`<!-- ${marker}: (\\S+)((?: \\S+=\\S+)*) -->`, 'g'))) {
    const rest = markdown.slice((match.index ?? 0) + match[0].length);
    const sh = /```sh\n([\s\S]*?)```/.exec(rest);
    assert.ok(sh, `example ${match[1]} needs a sh block`);
    const after = rest.slice(sh.index + sh[0].length);
    const output = /```(\w*)\n([\s\S]*?)```/.exec(after);
    assert.ok(output, `example ${match[1]} needs a block with what the command prints`);
    const next = after.search(new RegExp(`<!-- ${marker}:`));
    assert.ok(next < 0 || output.index < next, `example ${match[1]}: its output block comes before the next example`);
    const attrs = new Map((match[2] ?? '').trim().split(/\s+/).filter(Boolean).map((kv) => kv.split('=') as [string, string]));
    found.push({ name: match[1] as string, attrs, command: sh[1] as string, output: { lang: output[1] as string, text: output[2] as string } });
  }
  return found;
}

/** `$NAME` and `${NAME}` of `vars`; an unset variable fails the test, as `set -u` would. */
function expand(text: string, vars: Record<string, string>): string {
  return text.replace(/\$(?:\{([A-Z_][A-Z0-9_]*)\}|([A-Z_][A-Z0-9_]*))/g, (_all, braced?: string, plain?: string) => {
    const name = (braced ?? plain) as string;
    assert.ok(name in vars, `unset shell variable $${name}`);
    return vars[name] as string;
  });
}

/** A word, or the pipe operator (`{ pipe: true }`) between two commands of a pipeline. */
type Token = string | { pipe: true };

/** Just enough POSIX shell word splitting for our examples: quotes, escapes, $VAR, `|`, line continuations. */
export function shellWords(command: string, vars: Record<string, string>): Token[] {
  const words: Token[] = [];
  let word: string | undefined;
  const text = command.replace(/\\\n/g, ' ');
  const variable = (at: number): [string, number] => {
    const name = /^(?:\{[A-Z_][A-Z0-9_]*\}|[A-Z_][A-Z0-9_]*)/.exec(text.slice(at + 1));
    assert.ok(name, `a $ that is not a variable at ${text.slice(at, at + 20)}`);
    return [expand(`$${name[0]}`, vars), name[0].length];
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] as string;
    if (/\s/.test(c) || c === '|') {
      if (word !== undefined) words.push(word);
      word = undefined;
      if (c === '|') words.push({ pipe: true });
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i += 1; text[i] !== '"'; i += 1) {
        assert.ok(i < text.length, 'unterminated "');
        if (text[i] === '\\' && /["\\$]/.test(text[i + 1] ?? '')) word += text[(i += 1)];
        else if (text[i] === '$') {
          const [value, length] = variable(i);
          word += value;
          i += length;
        } else word += text[i];
      }
    } else if (c === '$') {
      const [value, length] = variable(i);
      word = (word ?? '') + value;
      i += length;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

export interface CurlRequest {
  method: 'GET' | 'POST';
  /** Path and query. */
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

/** `.a.b[0].c = <JSON>`: the one jq filter our examples use, to change a field of a document. */
function jqAssign(input: string, filter: string): string {
  const match = /^\s*((?:\.[A-Za-z_@][\w@]*|\[\d+\])+)\s*=\s*([\s\S]+)$/.exec(filter);
  assert.ok(match, `unsupported jq filter ${filter}`);
  const path = [...(match[1] as string).matchAll(/\.([A-Za-z_@][\w@]*)|\[(\d+)\]/g)].map((m) => m[1] ?? Number(m[2]));
  const document = JSON.parse(input);
  let target = document;
  for (const key of path.slice(0, -1)) target = target[key as string];
  target[path.at(-1) as string] = JSON.parse(match[2] as string);
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The curl request of a shell command: `curl …`, `curl … -d @- <<EOF … EOF`, or `echo "$V" | jq '…' | curl … -d @-`. */
export function curlRequest(command: string, vars: Record<string, string>): CurlRequest {
  let text = command.trim();
  let stdin: string | undefined;
  const heredoc = /<<(['"]?)(\w+)\1\n([\s\S]*?)\n\2(?:\n|$)/.exec(text);
  if (heredoc) {
    stdin = heredoc[1] ? `${heredoc[3]}\n` : `${expand(heredoc[3] as string, vars)}\n`;
    text = `${text.slice(0, heredoc.index)}\n${text.slice(heredoc.index + heredoc[0].length)}`.trim();
  }
  const stages: string[][] = [[]];
  for (const token of shellWords(text.replace(/\|\s*\n/g, '| '), vars)) {
    if (typeof token === 'string') (stages.at(-1) as string[]).push(token);
    else stages.push([]);
  }
  for (const stage of stages.slice(0, -1)) {
    const [program, ...args] = stage;
    if (program === 'echo') stdin = `${args.join(' ')}\n`;
    else if (program === 'jq') stdin = jqAssign(stdin ?? '', args.at(-1) as string);
    else assert.fail(`unsupported command in a pipeline: ${program}`);
  }
  const args = stages.at(-1) as string[];
  assert.equal(args.shift(), 'curl');
  let method: string | undefined;
  let url = '';
  let payload: string | undefined;
  const headers: Record<string, string> = {};
  while (args.length > 0) {
    const arg = args.shift() as string;
    if (arg === '-X') method = args.shift();
    else if (arg === '-H') {
      const [name, ...value] = (args.shift() as string).split(':');
      headers[(name as string).toLowerCase()] = value.join(':').trim();
    } else if (arg === '-d') {
      const data = args.shift() as string;
      if (data === '@-') assert.ok(stdin !== undefined, '-d @- without anything on stdin');
      // curl -d drops the newlines of what it reads from a file or stdin.
      payload = data === '@-' ? (stdin as string).replace(/[\r\n]/g, '') : data;
    } else if (/^https?:\/\//.test(arg)) url = arg;
    else assert.ok(['-s', '-i'].includes(arg), `unsupported curl argument ${arg}`);
  }
  const { pathname, search } = new URL(url);
  return { method: (method ?? (payload === undefined ? 'GET' : 'POST')) as 'GET' | 'POST', url: pathname + search, headers, payload };
}

/** A documented `curl -i` answer: status, the header lines shown, and the body text. */
export function parseHttp(text: string) {
  const [head = '', ...bodyParts] = text.split(/\n\n/);
  const [statusLine = '', ...headerLines] = head.split('\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]);
  const headers = headerLines.filter((line) => line.trim() !== '').map((line) => {
    const at = line.indexOf(':');
    return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()] as const;
  });
  const body = bodyParts.join('\n\n').trim();
  return { status, headers, body };
}
