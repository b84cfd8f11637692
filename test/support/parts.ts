/**
 * Parts of the machine that some tests need beyond Node and PostgreSQL. Without the part such a test
 * skips itself, with a reason that starts `needs <part>:` — unless the part is required, and then a
 * missing part is a failure, not a skip.
 *
 * Required parts: `VIXPAY_REQUIRE=redis,chromium,…` (a comma list of the names below, `all`, or
 * `none`). Unset, CI (CI=true) requires all of them, a developer's run none. .ci/run sets
 * VIXPAY_REQUIRE=all, and besides fails on any skipped test but the Kubo contract's (no Kubo node is
 * installable there).
 */
import { execFileSync } from 'node:child_process';

export const parts = {
  redis: 'start a Redis at 127.0.0.1:6379: apt-get install redis-server',
  chromium: 'apt-get install chromium',
  'python-grpc': 'apt-get install python3-grpcio python3-grpc-tools',
  hardhat: 'npm install (hardhat is a devDependency; its node needs Node.js 22 or later)',
  softhsm2: 'apt-get install softhsm2, and npm install with a C++ compiler (pkcs11js builds natively)',
} as const;

export type Part = keyof typeof parts;

const allParts = Object.keys(parts) as Part[];

/** The required parts for `env` (VIXPAY_REQUIRE, else CI). Throws on an unknown name. */
export function requiredParts(env: NodeJS.ProcessEnv = process.env): ReadonlySet<Part> {
  const list = env.VIXPAY_REQUIRE?.trim();
  if (list === undefined || list === '') {
    const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
    return new Set(ci ? allParts : []);
  }
  const required = new Set<Part>();
  for (const name of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (name === 'none') continue;
    if (name === 'all') allParts.forEach((part) => required.add(part));
    else if ((allParts as string[]).includes(name)) required.add(name as Part);
    else throw new Error(`VIXPAY_REQUIRE: unknown part "${name}" (known: ${allParts.join(', ')}, all, none)`);
  }
  return required;
}

/** A required part is missing. (The values above: how to get each part.) */
export class MissingPartError extends Error {
  override name = 'MissingPartError';
}

/**
 * The `skip` option of a test that needs `part`: `missing` is false when the part is there, or why it
 * is not. Answers false (run) when the part is there, `needs <part>: <why>` (skip) when it is missing
 * and not required, and throws MissingPartError when it is missing and required — at a test file's
 * top level that fails the file, in a hook or a test it fails the tests.
 */
export function skipWithout(part: Part, missing: string | false | undefined, env: NodeJS.ProcessEnv = process.env): string | false {
  if (!missing) return false;
  if (requiredParts(env).has(part)) {
    throw new MissingPartError(`${part} is required (VIXPAY_REQUIRE=${env.VIXPAY_REQUIRE ?? ''}, CI=${env.CI ?? ''}) but missing: ${missing} (${parts[part]})`);
  }
  return `needs ${part}: ${missing} (${parts[part]})`;
}

/** Debian's Python, the one `python3-grpcio` and `python3-grpc-tools` install into. */
export const python = '/usr/bin/python3';

/** Why the Python gRPC tests cannot run here, or false when grpc and grpc_tools import. */
export function pythonGrpcMissing(): false | string {
  try {
    execFileSync(python, ['-c', 'import grpc, grpc_tools'], { stdio: 'ignore' });
    return false;
  } catch {
    return `${python} cannot import grpc and grpc_tools`;
  }
}
