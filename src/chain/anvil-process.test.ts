import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, http } from 'viem';
import { startAnvil } from './anvil-process.ts';

// By default anvil keeps about 500 blocks' states in memory and writes older ones under $HOME/.foundry:
// a copy of the state per block, outside DATA_DIR, never removed. The platform's anvils keep the
// latest 64 in memory and none on disk, as a full (non-archive) node does, and still answer what the
// platform reads: recent states, every block.
test('an anvil the platform starts keeps 64 blocks\' states, none on disk: 1,000 blocks leave nothing under $HOME/.foundry', async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'vixpay-anvil-home-'));
  const realHome = process.env.HOME;
  process.env.HOME = home;
  const anvil = await startAnvil({ chainId: 31337 }).finally(() => { process.env.HOME = realHome; });
  try {
    const client = createPublicClient({ transport: http(anvil.url) });
    const account = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
    for (let mined = 0; mined < 1_000; mined += 100) await client.request({ method: 'anvil_mine' as never, params: ['0x64'] as never });
    assert.equal(await client.getBlockNumber(), 1_000n);
    const written = existsSync(path.join(home, '.foundry')) ? readdirSync(path.join(home, '.foundry'), { recursive: true }) : [];
    assert.deepEqual(written, [], 'nothing written under $HOME/.foundry');
    // What the platform reads: the state at recent heights, and every block.
    assert.equal(await client.getBalance({ address: account, blockNumber: 950n }), await client.getBalance({ address: account }));
    assert.equal((await client.getBlock({ blockNumber: 1n })).number, 1n);
    // Older states are gone from memory too (by default they stay, on disk or in memory).
    await assert.rejects(client.getBalance({ address: account, blockNumber: 900n }), /BlockOutOfRange/);
  } finally {
    await anvil.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
