import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createPublicClient, http, type PublicClient } from 'viem';
import { startAnvil } from './anvil-process.ts';
import { startChainCheckpoints } from './chain-checkpoint.ts';
import { waitFor } from '../../test/support/wait-for.ts';

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

// anvil answers nothing else while it serializes its blocks for a dump, so a periodic checkpoint
// waits for a pause in the chain's traffic; a node that never pauses is checkpointed anyway.
test('a due checkpoint waits for a pause in mining, and is taken anyway once it has waited its longest', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-checkpoint-'));
  const anvil = await startAnvil({ chainId: 31337 });
  const client = createPublicClient({ transport: http(anvil.url) }) as PublicClient;
  const mineFor = async (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      await client.request({ method: 'evm_mine' } as never);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return client.getBlockNumber({ cacheTime: 0 });
  };
  const checkpointsWhile = async (options: { quietMs: number; maxDeferMs: number }, run: () => Promise<bigint>) => {
    const taken: number[] = [];
    const checkpoints = startChainCheckpoints({
      url: anvil.url, statePath: path.join(dir, `state-${options.quietMs}.json`), minIntervalMs: 200, ...options, onCheckpoint: (c) => taken.push(c.block),
    });
    await checkpoints.ready;
    taken.length = 0;
    const head = await run();
    const duringMining = [...taken];
    return { head: Number(head), duringMining, taken, checkpoints };
  };
  try {
    // Due every 200 ms, but mining goes on for 1.5 s: the checkpoint comes after it stops.
    const paused = await checkpointsWhile({ quietMs: 500, maxDeferMs: 60_000 }, () => mineFor(1_500));
    assert.deepEqual(paused.duringMining, [], 'no checkpoint while blocks are mined');
    await waitFor(() => paused.taken.includes(paused.head), { timeoutMs: 10_000, message: 'a checkpoint of the head once mining paused' });
    await paused.checkpoints.stop();
    // Never quiet: taken anyway after waiting 400 ms at most.
    const busy = await checkpointsWhile({ quietMs: 60_000, maxDeferMs: 400 }, () => mineFor(2_000));
    await busy.checkpoints.stop();
    assert.ok(busy.duringMining.some((block) => block < busy.head), `checkpoints while mining: ${busy.duringMining.join(', ')} (head ${busy.head})`);
  } finally {
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

// The dump is streamed into the file as it arrives: an answer that is an error, or ends early (the
// node killed mid-dump), must leave the last whole checkpoint in place and nothing beside it.
// A JSON-RPC endpoint of our own here: a real anvil answers neither way on demand.
test('a dump answered with an error, or cut off, leaves the last checkpoint as it was and no temporary file', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-checkpoint-'));
  const statePath = path.join(dir, 'state.json');
  writeFileSync(statePath, '{"last":"whole"}');
  let answer: 'error' | 'cut' | 'whole' = 'error';
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    request.on('end', () => {
      const { method, id } = JSON.parse(body) as { method: string; id: number };
      response.setHeader('content-type', 'application/json');
      if (method === 'eth_blockNumber') return response.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x5' }));
      const dump = gzipSync('{"best_block_number":"0x5"}').toString('hex');
      if (answer === 'error') return response.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message: 'dump failed' } }));
      if (answer === 'cut') {
        response.write(`{"jsonrpc":"2.0","id":${id},"result":"0x${dump.slice(0, 20)}`);
        return setTimeout(() => response.destroy(), 20);
      }
      return response.end(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${dump}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const checkpoints = startChainCheckpoints({ url: `http://127.0.0.1:${port}`, statePath, minIntervalMs: 3_600_000 });
  try {
    await assert.rejects(checkpoints.checkpoint(true), /dump failed/);
    assert.equal(readFileSync(statePath, 'utf8'), '{"last":"whole"}');
    answer = 'cut';
    await assert.rejects(checkpoints.checkpoint(true));
    assert.equal(readFileSync(statePath, 'utf8'), '{"last":"whole"}');
    assert.deepEqual(readdirSync(dir), ['state.json'], 'no temporary file left behind');
    answer = 'whole';
    await checkpoints.checkpoint(true);
    assert.equal(readFileSync(statePath, 'utf8'), '{"best_block_number":"0x5"}');
  } finally {
    await checkpoints.stop().catch(() => undefined);
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
