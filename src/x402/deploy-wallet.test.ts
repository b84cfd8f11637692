import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { createTestClient, createWalletClient, getAddress, http, serializeErc6492Signature, zeroAddress, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { createRelayer, type Relayer } from '../chain/relayer.ts';
import { createChainClients, type ChainClients } from '../chain/chain-clients.ts';
import type { ChainEndpoint } from '../chain/chain-supervisor.ts';
import { openStore, type Store } from '../store/db.ts';
import { createChainJournal } from '../store/chain-journal-repository.ts';
import { createLogger } from '#shared/logger.ts';
import type { Faults, FailpointName } from '#shared/failpoints.ts';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';
import { startRpcProxy, type RpcProxy } from '../../test/support/rpc-proxy.ts';
import { deploySafeContracts, safeAddress, safeCreation, safeDeployer, safeOwners, type SafeContracts } from '../../test/support/safe-wallets.ts';
import { deployPayerWallet, deploymentFailedReason, walletDeploymentKind } from './deploy-wallet.ts';

// An ERC-6492 payer's wallet deployed by the platform before its transfer (docs/x402.md#smart-wallet-payers):
// on a real anvil with Safe 1.5.0's published contracts, the platform's relayer and its journal on a
// real SQLite store. The chain is read through test/support/rpc-proxy.ts, which counts the calls:
// what is asserted is the wallet's code, the transactions journaled and mined, and what was never
// asked of the node (no factory call estimated twice).

const network: NetworkName = 'ethereum';
const owner = devAccount(0);
let parts: ChainParts;
let proxy: RpcProxy;
let chains: ChainClients;
let store: Store;
let dataDir: string;
let safe: SafeContracts;
let relayer: Relayer;
let journal: ReturnType<typeof createChainJournal>;
const reached: FailpointName[] = [];
const faults: Faults = { at: (name) => { reached.push(name); }, onChainNodeCrash: () => undefined };
const lines: string[] = [];
let deps: Parameters<typeof deployPayerWallet>[0];

const client = () => parts.chains[network].client;
const testClient = () => createTestClient({ mode: 'anvil', transport: http(parts.anvil.url) });
const estimates = () => proxy.calls.get('eth_estimateGas') ?? 0;
/** A signature's bytes: what the wallet's owners signed does not matter here, only its wrapper. */
const inner = `0x${'11'.repeat(65)}` as Hex;
const wrapped = (factory: Address, data: Hex) => serializeErc6492Signature({ address: factory, data, signature: inner });

const endpointsAt = (url: string) => Object.fromEntries(networkNames.map((n) => [n, { network: n, url, managed: false }])) as Record<NetworkName, ChainEndpoint>;

before(async () => {
  parts = await startChainParts({ managed: true });
  proxy = await startRpcProxy(parts.anvil.url);
  chains = await createChainClients(endpointsAt(proxy.url), 20, {}, undefined, 2_000);
  dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-x402-deploy-'));
  store = await openStore({ dataDir });
  safe = await deploySafeContracts(client(), parts.anvil.url, safeDeployer().account);
  journal = createChainJournal(store.db, randomUUID);
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  relayer = createRelayer({ journal, chains, lanes: [devAccount(2)], clock: Date.now, logger: createLogger('silent'), receiptTimeoutMs: 300 });
  deps = { chains, relayer, walletDeployments: { factories: [safe.factory], journal }, logger: createLogger('warn', logs), faults };
});
after(async () => {
  await testClient().setAutomine(true).catch(() => undefined);
  for (const n of networkNames) chains?.[n].receipts.close();
  await proxy?.close();
  await store?.close();
  await parts?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** A new Safe of two owners: its creation call and address, not deployed. */
async function newSafe() {
  const creation = safeCreation(safe, safeOwners(), BigInt(`0x${randomBytes(8).toString('hex')}`));
  return { creation, address: await safeAddress(client(), safe.factory, creation) };
}

const deploymentsOf = (payer: Address) => store.db.selectFrom('chain_txs').select(['kind', 'reference', 'contract_address', 'to_address', 'status', 'tx_hash'])
  .where('reference', '=', `x402-wallet:${payer}`).execute();

test('a plain signature, or a wrapper naming no deployment (the zero factory, an empty call): ready, nothing asked or sent', async () => {
  const payer = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const calls = proxy.calls.get('eth_getCode') ?? 0;
  assert.equal(await deployPayerWallet(deps, network, payer, inner), 'ready');
  assert.equal(await deployPayerWallet(deps, network, payer, wrapped(zeroAddress, '0x1234')), 'ready');
  assert.equal(await deployPayerWallet(deps, network, payer, wrapped(safe.factory, '0x')), 'ready');
  assert.equal(proxy.calls.get('eth_getCode') ?? 0, calls, 'not even its code read');
  assert.deepEqual(await deploymentsOf(payer), []);
});

test('a wallet deployed already (by anyone): ready, nothing sent', async () => {
  const { creation, address } = await newSafe();
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
  assert.equal((await client().waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: safe.factory, data: creation }) })).status, 'success');
  const before = estimates();
  assert.equal(await deployPayerWallet(deps, network, address, wrapped(safe.factory, creation)), 'ready');
  assert.equal(estimates(), before);
  assert.deepEqual(await deploymentsOf(address), []);
});

test('a factory the operator does not allow-list, or no deployments configured: failed eip6492_factory_not_allowed, nothing sent', async () => {
  const { creation, address } = await newSafe();
  const before = estimates();
  assert.deepEqual(await deployPayerWallet(deps, network, address, wrapped(safe.otherFactory, creation)), { failed: 'eip6492_factory_not_allowed' });
  const { walletDeployments: _, ...none } = deps;
  assert.deepEqual(await deployPayerWallet(none, network, address, wrapped(safe.factory, creation)), { failed: 'eip6492_factory_not_allowed' });
  assert.equal(estimates(), before);
  assert.equal(await client().getCode({ address }), undefined);
});

