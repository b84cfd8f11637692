import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createPublicClient, http } from 'viem';
import { loadConfig } from '../../src/config/config.ts';
import { loadRelayerLanes } from '../../src/chain/platform-account.ts';
import { skipWithout } from './parts.ts';
import { freePort } from './server-process.ts';
import { waitFor } from './wait-for.ts';

// Hardhat's node (EDR), started as a user starts it (`npx hardhat node`, with the tiny config of
// test/support/hardhat.config.ts), for the tests that run the platform against a second EVM
// implementation (test/hardhat-node.test.ts) and against its OP-stack chain (test/hardhat-op-fees.test.ts).

const root = path.resolve(import.meta.dirname, '../..');
const configFile = path.join(root, 'test/support/hardhat.config.ts');

function hardhatCli(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return path.join(path.dirname(require.resolve('hardhat/package.json')), 'dist/src/cli.js');
  } catch {
    return undefined;
  }
}

const cli = hardhatCli();
const nodeMajor = Number(process.versions.node.split('.')[0]);
export const skipWithoutHardhat = skipWithout('hardhat', !cli ? 'the hardhat package is not installed' : nodeMajor < 22 ? `Node.js ${process.versions.node} is older than 22` : false);

/** The relayer's accounts for `key` (the platform account and its lanes, RELAYER_LANES by default): what needs gas on a node we do not run. */
export function relayerLanesOf(key: `0x${string}`) {
  return loadRelayerLanes({ privateKey: key, dataDir: root, vault: undefined as never, count: loadConfig({}).relayerLanes });
}

export type HardhatNode = Awaited<ReturnType<typeof startHardhatNode>>;

/** `hardhat node` (with `args`, e.g. `--chain-type op`) on a free loopback port; resolves once it answers eth_chainId. */
export async function startHardhatNode(args: readonly string[] = []): Promise<{ url: string; child: ChildProcess; output(): string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [cli as string, '--config', configFile, 'node', '--hostname', '127.0.0.1', '--port', String(port), ...args], {
    cwd: root, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
  const url = `http://127.0.0.1:${port}`;
  const probe = createPublicClient({ transport: http(url, { retryCount: 0 }) });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`hardhat node exited (${child.exitCode}):\n${output}`);
      return probe.getChainId().then(() => true, () => false);
    }, { timeoutMs: 90_000, intervalMs: 200, message: `hardhat node answers at ${url}` });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, child, output: () => output, stop };
}

