import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, http } from 'viem';
import { startAnvil } from './anvil-process.ts';

// anvil writes the state of every block older than its in-memory window under $HOME/.foundry: a
// whole copy of the state per block, outside DATA_DIR, never removed. The platform's anvils keep
// none on disk, and still answer what the platform reads: recent states, every block and receipt.
test('an anvil the platform starts writes no historical state outside its data: 1,000 blocks leave nothing under $HOME/.foundry', async () => {
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
    // What the platform reads: the state at recent heights, every block and its hash.
    assert.equal(await client.getBalance({ address: account, blockNumber: 900n }), await client.getBalance({ address: account }));
    assert.equal((await client.getBlock({ blockNumber: 1n })).number, 1n);
  } finally {
    await anvil.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
