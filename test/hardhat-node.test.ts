import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createPublicClient, http, parseEther, toHex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { loadConfig } from '../src/config/config.ts';
import { dateOf } from '../src/statements/statement-day.ts';
import { relayerLanesOf, skipWithoutHardhat, startHardhatNode, type HardhatNode } from './support/hardhat-node.ts';
import { startTestPlatform } from './support/platform.ts';
import {
  balanceOf, newUser, openSession, startPaymentTest, unary, type PaymentTest, type TestUser,
} from './support/payments.ts';
import { scriptedPayment } from './support/scripted-payments.ts';

// The platform against a second EVM implementation: Hardhat's node (EDR), started as a user starts it
// (`npx hardhat node`, with the tiny config of test/support), the payment network reached by RPC URL,
// the platform contracts deployed on it at first start. The other networks stay on anvil.

const skip = skipWithoutHardhat;

describe('the platform on a Hardhat node (EDR) by RPC URL', { skip }, () => {
  let node: HardhatNode;
  let relayerKey: `0x${string}`;
  let p: PaymentTest;
  let store: { tid: string; name: string; settlementAddress: string; apiKey: string };

  before(async () => {
    node = await startHardhatNode();
    // The relayer is a key of ours, its lanes funded the way an operator funds them on a real network.
    relayerKey = generatePrivateKey();
    const client = createPublicClient({ transport: http(node.url) });
    for (const lane of relayerLanesOf(relayerKey)) {
      await client.request({ method: 'hardhat_setBalance', params: [lane.address, toHex(parseEther('1000'))] } as never);
    }
    p = await startPaymentTest({ RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, PAYMENT_NETWORK: 'ethereum' });
    store = await p.t.platform.payments.addStore({ tid: 'H-3001', name: 'Hardhat Cafe' });
    await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
  });
  after(async () => {
    await p?.stop();
    await node?.stop();
  });

  test('it is really Hardhat\'s node, reached by URL, with the contracts deployed on it at first start', async () => {
    const chain = p.t.platform.chains.ethereum;
    assert.equal(chain.managed, false);
    assert.equal(chain.url, node.url);
    const version = await chain.client.request({ method: 'web3_clientVersion' } as never) as string;
    assert.match(version, /hardhat|edr/i);
    for (const address of Object.values(p.t.platform.contracts.ethereum)) {
      assert.ok(((await chain.client.getCode({ address })) ?? '0x').length > 2, `contract code at ${address}`);
    }
  });

  /** A whole payment, app first. */
  const pay = (user: TestUser, amount: string) => scriptedPayment(p, store, user, amount, `HH${randomUUID().slice(0, 8)}`);

  test('a payment, then its refund (CancelPayment): tokens move on the Hardhat chain and back', async () => {
    const user = await newUser(p, '30');
    const storeBefore = await balanceOf(p, store.settlementAddress);
    const r = await pay(user, '12000');
    assert.equal(r.posEnd.content.state, 'END_PAY', JSON.stringify(r.posEnd));
    assert.equal(r.posEnd.common.res_code, '00');
    assert.equal(r.appEnd.content.state, 'END_PAY');
    assert.equal(r.posStatus.code, 0);
    assert.equal(await balanceOf(p, user.address), '18');
    assert.equal(Number(await balanceOf(p, store.settlementAddress)) - Number(storeBefore), 12);
    const receipt = await p.t.platform.chains.ethereum.client.getTransactionReceipt({ hash: r.posEnd.content.transfer_transaction_id });
    assert.equal(receipt.status, 'success');
    // Its block's time recorded from the block header (Hardhat's receipts carry none), so the operator's day lists it.
    const block = await p.t.platform.chains.ethereum.client.getBlock({ blockHash: receipt.blockHash });
    const row = await p.t.platform.store.db.selectFrom('chain_txs').select('block_timestamp').where('tx_hash', '=', receipt.transactionHash).executeTakeFirstOrThrow();
    assert.equal(Number(row.block_timestamp), Number(block.timestamp));
    const day = await p.t.platform.statements.operatorDay(dateOf(Number(block.timestamp) * 1000, p.t.config.timeZone));
    assert.equal(day.transactions.find((t) => t.txHash === receipt.transactionHash)?.kind, 'pos-settlement');

    const refund = await unary(p.client, 'CancelPayment', store.apiKey, {
      tid: store.tid, transfer_transaction_id: r.posEnd.content.transfer_transaction_id, user_address: user.address,
      contract_address: r.posEnd.content.contract_address, token_symbol: 'VIXP',
    });
    assert.equal(refund.common.res_code, '00', JSON.stringify(refund.common));
    assert.equal(refund.content.token_amount, '12');
    assert.equal(await balanceOf(p, user.address), '30');
    assert.equal(await balanceOf(p, store.settlementAddress), storeBefore);
  });

  test('a reward issued by the store and claimed by the app', async () => {
    await p.t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '100' });
    const user = await newUser(p);
    const issued = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `receipt-${randomUUID()}`, exchange_amount: '3000' });
    assert.equal(issued.common.res_code, '00', JSON.stringify(issued.common));
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_REWARD', reward_id: issued.content.reward_id, token_amount: issued.content.token_amount, token_symbol: 'VIXP', user_address: user.address });
    const end = await app.next();
    assert.equal((await app.closed).code, 0);
    assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
    assert.equal(end.content.state, 'END_REWARD');
    assert.equal(await balanceOf(p, user.address), '3');
  });

  test('a DID created for a wallet, a credential issued to it and verified (resolved from the registry on Hardhat)', async () => {
    const user = await newUser(p);
    const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
      const response = await p.t.app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } });
      return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
    };
    const created = await post('/v2/did/create-did', { alias: 'hardhat-user', address: user.address, secretKey: user.secretKey });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.did, `did:ethr:${user.address}`);
    const issuer = p.t.platform.did.systemDids.issuer[0]!.did;
    const vc = await post('/v2/did/create-vc', { holder: created.body.did, issuer, userInfo: { name: 'Hana' } }, { authorization: `Bearer ${user.token}` });
    assert.equal(vc.status, 200, JSON.stringify(vc.body));
    const verified = await post('/v2/did/verify-vc', vc.body);
    assert.equal(verified.body.verified, true, JSON.stringify(verified.body));
    const tampered = await post('/v2/did/verify-vc', { ...vc.body, credentialSubject: { ...vc.body.credentialSubject, name: 'Mallory' } });
    assert.equal(tampered.body.verified, false);
  });

  test('a second platform given the contracts by address (CONTRACTS_ETHEREUM) uses them and deploys nothing; a wrong address stops its start', async () => {
    const chain = p.t.platform.chains.ethereum;
    const given = p.t.platform.contracts.ethereum;
    const relayer = p.t.platform.relayer.address;
    const sentBefore = await chain.client.getTransactionCount({ address: relayer });
    const env = { RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey };
    const second = await startTestPlatform({
      env: {
        ...env,
        CONTRACTS_ETHEREUM: `vixpToken=${given.vixpToken},didRegistry=${given.didRegistry},settlement=${given.settlement},account=${given.account},accountSettlement=${given.accountSettlement}`,
      },
    });
    try {
      assert.deepEqual(second.platform.contracts.ethereum, given);
      assert.equal(await chain.client.getTransactionCount({ address: relayer }), sentBefore, 'no deployment sent');
      const holder = await newUser(p, '7');
      assert.equal((await second.platform.wallet.getBalance('ethereum', { address: holder.address })).balance, '7', 'the same token');
    } finally {
      await second.stop();
    }
    await assert.rejects(
      startTestPlatform({ env: { ...env, CONTRACTS_ETHEREUM: `vixpToken=${relayer}` } }),
      new RegExp(`CONTRACTS_ETHEREUM: vixpToken=${relayer} has no contract code on ethereum`),
    );
    await assert.rejects(
      startTestPlatform({ env: { ...env, CONTRACTS_ETHEREUM: `account=${given.settlement}` } }),
      new RegExp(`CONTRACTS_ETHEREUM: account=${given.settlement} is not the account contract of this release`),
    );
  });
});

test('CONTRACTS_<NETWORK> is name=address pairs of the five platform contracts', () => {
  const address = '0x00000000000000000000000000000000000000aa';
  assert.deepEqual(loadConfig({ CONTRACTS_BNB: ` settlement=${address} ` }).contractAddresses, { bnb: { settlement: address } });
  assert.deepEqual(loadConfig({ CONTRACTS_BNB: `account=${address},accountSettlement=${address}` }).contractAddresses, { bnb: { account: address, accountSettlement: address } });
  assert.throws(() => loadConfig({ CONTRACTS_BNB: 'token=0x1' }), /CONTRACTS_BNB: entry "token=0x1" is not name=0x-address/);
  assert.throws(() => loadConfig({ CONTRACTS_OPBNB: `vixpToken=${address},vixpToken=${address}` }), /CONTRACTS_OPBNB: .*each name once/);
});
