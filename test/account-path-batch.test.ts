import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, parseEventLogs, type Address } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { call } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { newUser, startPaymentTest, type PaymentTest } from './support/payments.ts';
import { deployShapedToken } from './support/shaped-tokens.ts';
import { tokenAllowCommand } from '../src/cli/token-commands.ts';
import { createLogger } from '../src/shared/logger.ts';
import { cliDeps } from '../src/main.ts';
import { vixpAccountSettlementAbi } from '../src/gen/contracts/vixp-account-settlement.ts';

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
});
