import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEventLogs, parseUnits, type Address, type Hex } from 'viem';
import type { AnvilProcess } from '../../src/chain/anvil-process.ts';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { executedTransferCount } from '../../src/chain/mined-receipt.ts';
import { seeded } from '../../bench/arrivals.ts';
import { startExternalNode } from '../support/external-node.ts';
import { call, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { prepareTransfer } from '../support/transfer-scheme.ts';

// The payment network on a node that mines every 0.45 s (BNB Smart Chain) or 0.25 s (opBNB), by RPC
// URL, with payments arriving as customers pay (Poisson, 40/s) through the token API. What an
// operator reads from the chain's own blocks and receipts: most of a block's transfers in one
// settlement transaction, no lane sending two into one block, gas per transfer near what one
// settlement transaction per block costs (each batch's fixed and per-item gas fitted on the same chain,
// with 100 transfers sent at once among them), every transfer settled.
// The latencies an operator checks (p50 within 2 blocks + 300 ms, p99 within 4 blocks + 500 ms, from
// the transfer's call to its answer) are printed, not asserted (docs/performance.md has them).

interface Account { address: string; secretKey: string }
const ratePerSecond = 40;
const windowMs = 10_000;
const accounts = 100;

for (const blockTime of [0.45, 0.25]) {
  describe(`anvil --block-time ${blockTime}`, () => {
    let node: AnvilProcess;
    let t: TestPlatform;
    before(async () => {
      let relayerKey: string;
      ({ node, relayerKey } = await startExternalNode({ blockTime }));
      t = await startTestPlatform({ env: { RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey } });
    });
    after(async () => {
      await t?.stop();
      await node?.stop();
    });

    test(`Poisson ${ratePerSecond}/s on ${blockTime} s blocks: ≥ 80% of a block's transfers in one settlement transaction, one per lane and block, gas within 1.08x one settlement transaction per block, every transfer settled`, async () => {
      const { platform } = t;
      const { client } = platform.chains.ethereum;
      const { settlement, accountSettlement, vixpToken } = platform.contracts.ethereum;
      const senders: Account[] = [];
      for (let i = 0; i < accounts; i++) senders.push((await call(t.app, '/token', 'createAddress', {})).resultData as Account);
      const receiver = (await call(t.app, '/token', 'createAddress', {})).resultData as Account;
      for (let i = 0; i < senders.length; i += 50) {
        await Promise.all(senders.slice(i, i + 50).map((s) => platform.wallet.mint('ethereum', { to: s.address, amount: '100' })));
      }
      await platform.wallet.mint('ethereum', { to: receiver.address, amount: '1' });
      const transfer = async (params: Awaited<ReturnType<typeof prepareTransfer>>) => {
        const { data: _data, ...rest } = params;
        const answer = await call(t.app, '/token', 'transfer', rest);
        assert.equal(answer.resultCode, '200', JSON.stringify(answer));
        return answer.TransactionID as Hex;
      };

      // Each account's first transfer carries its EIP-7702 delegation (priced apart, docs/performance.md): one round of them first.
      await Promise.all((await Promise.all(senders.map((s) => prepareTransfer(t.app, s, receiver.address, '1')))).map(transfer));
      // The floor: 100 transfers signed first, then sent at once (the fullest batch the platform makes).
      const floorSigned = await Promise.all(senders.map((s) => prepareTransfer(t.app, s, receiver.address, '1')));
      const floorHashes = await Promise.all(floorSigned.map(transfer));

      // The schedule is learnt from the heads read meanwhile.
      const learnt = () => Math.abs((platform.chains.ethereum.blocks.intervalMs() ?? 0) - blockTime * 1000) < blockTime * 250;
      for (let i = 0; i < 20 && !learnt(); i++) await transfer(await prepareTransfer(t.app, senders[i % accounts]!, receiver.address, '1'));
      assert.ok(learnt(), `the interval learnt: ${platform.chains.ethereum.blocks.intervalMs()} ms`);

      // The arrivals, each signed beforehand (the app's part), then sent at its time.
      const random = seeded(Math.round(blockTime * 1000));
      const times: number[] = [];
      for (let at = -Math.log(1 - random()) * (1000 / ratePerSecond); at < windowMs; at += -Math.log(1 - random()) * (1000 / ratePerSecond)) times.push(at);
      const signed = await Promise.all(times.map((_, i) => prepareTransfer(t.app, senders[i % accounts]!, receiver.address, '1')));
      const heads = await watchHeads(() => client.getBlockNumber({ cacheTime: 0 }));
      const begin = performance.now();
      const runs = await Promise.all(times.map(async (at, i) => {
        await new Promise((resolve) => setTimeout(resolve, begin + at - performance.now()));
        const sentAt = performance.now();
        const head = heads.latest();
        const hash = await transfer(signed[i]!);
        return { hash, head, ms: performance.now() - sentAt };
      })).finally(() => heads.stop());

      // The chain's own view: every settlement transaction in the blocks the arrivals span.
      const hashes = [...new Set(runs.map((r) => r.hash))];
      const receipts = new Map((await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })))).map((r) => [r.transactionHash, r]));
      const blocks = [...new Set([...receipts.values()].map((r) => r.blockNumber))].sort((a, b) => (a < b ? -1 : 1));
      // Transfers a settlement executed (account items, or EIP-3009 ones on a network without EIP-7702).
      const itemsOf = executedTransferCount;
      // A settlement goes to a settlement contract; a batch of one to the token (EIP-3009) or to the account itself.
      const settlementTargets = new Set([settlement, accountSettlement, vixpToken, ...senders.map((s) => s.address)].map((a) => a.toLowerCase()));
      let inLargest = 0;
      let settledInBlocks = 0;
      let settlementTxs = 0;
      const sizes: Array<{ items: number; gas: bigint }> = [];
      for (let number = blocks[0]!; number <= blocks.at(-1)!; number++) {
        const block = await client.getBlock({ blockNumber: number, includeTransactions: true });
        const ours = block.transactions.filter((tx) => tx.to && settlementTargets.has(tx.to.toLowerCase()));
        const mined = await Promise.all(ours.map(async (tx) => ({ tx, receipt: await client.getTransactionReceipt({ hash: tx.hash }) })));
        const settlements = mined.filter(({ receipt }) => itemsOf(receipt) > 0);
        const lanes = new Map<Address, number>();
        for (const { tx } of settlements) lanes.set(tx.from, (lanes.get(tx.from) ?? 0) + 1);
        for (const [lane, count] of lanes) assert.equal(count, 1, `block ${number}: lane ${lane} sent ${count} settlement transactions`);
        const items = settlements.map(({ receipt }) => itemsOf(receipt));
        settlementTxs += settlements.length;
        settledInBlocks += items.reduce((a, b) => a + b, 0);
        inLargest += Math.max(0, ...items);
        for (const { receipt } of settlements) sizes.push({ items: itemsOf(receipt), gas: receipt.gasUsed });
      }
      const gas = [...receipts.values()].reduce((sum, r) => sum + r.gasUsed, 0n);
      const fullest = [...new Set(floorHashes)].map((hash) => [hash, floorHashes.filter((h) => h === hash).length] as const).sort((a, b) => b[1] - a[1])[0]![0];
      const floorReceipt = await client.getTransactionReceipt({ hash: fullest });
      const line = batchLine(floorReceipt.gasUsed, itemsOf(floorReceipt), sizes);
      const floor = line.fixed / 100 + line.perItem;
      // What the run would cost in one settlement transaction per block it spans: the bound.
      const oneTxPerBlock = (line.fixed * blocks.length + line.perItem * runs.length) / runs.length;
      const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
      const inBlocks = runs.map((r) => Number(receipts.get(r.hash)!.blockNumber - r.head)).sort((a, b) => a - b);
      const pick = <T>(sorted: T[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
      const figures = {
        blockTime, arrivals: runs.length, settlementTxs, blocks: blocks.length,
        inOneTx: Number((inLargest / settledInBlocks).toFixed(3)), txPerBlock: Number((settlementTxs / blocks.length).toFixed(2)),
        gasPerTransfer: Math.round(Number(gas) / runs.length), floor: Math.round(floor), floorBatch: itemsOf(floorReceipt), gasVsFloor: Number((Number(gas) / runs.length / floor).toFixed(3)),
        oneTxPerBlock: Math.round(oneTxPerBlock), gasVsOneTxPerBlock: Number((Number(gas) / runs.length / oneTxPerBlock).toFixed(3)),
        p50Ms: Math.round(pick(ms, 0.5)), p99Ms: Math.round(pick(ms, 0.99)), p50Blocks: pick(inBlocks, 0.5), p99Blocks: pick(inBlocks, 0.99),
        // What an operator checks, printed: not asserted, they do not hold on a loaded machine (p50
        // 1.8 s on 0.45 s blocks at a load average of 10 beside the two CPU-bound processes).
        p50WithinBound: pick(ms, 0.5) <= 2 * blockTime * 1000 + 300, p99WithinBound: pick(ms, 0.99) <= 4 * blockTime * 1000 + 500,
      };
      process.stdout.write(`${JSON.stringify(figures)}\n`);

      assert.equal(settledInBlocks, runs.length, 'the blocks carry exactly the transfers sent');
      assert.ok(inLargest >= 0.8 * settledInBlocks, `${inLargest} of ${settledInBlocks} transfers in their block's largest settlement transaction`);
      assert.ok(Number(gas) / runs.length <= 1.08 * oneTxPerBlock, `${figures.gasPerTransfer} gas per transfer, ${figures.oneTxPerBlock} in one transaction per block (floor ${figures.floor})`);
      for (const receipt of receipts.values()) assert.equal(receipt.status, 'success');
      // Every transfer settled once, in the transaction it was answered with, and the payee holds them all.
      const expected = new Map<string, number>();
      for (const [i, run] of runs.entries()) {
        const key = `${run.hash}:${senders[i % accounts]!.address}`.toLowerCase();
        expected.set(key, (expected.get(key) ?? 0) + 1);
      }
      for (const [key, count] of expected) {
        const [hash, sender] = key.split(':') as [Hex, string];
        const moved = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipts.get(hash)!.logs })
          .filter((log) => log.args.from.toLowerCase() === sender && log.args.to.toLowerCase() === receiver.address.toLowerCase() && log.args.value === parseUnits('1', 18));
        assert.equal(moved.length, count, `${sender}'s transfers in ${hash}`);
      }
      const balance = await client.readContract({ address: vixpToken, abi: vixpTokenAbi, functionName: 'balanceOf', args: [receiver.address as Address] });
      assert.ok(balance >= parseUnits(String(1 + 2 * accounts + runs.length), 18), `payee holds ${balance}`);
    });
  });
}

/**
 * A settlement transaction's gas as a line, fixed + per item × items, through every batch of the run
 * and the fullest one (100 items sent at once); a batch of one is the token's or account's own call,
 * off that line.
 */
function batchLine(fullestGas: bigint, fullestItems: number, sizes: Array<{ items: number; gas: bigint }>): { fixed: number; perItem: number } {
  const points = [...sizes, { items: fullestItems, gas: fullestGas }].filter((s) => s.items > 1);
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.items, 0) / n;
  const my = points.reduce((s, p) => s + Number(p.gas), 0) / n;
  const perItem = points.reduce((s, p) => s + (p.items - mx) * (Number(p.gas) - my), 0) / points.reduce((s, p) => s + (p.items - mx) ** 2, 0);
  return { fixed: my - perItem * mx, perItem };
}

/** The chain's head as the test sees it, polled every 25 ms. */
async function watchHeads(head: () => Promise<bigint>) {
  let latest = await head();
  let running = true;
  void (async () => {
    while (running) {
      latest = await head().catch(() => latest);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  return { latest: () => latest, stop: () => { running = false; } };
}
