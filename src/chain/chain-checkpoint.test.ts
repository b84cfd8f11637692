import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, http, type PublicClient } from 'viem';
import { startAnvil } from './anvil-process.ts';
import { startChainCheckpoints } from './chain-checkpoint.ts';

const bestBlock = (file: string) => Number(BigInt(JSON.parse(readFileSync(file, 'utf8')).best_block_number));

test('checkpoints are whole state files anvil loads again, taken only when blocks were mined, and once more at stop', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-checkpoint-'));
  const statePath = path.join(dir, 'state.json');
  const anvil = await startAnvil({ chainId: 31337, loadStatePath: statePath });
  const taken: number[] = [];
  // No periodic checkpoint within the test: each is asked for.
  const checkpoints = startChainCheckpoints({ url: anvil.url, statePath, minIntervalMs: 3_600_000, onCheckpoint: (c) => taken.push(c.block) });
  const client = createPublicClient({ transport: http(anvil.url) }) as PublicClient;
  const mine = (blocks: number) => client.request({ method: 'anvil_mine', params: [`0x${blocks.toString(16)}`] } as never);
  try {
    await mine(3);
    await checkpoints.checkpoint();
    assert.equal(bestBlock(statePath), 3);
    const written = statSync(statePath).mtimeMs;
    await checkpoints.checkpoint();
    assert.equal(statSync(statePath).mtimeMs, written, 'no block mined since: no checkpoint');
    assert.deepEqual(taken, [3]);
    assert.equal((statSync(statePath).mode & 0o777), 0o600, 'the state file is private');
    await mine(2);
    await checkpoints.stop();
    assert.deepEqual(taken, [3, 5], 'the stop took a last checkpoint');
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
