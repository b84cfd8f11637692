import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { createReceiptWatcher } from './receipt-watcher.ts';
import { countingClient } from '../../test/support/counting-client.ts';
import { createBlockSchedule, type BlockSchedule } from './block-schedule.ts';

// On a real anvil mining every second (9 s of wall time, apart from receipt-watcher.test.ts so that
// the receipt-watcher mutation area does not wait for it with every mutant).
let anvil: AnvilProcess;
before(async () => { anvil = await startAnvil({ chainId: foundry.id, port: 0 }); });
after(async () => { await anvil?.stop(); });


test('on a chain mining every second, a watcher that knows the schedule asks for the head a few times per block, not every poll interval', async (t) => {
  const testClient = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  await testClient.request({ method: 'evm_setIntervalMining' as never, params: [1] as never });
  const headCallsOverFourBlocks = async (schedule: BlockSchedule | undefined) => {
    const { client, calls } = countingClient(anvil.url);
    const watcher = createReceiptWatcher(client, 50, schedule ? { schedule } : {});
    // A transaction that never comes keeps the watcher polling; the first 5 s teach the schedule.
    const waiting = watcher.wait(`0x${'cd'.repeat(32)}`, 20_000).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const before = calls.get('eth_blockNumber') ?? 0;
    const fromBlock = await testClient.getBlockNumber({ cacheTime: 0 });
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const blocks = Number((await testClient.getBlockNumber({ cacheTime: 0 })) - fromBlock);
    const heads = (calls.get('eth_blockNumber') ?? 0) - before;
    watcher.close();
    await waiting;
    return { heads, blocks };
  };
  try {
    const schedule = createBlockSchedule();
    const every = await headCallsOverFourBlocks(undefined);
    const scheduled = await headCallsOverFourBlocks(schedule);
    t.diagnostic(`head calls over ${scheduled.blocks} blocks: ${scheduled.heads} with the schedule; over ${every.blocks} blocks: ${every.heads} every 50 ms`);
    assert.ok(Math.abs((schedule.intervalMs() ?? 0) - 1000) < 100, `interval learnt: ${schedule.intervalMs()}`);
    assert.ok(scheduled.blocks >= 3 && every.blocks >= 3);
    // Per block: ~3 with the schedule against ~24 (40 on an idle machine) every 50 ms.
    assert.ok((scheduled.heads / scheduled.blocks) * 2 < every.heads / every.blocks,
      `head calls per block: ${scheduled.heads}/${scheduled.blocks} with the schedule, ${every.heads}/${every.blocks} every 50 ms`);
    assert.ok(scheduled.heads >= scheduled.blocks, 'every block is still seen');
  } finally {
    await testClient.request({ method: 'evm_setIntervalMining' as never, params: [0] as never });
  }
});
