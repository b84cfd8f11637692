import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createTestClient, http } from 'viem';
import { startAnvil, type AnvilProcess } from '../src/chain/anvil-process.ts';
import { loseBlocks } from './chaos/fleet.ts';

// The chaos fleet's node-rollback (docs/reliability.md, "Chaos") on a real anvil: what a node that went
// back looks like to the platform, and no more than that.
let node: AnvilProcess;
before(async () => { node = await startAnvil({ chainId: 31337 }); });
after(async () => { await node?.stop(); });

test('a rollback loses the blocks of its span, and the blocks after it carry the wall clock\'s time as a network\'s tip does', async () => {
  const client = createPublicClient({ transport: http(node.url) });
  const anvil = createTestClient({ mode: 'anvil', transport: http(node.url) });
  await anvil.mine({ blocks: 2 });
  const before = await client.getBlockNumber();
  const rollback = loseBlocks(node.url, 4_000);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await anvil.mine({ blocks: 3 });
  await rollback;
  assert.equal(await client.getBlockNumber(), before, 'the blocks mined during the span are gone');
  const wallClock = BigInt(Math.floor(Date.now() / 1000));
  await anvil.mine({ blocks: 1 });
  const next = await client.getBlock({ blockTag: 'latest' });
  assert.equal(next.number, before + 1n);
  // anvil's revert winds its clock back by the span (4 s here); a network's next block is of now.
  assert.ok(next.timestamp >= wallClock, `the next block's time ${next.timestamp} is the wall clock's (${wallClock}) or later`);
});
