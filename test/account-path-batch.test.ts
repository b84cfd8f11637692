import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, parseEventLogs, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { call } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { newUser, startPaymentTest, type PaymentTest } from './support/payments.ts';
import { deployShapedToken, shapedTokens } from './support/shaped-tokens.ts';
import { vixpayAccountAbi } from '../src/gen/contracts/vixpay-account.ts';
import { tokenAllowCommand } from '../src/cli/token-commands.ts';
import { createLogger } from '../src/shared/logger.ts';
import { cliDeps } from '../src/main.ts';
import { vixpAccountSettlementAbi } from '../src/gen/contracts/vixp-account-settlement.ts';
import { dateOf } from '../src/statements/statement-day.ts';
import { sample } from './support/metrics-text.ts';

// Account transfers batched (docs/decisions/tokens.md, "Custodial transfers on the account path"):
// six custodial accounts, none delegated yet, pay a store in a USDT-like token at once through the
// token API. Batches hold six (SETTLEMENT_BATCH_MAX_ITEMS) and a full one goes at once, so the six
// share one VixpAccountSettlement transaction (the window, 5 s, only bounds a batch left short):
// type 4, carrying the six delegations; each transfer answered from that receipt.

const payers = 6;
let p: PaymentTest;
before(async () => {
  p = await startPaymentTest({ SETTLEMENT_BATCH_MAX_ITEMS: String(payers), SETTLEMENT_BATCH_WINDOW_MS: '5000' });
});
after(async () => { await p?.stop(); });

test('six first account transfers at once: one type-4 batch through VixpAccountSettlement carrying six delegations, each transfer settled, balances exact', async () => {
  const network = p.t.platform.config.paymentNetwork;
  const { url, chainId, client: platformClient } = p.t.platform.chains[network];
  const client = createPublicClient({ transport: http(url) });
  const deployer = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 9 });
  const wallet = createWalletClient({ account: deployer, chain: { ...platformClient.chain!, id: chainId }, transport: http(url) });
  const token = await deployShapedToken(client as never, wallet, 'usdt');
  await tokenAllowCommand.run({ config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values: { contract: token, holder: deployer.address }, positionals: [] });
  const store = await p.t.platform.payments.addStore({ tid: 'T-AB01', name: 'Batch Cafe' });
  const balanceOf = (address: string) => client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });

  const users = [];
  for (let i = 0; i < payers; i++) {
    const user = await newUser(p);
    await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'transfer', args: [user.address as Address, 3_000_000n], chain: wallet.chain, account: deployer }) });
    users.push(user);
  }
  const requests = await Promise.all(users.map(async (user, i) => {
    const { data: _signed, ...params } = await prepareTransfer(p.t.app, user, store.settlementAddress, `1.${i + 1}`);
    return params;
  }));
  const metricsBefore = await transferMetrics(network);
  const answers = await Promise.all(requests.map((params) => call(p.t.app, '/token', 'transfer', { ...params, contractAddress: token })));
  for (const answer of answers) assert.equal(answer.resultCode, '200', JSON.stringify(answer));

  const hashes = new Set(answers.map((answer) => answer.resultData.transactionId as `0x${string}`));
  assert.equal(hashes.size, 1, 'one settlement transaction');
  const [hash] = [...hashes] as [`0x${string}`];
  const tx = await client.getTransaction({ hash });
  assert.equal(tx.type, 'eip7702');
  assert.equal(tx.authorizationList?.length, payers);
  assert.equal(getAddress(tx.to!), p.t.platform.contracts[network].accountSettlement);
  const receipt = await client.getTransactionReceipt({ hash });
  assert.deepEqual(parseEventLogs({ abi: vixpAccountSettlementAbi, eventName: 'ItemSkipped', logs: receipt.logs }), []);
  for (const [i, user] of users.entries()) assert.equal(await balanceOf(user.address), 3_000_000n - 1_000_000n - BigInt(i + 1) * 100_000n);
  assert.equal(await balanceOf(store.settlementAddress), 6_000_000n + 2_100_000n);

  // The batch's six executed items count as six transfers: in /metrics, in the operator's day (and
  // the console, which reads the same rows), with its gas per transfer.
  const metricsAfter = await transferMetrics(network);
  assert.deepEqual([metricsAfter.sum - metricsBefore.sum, metricsAfter.count - metricsBefore.count], [payers, 1], 'one settlement transaction of six transfers');
  const block = await client.getBlock({ blockNumber: receipt.blockNumber });
  const day = await p.t.platform.statements.operatorDay(dateOf(Number(block.timestamp) * 1000, p.t.config.timeZone));
  const listed = day.transactions.find((t) => t.txHash.toLowerCase() === hash.toLowerCase());
  assert.equal(listed?.transfers, payers, JSON.stringify(listed));
  const costs = day.networks.find((n) => n.network === network)!;
  assert.ok(costs.transfers >= payers && costs.averageGasPerTransfer !== null && costs.transfersPerTransaction !== null, JSON.stringify(costs));
});

