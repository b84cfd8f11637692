import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer } from 'node:net';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { testStoreEnv } from './stores.ts';

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** The gRPC port it listens on: `env.GRPC_PORT`, or the one picked for it. */
  grpcPort: number;
  output(): string;
}

/**
 * A port free now for a server started next, below the kernel's ephemeral range: a port the kernel
 * handed out (`listen(0)`) and that was closed again may be taken as the local port of any outgoing
 * connection before the server binds it (EADDRINUSE, seen with two test files and their database and
 * node connections at once); a port below the range is never handed out that way. Random, so test
 * files picking at the same moment rarely meet; tried by binding it.
 */
export async function freePort(): Promise<number> {
  const ephemeralFrom = ephemeralRangeStart();
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = ephemeralFrom > 20_000 ? 20_000 + randomInt(ephemeralFrom - 20_000) : 0;
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    const { port: free } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    if (handedOut.has(free)) continue;
    handedOut.add(free);
    return free;
  }
  throw new Error('no free port below the ephemeral range after 50 tries');
}

/** Ports this process handed out: never twice, however the random picks fall. */
const handedOut = new Set<number>();

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 0;
  } catch {
    return 0;
  }
}

/**
 * `node src/main.ts` as a user runs it, waiting until /healthz answers 200. With
 * VIXPAY_TEST_STORE=postgres and no DATABASE_URL in `env`, the server runs on the PostgreSQL schema of
 * its DATA_DIR (`testStoreEnv`: the same schema each time it starts on that directory; dropped when
 * the test file ends); a CLI run on that directory takes the same `testStoreEnv(dataDir)`.
 * `detached`: the server in a process group of its own (see below).
 *
 * HTTP_PORT and GRPC_PORT not in `env` are picked here; a server that could not listen on a picked one
 * (EADDRINUSE: another test's process took it between the pick and the bind) is started again on new
 * ones, up to three times. A port the test chose is its to keep: taken, the start fails.
 */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 90_000, options: { detached?: boolean } = {}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(env, timeoutMs, options);
    } catch (error) {
      const picked = error instanceof PortTaken && error.port !== env.HTTP_PORT && error.port !== env.GRPC_PORT;
      if (!picked || attempt === 3) throw error;
    }
  }
}

/** The server could not listen on `port` (EADDRINUSE). */
class PortTaken extends Error {
  readonly port: string;
  constructor(port: string, message: string) {
    super(message);
    this.port = port;
  }
}

async function startOnce(env: Record<string, string>, timeoutMs: number, options: { detached?: boolean }): Promise<ServerProcess> {
  const port = Number(env.HTTP_PORT ?? (await freePort()));
  const grpcPort = Number(env.GRPC_PORT ?? (await freePort()));
  const storeEnv = env.DATABASE_URL === undefined && env.DATA_DIR ? await testStoreEnv(env.DATA_DIR) : {};
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...storeEnv, ...env, GRPC_PORT: String(grpcPort), HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // `detached`: the server leads a process group of its own, as a shell's job does: a test signals
    // the whole group (`process.kill(-pid, ...)`) as Ctrl-C in a terminal or systemd's stop does.
    detached: options.detached === true,
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const message = `server exited (${child.exitCode}):\n${output}`;
      const taken = /EADDRINUSE[^\n]*?:(\d+)\b/.exec(output)?.[1];
      throw taken === undefined ? new Error(message) : new PortTaken(taken, message);
    }
    const ok = await fetch(`${baseUrl}/healthz`).then((r) => r.ok, () => false);
    if (ok) return { child, baseUrl, grpcPort, output: () => output };
    await sleep(200);
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become healthy:\n${output}`);
}

/** SIGTERM (clean) or SIGKILL (crash), and wait for the exit. */
export async function stopServerProcess(server: ServerProcess, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<number | null> {
  if (server.child.exitCode !== null) return server.child.exitCode;
  const exited = once(server.child, 'exit');
  server.child.kill(signal);
  const [code] = await exited;
  return code as number | null;
}

let id = 1;
export async function rpcOver(baseUrl: string, path: string, method: string, params?: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
  });
  const body = await response.json() as any;
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.msg}`);
  return body.result;
}
