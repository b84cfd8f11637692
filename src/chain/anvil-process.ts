import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';

export interface AnvilOptions {
  chainId: number;
  /** 0 picks a free port. Anvil always binds to loopback only. */
  port?: number;
  /**
   * anvil's state file, loaded at start when it exists. anvil never writes it itself: the process
   * that runs it takes checkpoints (src/chain/chain-checkpoint.ts).
   */
  loadStatePath?: string;
  /** Where anvil's output goes: kept out of our logs unless asked for. */
  onOutput?: (line: string) => void;
  /**
   * Runs anvil in a session (and process group) of its own, as the platform does with the chains it
   * keeps: Ctrl-C in a terminal, or `kill -TERM -<pgid>`, signals the platform's process group, and
   * the platform then stops anvil itself after its last checkpoint. Killed with -9, the platform
   * leaves it running; the next start adopts it (src/chain/chain-supervisor.ts).
   */
  ownSession?: boolean;
  /** Mines a block every this many seconds (anvil's `--block-time`, fractions allowed: 0.25), on demand when absent. */
  blockTime?: number;
  /** anvil's `--hardfork` (its latest when absent): `cancun` is a network without EIP-7702. */
  hardfork?: string;
}

export interface AnvilProcess {
  url: string;
  pid: number;
  /** SIGTERM, then wait for anvil to exit. */
  stop(): Promise<void>;
  /** Resolves when the process exits for any reason. */
  exited: Promise<number | null>;
}

/** Path of the anvil binary shipped by the npm package @foundry-rs/anvil for this platform. */
export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url);
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'anvil');
}

/** Starts one anvil process and resolves once it listens. */
export async function startAnvil(options: AnvilOptions): Promise<AnvilProcess> {
  // `--prune-history 64`: anvil keeps the states of its latest 64 blocks in memory and drops older
  // ones, as a full (non-archive) node does. By default it keeps about 500 in memory and writes older
  // ones to ~/.foundry/anvil/tmp, a copy per block, outside DATA_DIR and never removed (184 MB of disk
  // and 2.0 GB of memory after 1,500 blocks over 50,000 storage slots; 386 MB of memory with this),
  // and mines faster as its state grows (1.7x after 48,500 settled transfers). Every block,
  // transaction, receipt and log stays (docs/decisions/platform.md "Historical states").
  const args = ['--host', '127.0.0.1', '--port', String(options.port ?? 0), '--chain-id', String(options.chainId), '--prune-history', '64'];
  if (options.loadStatePath && existsSync(options.loadStatePath)) args.push('--load-state', options.loadStatePath);
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime));
  if (options.hardfork !== undefined) args.push('--hardfork', options.hardfork);
  const child = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: options.ownSession === true });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = await waitForListening(child, options.onOutput);
  return {
    url,
    pid: child.pid ?? -1,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function waitForListening(child: ChildProcess, onOutput?: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        onOutput?.(line);
        const match = /Listening on (\S+:\d+)/.exec(line);
        if (match) resolve(`http://${match[1]}`);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`anvil exited with code ${code} before listening`)));
  });
}