test('an allow-listed factory: its call sent once by the platform, journaled as the wallet\'s deployment; the wallet has code; again, nothing sent', async () => {
  const { creation, address } = await newSafe();
  reached.length = 0;
  assert.equal(await deployPayerWallet(deps, network, address, wrapped(safe.factory, creation)), 'ready');
  assert.notEqual(await client().getCode({ address }), undefined);
  const rows = await deploymentsOf(address);
  assert.equal(rows.length, 1);
  assert.deepEqual({ ...rows[0], tx_hash: undefined }, {
    kind: walletDeploymentKind, reference: `x402-wallet:${address}`, contract_address: safe.factory, to_address: address, status: 'confirmed', tx_hash: undefined,
  });
  assert.equal(walletDeploymentKind, 'wallet-deploy');
  const tx = await client().getTransaction({ hash: rows[0]!.tx_hash as Hex });
  assert.deepEqual([getAddress(tx.from), tx.to && getAddress(tx.to), tx.input], [relayer.address, safe.factory, creation]);
  assert.deepEqual(reached, ['x402.after-wallet-deployment']);
  const before = estimates();
  assert.equal(await deployPayerWallet(deps, network, address, wrapped(safe.factory, creation)), 'ready');
  assert.equal(estimates(), before);
  assert.equal((await deploymentsOf(address)).length, 1);
});

test('two payments of one new wallet at once: one deployment; the second, after it, finds the code and asks nothing more', async () => {
  const { creation, address } = await newSafe();
  const { faults: _, ...plain } = deps;
  const before = estimates();
  const outcomes = await Promise.all([1, 2].map(() => deployPayerWallet(plain, network, address, wrapped(safe.factory, creation))));
  assert.deepEqual(outcomes, ['ready', 'ready']);
  assert.equal(estimates(), before + 1, 'one factory call estimated');
  assert.equal((await deploymentsOf(address)).length, 1);
});

test('journaled and not mined yet: pending; asked again while unmined, pending, nothing sent again; once mined, ready', async () => {
  const { creation, address } = await newSafe();
  await testClient().setAutomine(false);
  try {
    assert.equal(await deployPayerWallet(deps, network, address, wrapped(safe.factory, creation)), 'pending');
    const before = estimates();
    assert.equal(await deployPayerWallet(deps, network, address, wrapped(safe.factory, creation)), 'pending');
    assert.equal(estimates(), before);
    assert.deepEqual((await deploymentsOf(address)).map((r) => r.status), ['signed']);
    await testClient().mine({ blocks: 1 });
  } finally {
    await testClient().setAutomine(true);
  }
  assert.equal(await deployPayerWallet(deps, network, address, wrapped(safe.factory, creation)), 'ready');
  assert.equal((await deploymentsOf(address)).length, 1);
});

test('a factory call the node says reverts: failed smart_wallet_deployment_failed, nothing journaled', async () => {
  const { address } = await newSafe();
  assert.deepEqual(await deployPayerWallet(deps, network, address, wrapped(safe.factory, '0xdeadbeef')), { failed: deploymentFailedReason });
  assert.equal(deploymentFailedReason, 'smart_wallet_deployment_failed');
  assert.deepEqual(await deploymentsOf(address), []);
});

test('a factory call that reverts because the wallet was deployed meanwhile (by another instance): ready', async () => {
  const { creation, address } = await newSafe();
  // Another sender deploys the wallet between this instance's look at its code and its own call.
  const racing: Relayer = {
    ...relayer,
    async submit(n, request) {
      const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
      await client().waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: safe.factory, data: creation }) });
      return relayer.submit(n, request);
    },
  };
  assert.equal(await deployPayerWallet({ ...deps, relayer: racing }, network, address, wrapped(safe.factory, creation)), 'ready');
  assert.deepEqual(await deploymentsOf(address), [], 'its own call never journaled');
});

test('a factory call mined that leaves no code at the payer (it deploys another wallet): failed, a warning names it', async () => {
  const payer = await newSafe();
  const other = await newSafe();
  const from = lines.length;
  assert.deepEqual(await deployPayerWallet(deps, network, payer.address, wrapped(safe.factory, other.creation)), { failed: 'smart_wallet_deployment_failed' });
  assert.equal(await client().getCode({ address: payer.address }), undefined);
  const [row] = await deploymentsOf(payer.address);
  const logged = lines.slice(from).map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(logged.length, 1);
  assert.deepEqual([logged[0]!.msg, logged[0]!.network, logged[0]!.payer, logged[0]!.factory, logged[0]!.txHash, logged[0]!.status],
    ['x402 wallet deployment left no code at the payer', network, payer.address, safe.factory, row!.tx_hash, 'confirmed']);
});

test('a node that does not answer the relayer: thrown (chain.unavailable), nothing journaled', async () => {
  const { creation, address } = await newSafe();
  const lacking = await startRpcProxy(parts.anvil.url, { lacking: ['eth_getTransactionCount'] });
  const lackingChains = await createChainClients(endpointsAt(lacking.url), 20, {}, undefined, 1_000);
  try {
    const down = createRelayer({ journal, chains: lackingChains, lanes: [devAccount(5)], clock: Date.now, logger: createLogger('silent') });
    await assert.rejects(deployPayerWallet({ ...deps, relayer: down }, network, address, wrapped(safe.factory, creation)), { code: 'chain.unavailable' });
    assert.deepEqual(await deploymentsOf(address), []);
  } finally {
    for (const n of networkNames) lackingChains[n].receipts.close();
    await lacking.close();
  }
});
