import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, custom, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { nudgeAnvilMining } from './anvil-mining.ts';
import { devAccount } from '../../test/support/chain-parts.ts';

// The mining nudge on a real anvil. anvil's automine leaving a ready transaction in its pool
// (foundry issue 10122) cannot be caused at will: the node here has automine off, and the client
// the nudge uses reports it on where the test says so, which is the state the nudge is for.
let anvil: AnvilProcess;
before(async () => { anvil = await startAnvil({ chainId: foundry.id }); });
after(async () => { await anvil?.stop(); });

const rpc = () => createPublicClient({ chain: foundry, transport: http(anvil.url) });

/** A client of the anvil that answers `anvil_getAutomine` with `automine`. */
function reportingAutomine(automine: boolean) {
  const inner = http(anvil.url)({ chain: foundry });
  return createPublicClient({
    chain: foundry,
    transport: custom({ request: async (args: { method: string }) => (args.method === 'anvil_getAutomine' ? automine : inner.request(args as never)) }),
  });
}

async function pendingTransaction(): Promise<Hex> {
  await rpc().request({ method: 'evm_setAutomine' as never, params: [false] as never });
  const wallet = createWalletClient({ account: devAccount(1), chain: foundry, transport: http(anvil.url) });
  const nonce = await rpc().getTransactionCount({ address: devAccount(1).address, blockTag: 'pending' });
  return wallet.sendTransaction({ to: devAccount(9).address, value: 1n, nonce });
}

const minedIn = async (hash: Hex) => (await rpc().getTransaction({ hash })).blockNumber;
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

test('a transaction left pending while automine is on gets a block mined for it', async () => {
  const hash = await pendingTransaction();
  nudgeAnvilMining(reportingAutomine(true), hash, 50);
  // Nothing else mines on this node (automine off): a block that comes is the nudge's.
  for (let tries = 0; tries < 40 && (await minedIn(hash)) === null; tries++) await settle();
  assert.notEqual(await minedIn(hash), null);
});

test('a chain whose mining is paused (automine off) is left alone, and a nudge stopped in time does nothing', async () => {
  const hash = await pendingTransaction();
  nudgeAnvilMining(reportingAutomine(false), hash, 50);
  const stop = nudgeAnvilMining(reportingAutomine(true), hash, 100);
  stop();
  await settle();
  assert.equal(await minedIn(hash), null);
  await rpc().request({ method: 'evm_mine' as never, params: [] as never });
});