test('custodial VIXP takes the account path too: first transfers carry their delegations, later ones none and ask the node no code; the balances exact', async () => {
  const network = p.t.platform.config.paymentNetwork;
  const client = createPublicClient({ transport: http(p.t.platform.chains[network].url) });
  const { vixpToken, account, accountSettlement } = p.t.platform.contracts[network];
  const store = await p.t.platform.payments.addStore({ tid: 'T-AB03', name: 'VIXP Cafe' });
  const users: Awaited<ReturnType<typeof newUser>>[] = [];
  for (let i = 0; i < payers; i++) users.push(await newUser(p, '10'));
  const vixpOf = (address: string) => client.readContract({ address: vixpToken, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });
  const storeBefore = await vixpOf(store.settlementAddress);
  const pay = async (amountOf: (i: number) => string) => {
    const requests = await Promise.all(users.map(async (user, i) => {
      const { data: _signed, ...params } = await prepareTransfer(p.t.app, user, store.settlementAddress, amountOf(i));
      return params;
    }));
    const answers = await Promise.all(requests.map((params) => call(p.t.app, '/token', 'transfer', params)));
    for (const answer of answers) assert.equal(answer.resultCode, '200', JSON.stringify(answer));
    const hashes = [...new Set(answers.map((answer) => answer.resultData.transactionId as Hex))];
    assert.equal(hashes.length, 1, 'the six share one settlement transaction');
    return client.getTransaction({ hash: hashes[0]! });
  };

  const first = await pay((i) => `1.${i + 1}`);
  assert.equal(getAddress(first.to!), accountSettlement, 'through VixpAccountSettlement, not the EIP-3009 settlement');
  assert.equal(first.type, 'eip7702');
  assert.equal(first.authorizationList?.length, payers, 'each account delegates in its first transfer');
  for (const user of users) assert.equal((await client.getCode({ address: user.address as Address }))?.toLowerCase(), `0xef0100${account.slice(2).toLowerCase()}`);

  const codeAsked = async () => sample(await metricsOf(), 'vixpay_node_rpc_calls_total', { network, method: 'eth_getCode' }) ?? 0;
  const asked = await codeAsked();
  const second = await pay(() => '2');
  assert.equal(getAddress(second.to!), accountSettlement);
  assert.equal(second.type, 'eip1559', 'delegated already: no authorization list');
  assert.equal(await codeAsked(), asked, 'the accounts seen delegated are not asked again');
  for (const [i, user] of users.entries()) assert.equal(await vixpOf(user.address), 10n * 10n ** 18n - (10n ** 18n + BigInt(i + 1) * 10n ** 17n) - 2n * 10n ** 18n);
  assert.equal(await vixpOf(store.settlementAddress) - storeBefore, 6n * 10n ** 18n + 21n * 10n ** 17n + 12n * 10n ** 18n);
});

/** /metrics' text. */
async function metricsOf(): Promise<string> {
  return (await p.t.app.inject({ method: 'GET', url: '/metrics' })).body;
}

