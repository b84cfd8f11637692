import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EIP1193RequestFn } from 'viem';
import { monotonicReads } from './monotonic-reads.ts';

// Two nodes of one chain behind one URL: `ahead` at block 10 (a receipt in block 9, nonce 5), `behind` at 7 (nonce 3).
const nodes = {
  ahead: { head: '0xa', receipt: { blockNumber: '0x9', transactionHash: '0x01' }, nonce: '0x5' },
  behind: { head: '0x7', receipt: null, nonce: '0x3' },
};
/** Each request answered by the next node of `order` (the last one for ever after). */
function balancer(order: Array<keyof typeof nodes>) {
  const asked: string[] = [];
  const request = (async ({ method }: { method: string }) => {
    const node = nodes[order.length > 1 ? order.shift()! : order[0]!];
    asked.push(method);
    if (method === 'eth_blockNumber') return node.head;
    if (method === 'eth_getTransactionReceipt') return node.receipt;
    if (method === 'eth_getTransactionCount') return node.nonce;
    return null;
  }) as unknown as EIP1193RequestFn;
  return { request, asked };
}
const call = (request: EIP1193RequestFn, method: string) => request({ method, params: [] } as never);

test('the head never goes backwards; a null receipt from a node behind is asked again until a node at the head answers', async () => {
  const { request, asked } = balancer(['ahead', 'behind', 'behind', 'behind', 'behind', 'ahead']);
  const reads = monotonicReads(request, 5_000);
  assert.equal(await call(reads, 'eth_blockNumber'), '0xa');
  assert.equal(await call(reads, 'eth_blockNumber'), '0xa', 'the node behind answers the highest head seen');
  // Null from the node behind, then asked beside eth_blockNumber: behind again, then the node at 10.
  assert.deepEqual(await call(reads, 'eth_getTransactionReceipt'), nodes.ahead.receipt);
  assert.deepEqual(asked.slice(2), ['eth_getTransactionReceipt', 'eth_blockNumber', 'eth_getTransactionReceipt', 'eth_blockNumber', 'eth_getTransactionReceipt']);
});

test('a null receipt from a node at the highest block seen is "not there"; nodes that all stay behind are a chain that went back', async () => {
  const at = balancer(['ahead']);
  const reads = monotonicReads(at.request, 5_000);
  await call(reads, 'eth_blockNumber');
  nodes.ahead.receipt = null as never;
  try {
    assert.equal(await call(reads, 'eth_getTransactionReceipt'), null);
  } finally {
    nodes.ahead.receipt = { blockNumber: '0x9', transactionHash: '0x01' };
  }
  const behind = balancer(['ahead', 'behind']);
  const stuck = monotonicReads(behind.request, 200);
  await call(stuck, 'eth_blockNumber');
  assert.equal(await call(stuck, 'eth_getTransactionReceipt'), null);
  assert.equal(await call(stuck, 'eth_blockNumber'), '0x7', 'from then on the head is the chain\'s own');
});

test('once the nodes disagreed, a nonce is read beside the head and asked again while the node answering is behind', async () => {
  const { request } = balancer(['ahead', 'behind', 'behind', 'behind', 'ahead']);
  const reads = monotonicReads(request, 5_000);
  await call(reads, 'eth_blockNumber');
  await call(reads, 'eth_blockNumber'); // behind: they disagree
  assert.equal(await call(reads, 'eth_getTransactionCount'), '0x5');
});
