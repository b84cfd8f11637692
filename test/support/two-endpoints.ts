import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import type { AnvilProcess } from '../../src/chain/anvil-process.ts';
import { startExternalNode } from './external-node.ts';
import { startRpcProxy, type RpcProxy } from './rpc-proxy.ts';
import { call, startTestPlatform, type TestPlatform } from './platform.ts';

/**
 * The payment network on the operator's node (anvil mining every second), reached through two
 * endpoints (RPC_URLS_ETHEREUM), each a proxy the test can make throttle or fail: the first one
 * the preferred. Its fields are set once the suite's `before` has run.
 */
export interface TwoEndpoints {
  node: AnvilProcess;
  first: RpcProxy;
  second: RpcProxy;
  t: TestPlatform;
}

export interface Account { address: string; secretKey: string }

/** Starts the node, its two endpoints and a platform on them before the file's tests, and stops them after. */
export function useTwoEndpoints(): TwoEndpoints {
  const rig = {} as TwoEndpoints;
  before(async () => {
    const { node, relayerKey } = await startExternalNode({ blockSeconds: 1 });
    rig.node = node;
    rig.first = await startRpcProxy(node.url);
    rig.second = await startRpcProxy(node.url);
    rig.t = await startTestPlatform({ env: { RPC_URLS_ETHEREUM: `${rig.first.url},${rig.second.url}`, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey } });
  });
  after(async () => {
    await rig.t?.stop();
    await rig.first?.close();
    await rig.second?.close();
    await rig.node?.stop();
  });
  return rig;
}

/** `count` new custodial accounts holding 5 VIXP each, and a new receiver. */
export async function fundedSenders(rig: TwoEndpoints, count: number): Promise<{ senders: Account[]; receiver: Account }> {
  const { t } = rig;
  const senders: Account[] = [];
  for (let i = 0; i < count; i++) senders.push((await call(t.app, '/token', 'createAddress', {})).resultData as Account);
  const receiver = (await call(t.app, '/token', 'createAddress', {})).resultData as Account;
  await Promise.all(senders.map((sender) => t.platform.wallet.mint('ethereum', { to: sender.address, amount: '5' })));
  return { senders, receiver };
}

/**
 * Each of `count` transfers of 1 VIXP to `receiver` was answered settled and none 500, the first
 * endpoint did refuse calls meanwhile, and on the node itself each transaction succeeded and the
 * receiver holds exactly one token per transfer answered (none lost, none doubled).
 */
export async function assertEachSettledOnce(
  rig: TwoEndpoints, answers: Array<{ resultCode: string; TransactionID?: string }>, receiver: Account, count: number,
): Promise<void> {
  for (const answer of answers) assert.notEqual(answer.resultCode, '500', JSON.stringify(answer));
  const settled = answers.filter((a) => a.resultCode === '200');
  assert.equal(settled.length, count, `every transfer settled: ${JSON.stringify(answers.filter((a) => a.resultCode !== '200').slice(0, 3))}`);
  assert.ok(rig.first.refused > 0, 'the first endpoint did throttle and fail');
  const direct = createPublicClient({ chain: foundry, transport: http(rig.node.url) });
  for (const hash of new Set(settled.map((a) => a.TransactionID as Hex))) {
    assert.equal((await direct.getTransactionReceipt({ hash })).status, 'success');
  }
  assert.equal((await call(rig.t.app, '/token', 'getBalance', { address: receiver.address })).resultData.balance, String(count));
}