/** vixpay_settlement_transfers_per_transaction's sum and count on `network`. */
async function transferMetrics(network: string): Promise<{ sum: number; count: number }> {
  const body = (await p.t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const value = (name: string) => Number(body.split('\n').find((l) => l.startsWith(`vixpay_settlement_transfers_per_transaction_${name}{network="${network}"}`))?.split(' ').at(-1) ?? 0);
  return { sum: value('sum'), count: value('count') };
}

test('a token paused by its owner between signing and settlement fails only its own items: the USDT transfers answered failed, nothing moved, their nonces cancelled; the BEP-20 ones of the same batch settle', async () => {
  const network = p.t.platform.config.paymentNetwork;
  const { url, chainId, client: platformClient } = p.t.platform.chains[network];
  const client = createPublicClient({ transport: http(url) });
  const deployer = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 8 });
  const wallet = createWalletClient({ account: deployer, chain: { ...platformClient.chain!, id: chainId }, transport: http(url) });
  const context = (values: Record<string, string>) => ({ config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values, positionals: [] });
  const usdt = await deployShapedToken(client as never, wallet, 'usdt');
  const bep20 = await deployShapedToken(client as never, wallet, 'bep20');
  for (const token of [usdt, bep20]) await tokenAllowCommand.run(context({ contract: token, holder: deployer.address }));
  const store = await p.t.platform.payments.addStore({ tid: 'T-AB02', name: 'Paused Cafe' });
  const balanceOf = (token: Address, address: string) => client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });
  const send = async (token: Address, functionName: string, args: readonly unknown[]) => client.waitForTransactionReceipt({
    hash: await wallet.writeContract({ address: token, abi: (token === usdt ? shapedTokens.usdt.abi : shapedTokens.bep20.abi) as never, functionName: functionName as never, args: args as never, chain: wallet.chain, account: deployer }),
  });

  // Two payers in each token: four items, under the six that send a batch at once, so the batch
  // waits out its window (5 s) while the token is paused.
  const payments: { token: Address; user: Awaited<ReturnType<typeof newUser>>; amount: string; units: bigint; funded: bigint }[] = [];
  for (const [token, amount, units, funded] of [[usdt, '1.5', 1_500_000n, 3_000_000n], [usdt, '2', 2_000_000n, 3_000_000n], [bep20, '1.5', 1_500_000_000_000_000_000n, 3_000_000_000_000_000_000n], [bep20, '2', 2_000_000_000_000_000_000n, 3_000_000_000_000_000_000n]] as const) {
    const user = await newUser(p);
    await send(token, 'transfer', [user.address, funded]);
    payments.push({ token, user, amount, units, funded });
  }
  const requests = await Promise.all(payments.map(async ({ user, amount }) => {
    const { data: _signed, ...params } = await prepareTransfer(p.t.app, user, store.settlementAddress, amount);
    return params;
  }));
  const answering = Promise.all(requests.map((params, i) => call(p.t.app, '/token', 'transfer', { ...params, contractAddress: payments[i]!.token })));
  // Every transfer signed (its nonce reserved), none settled: then the owner pauses USDT.
  const payers = payments.map(({ user }) => user.address);
  const signed = async () => (await p.t.platform.store.db.selectFrom('authorizations').select('status').where('from_address', 'in', payers).execute()).length;
  while (await signed() < payments.length) await new Promise((resolve) => setTimeout(resolve, 20));
  await send(usdt, 'pause', []);
  const answers = await answering;

  const settledHashes = new Set<Hex>();
  for (const [i, { token, user, units, funded }] of payments.entries()) {
    const answer = answers[i]!;
    if (token === usdt) {
      assert.notEqual(answer.resultCode, '200', JSON.stringify(answer));
      assert.equal(await balanceOf(usdt, user.address), funded, 'nothing moved');
      assert.equal(await client.readContract({ address: user.address as Address, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [0n] }), true, 'its nonce cancelled: the signed transfer can never execute, paused or not');
      const cancelled = await client.getContractEvents({ address: user.address as Address, abi: vixpayAccountAbi, eventName: 'NonceCancelled', fromBlock: 0n });
      assert.deepEqual(cancelled.map((log) => log.args.nonce), [0n]);
    } else {
      assert.equal(answer.resultCode, '200', JSON.stringify(answer));
      assert.equal(await balanceOf(bep20, user.address), funded - units);
      settledHashes.add(answer.resultData.transactionId as Hex);
    }
  }
  assert.equal(await balanceOf(usdt, store.settlementAddress), 0n);
  assert.equal(await balanceOf(bep20, store.settlementAddress), 3_500_000_000_000_000_000n);
  // The four went in one VixpAccountSettlement batch: the two USDT items skipped in it, the BEP-20 ones executed.
  assert.equal(settledHashes.size, 1, 'the BEP-20 transfers share one transaction');
  const receipt = await client.getTransactionReceipt({ hash: [...settledHashes][0]! });
  assert.equal(getAddress(receipt.to!), p.t.platform.contracts[network].accountSettlement);
  assert.equal(parseEventLogs({ abi: vixpAccountSettlementAbi, eventName: 'ItemSkipped', logs: receipt.logs }).length, 2);
  const rows = await p.t.platform.store.db.selectFrom('authorizations').select(['from_address', 'status']).where('from_address', 'in', payers).execute();
  const statusOf = new Map(rows.map((row) => [row.from_address, row.status]));
  assert.deepEqual(payers.map((payer) => statusOf.get(payer)), ['canceled', 'canceled', 'used', 'used']);
});
