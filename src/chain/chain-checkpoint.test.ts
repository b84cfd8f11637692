import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, http, type PublicClient } from 'viem';
import { startAnvil } from './anvil-process.ts';
import { startChainCheckpoints } from './chain-checkpoint.ts';

const bestBlock = (file: string) => Number(BigInt(JSON.parse(readFileSync(file, 'utf8')).best_block_number));

test('checkpoints are whole state files anvil loads again: one at once without a state file, then only when blocks were mined, and once more at stop', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-checkpoint-'));
  const statePath = path.join(dir, 'state.json');
  const anvil = await startAnvil({ chainId: 31337, loadStatePath: statePath });
  const taken: number[] = [];
  // No periodic checkpoint within the test: each is asked for.
  const checkpoints = startChainCheckpoints({ url: anvil.url, statePath, minIntervalMs: 3_600_000, onCheckpoint: (c) => taken.push(c.block) });
  const client = createPublicClient({ transport: http(anvil.url) }) as PublicClient;
  const mine = (blocks: number) => client.request({ method: 'anvil_mine', params: [`0x${blocks.toString(16)}`] } as never);
  try {
    await checkpoints.ready;
    assert.equal(bestBlock(statePath), 0, 'a node without a state file is checkpointed at once, before any block');
    await mine(3);
    await checkpoints.checkpoint();
    assert.equal(bestBlock(statePath), 3);
    const written = statSync(statePath).mtimeMs;
    await checkpoints.checkpoint();
    assert.equal(statSync(statePath).mtimeMs, written, 'no block mined since: no checkpoint');
    assert.deepEqual(taken, [0, 3]);
    assert.equal((statSync(statePath).mode & 0o777), 0o600, 'the state file is private');
    await mine(2);
    await checkpoints.stop();
    assert.deepEqual(taken, [0, 3, 5], 'the stop took a last checkpoint');
    assert.deepEqual(readdirSync(dir), ['state.json'], 'no temporary file left behind');
  } finally {
    await anvil.stop();
  }
  // The next start loads the last checkpoint.
  const again = await startAnvil({ chainId: 31337, loadStatePath: statePath });
  try {
    const reloaded = createPublicClient({ transport: http(again.url) }) as PublicClient;
    assert.equal(await reloaded.getBlockNumber(), 5n);
  } finally {
    await again.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a chain whose state dump is larger than an RPC client\'s usual response limit is checkpointed whole', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-checkpoint-'));
  const statePath = path.join(dir, 'state.json');
  const anvil = await startAnvil({ chainId: 31337 });
  const checkpoints = startChainCheckpoints({ url: anvil.url, statePath, minIntervalMs: 3_600_000 });
  try {
    // 12 MiB of code that does not compress, in 384 accounts: the dump (gzip, as hex) is over 20 MiB.
    const client = createPublicClient({ transport: http(anvil.url, { timeout: 60_000 }) }) as PublicClient;
    const codes = new Map<string, string>();
    for (let i = 1; i <= 384; i++) {
      const address = `0x${(0x1000 + i).toString(16).padStart(40, '0')}`;
      codes.set(address, `0x${randomBytes(32 * 2 ** 10).toString('hex')}`);
      await client.request({ method: 'anvil_setCode', params: [address, codes.get(address)] } as never);
    }
    await checkpoints.checkpoint(true);
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as { accounts: Record<string, { code: string }> };
    const kept = Object.fromEntries(Object.entries(state.accounts).map(([address, account]) => [address.toLowerCase(), account.code]));
    for (const [address, code] of codes) assert.equal(kept[address], code, `the checkpoint holds ${address}'s code whole`);
  } finally {
    await checkpoints.stop();
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
