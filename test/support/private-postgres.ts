import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './server-process.ts';

/**
 * A PostgreSQL server of one test's own (the machine's PostgreSQL binaries, a new cluster in a
 * temporary folder, trust auth on 127.0.0.1), so that the test can stop, restart and cut it without
 * touching the PostgreSQL other runs share. As root the cluster runs as the `postgres` user, as
 * PostgreSQL refuses to run as root.
 */
export interface PrivatePostgres {
  url: string;
  /** Stops the server (fast: every connection cut), waits `downMs`, starts it again. */
  restart(downMs?: number): Promise<void>;
  /** Ends every connection but the caller's (what a failover, a pooler or an idle timeout does). */
  terminateConnections(): Promise<number>;
  stop(): void;
}

/** Why a private PostgreSQL cannot run here, or false. */
export function privatePostgresMissing(): string | false {
  return binDir() ? false : 'no PostgreSQL binaries under /usr/lib/postgresql';
}

function binDir(): string | undefined {
  try {
    const version = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0];
    return version ? `/usr/lib/postgresql/${version}/bin` : undefined;
  } catch {
    return undefined;
  }
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const root = userInfo().uid === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-pg-'));
  const data = path.join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const run = (program: string, args: string[]) => {
    const command = root ? 'runuser' : path.join(bin, program);
    const argv = root ? ['-u', 'postgres', '--', path.join(bin, program), ...args] : args;
    const result = spawnSync(command, argv, { encoding: 'utf8', cwd: dir });
    if (result.status !== 0) throw new Error(`${program} ${args.join(' ')}: ${result.stderr || result.stdout}`);
  };
  // The same, without blocking the event loop (a caller's proxies and timers go on while it stops and starts).
  const runAsync = (program: string, args: string[]) => new Promise<void>((resolve, reject) => {
    const command = root ? 'runuser' : path.join(bin, program);
    const argv = root ? ['-u', 'postgres', '--', path.join(bin, program), ...args] : args;
    execFile(command, argv, { encoding: 'utf8', cwd: dir }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${program} ${args.join(' ')}: ${stderr || stdout || error.message}`));
      else resolve();
    });
  });
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const startArgs = ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`, 'start'];
  run('pg_ctl', startArgs);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    async restart(downMs = 0) {
      await runAsync('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await runAsync('pg_ctl', startArgs);
    },
    async terminateConnections() {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const result = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`);
        return result.rowCount ?? 0;
      } finally {
        await admin.end();
      }
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
