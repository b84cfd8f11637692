import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, createWalletClient, http, parseEther, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAddress } from 'viem/accounts';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { waitFor } from './support/wait-for.ts';

// Item 1 of issue 28: Ctrl-C in the terminal of `npm start` (SIGINT to the whole process group)
// killed the embedded anvils with the platform, before its last checkpoint: every block since the
// one before was lost (an outside transfer gone after the next start, four `chain state checkpoint
// failed` warnings). systemd's stop and `kill -TERM -<pgid>` signal the group the same way. The
// platform runs its anvils in sessions of their own and stops them after the final checkpoint;
// a `kill -9` of the whole group leaves them running, and the next start adopts them, blocks and all.

const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-stop-'));
const env = { DATA_DIR: dataDir, LOG_LEVEL: 'info' };
const dev = mnemonicToAccount('test test test test test test test test test test test junk');
let server: ServerProcess | undefined;

const anvilUrl = () => readFileSync(path.join(dataDir, 'chains', 'ethereum', 'anvil.url'), 'utf8').trim();
const anvilPids = () => ['ethereum', 'optimism', 'bnb', 'opbnb'].map((network) => Number(readFileSync(path.join(dataDir, 'chains', network, 'anvil.pid'), 'utf8')));
const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const start = async () => { server = await startServerProcess(env, 120_000, { detached: true }); return server; };

/** 1 ETH to a fresh address from anvil's first dev account, sent to the ethereum anvil as anyone could, mined. */
async function outsideTransfer(): Promise<`0x${string}`> {
  const to = privateKeyToAddress(generatePrivateKey());
  const url = anvilUrl();
  const hash: Hex = await createWalletClient({ account: dev, chain: foundry, transport: http(url) }).sendTransaction({ to, value: parseEther('1') });
  await createPublicClient({ chain: foundry, transport: http(url) }).waitForTransactionReceipt({ hash });
  return to;
}

const balanceOf = (address: `0x${string}`) => createPublicClient({ chain: foundry, transport: http(anvilUrl()) }).getBalance({ address });

/** `signal` to the server's whole process group, as a terminal or systemd sends it; resolves on the server's exit. */
async function signalGroup(live: ServerProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = once(live.child, 'exit');
  process.kill(-live.child.pid!, signal);
  await exited;
}

before(async () => { await start(); });
after(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) await signalGroup(server, 'SIGTERM').catch(() => undefined);
  // What a failed test may have left running.
  for (const pid of existsSync(path.join(dataDir, 'chains', 'opbnb', 'anvil.pid')) ? anvilPids() : []) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} to the process group: an outside transfer mined just before is there after the next start; the anvils were stopped after the last checkpoint`, async () => {
    const live = server!;
    const to = await outsideTransfer();
    const pids = anvilPids();
    await signalGroup(live, signal);
    assert.equal(live.child.exitCode, 0, live.output());
    assert.doesNotMatch(live.output(), /chain state checkpoint failed/);
    assert.deepEqual(pids.filter(alive), [], 'the platform stopped its anvils');
    await start();
    assert.equal(await balanceOf(to), parseEther('1'), `the transfer is still on chain after ${signal}`);
  });
}

test('kill -9 of the process group: the anvils keep running with every block, and the next start adopts them', async () => {
  const live = server!;
  const to = await outsideTransfer();
  const pids = anvilPids();
  await signalGroup(live, 'SIGKILL');
  assert.deepEqual(pids.filter((pid) => !alive(pid)), [], 'the anvils are not in the platform\'s process group');
  await start();
  assert.deepEqual(anvilPids(), pids, 'the running anvils were adopted');
  assert.match(server!.output(), /adopting the anvil left running by an earlier process/);
  assert.equal(await balanceOf(to), parseEther('1'));
  await signalGroup(server!, 'SIGTERM');
  await waitFor(() => pids.every((pid) => !alive(pid)), { timeoutMs: 30_000, message: 'the adopted anvils stopped with the platform' });
});
