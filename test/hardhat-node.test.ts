import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createPublicClient, http, parseEther, toHex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { loadConfig } from '../src/config/config.ts';
import { loadRelayerLanes } from '../src/chain/platform-account.ts';
import { skipWithout } from './support/parts.ts';
import { freePort } from './support/server-process.ts';
import { waitFor } from './support/wait-for.ts';
import { startTestPlatform } from './support/platform.ts';
import {
  balanceOf, newUser, openSession, startPaymentTest, unary, type PaymentTest, type TestUser,
} from './support/payments.ts';
import { scriptedPayment } from './support/scripted-payments.ts';

// The platform against a second EVM implementation: Hardhat's node (EDR), started as a user starts it
// (`npx hardhat node`, with the tiny config of test/support), the payment network reached by RPC URL,
// the platform contracts deployed on it at first start. The other networks stay on anvil.

const root = path.resolve(import.meta.dirname, '..');
const configFile = path.join(root, 'test/support/hardhat.config.ts');

function hardhatCli(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return path.join(path.dirname(require.resolve('hardhat/package.json')), 'dist/src/cli.js');
  } catch {
    return undefined;
  }
}

const cli = hardhatCli();
const nodeMajor = Number(process.versions.node.split('.')[0]);
const skip = skipWithout('hardhat', !cli ? 'the hardhat package is not installed' : nodeMajor < 22 ? `Node.js ${process.versions.node} is older than 22` : false);

/** The relayer's accounts for `key` (the platform account and its lanes, RELAYER_LANES by default): what needs gas on a node we do not run. */
function relayerLanesOf(key: `0x${string}`) {
  return loadRelayerLanes({ privateKey: key, dataDir: root, vault: undefined as never, count: loadConfig({}).relayerLanes });
}

/** `hardhat node` on a free loopback port; resolves once it answers eth_chainId. */
async function startHardhatNode(): Promise<{ url: string; child: ChildProcess; output(): string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [cli as string, '--config', configFile, 'node', '--hostname', '127.0.0.1', '--port', String(port)], {
    cwd: root, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
  const url = `http://127.0.0.1:${port}`;
  const probe = createPublicClient({ transport: http(url, { retryCount: 0 }) });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`hardhat node exited (${child.exitCode}):\n${output}`);
      return probe.getChainId().then(() => true, () => false);
    }, { timeoutMs: 90_000, intervalMs: 200, message: `hardhat node answers at ${url}` });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, child, output: () => output, stop };
}

describe('the platform on a Hardhat node (EDR) by RPC URL', { skip }, () => {
  let node: Awaited<ReturnType<typeof startHardhatNode>>;
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
    p = await startPaymentTest({ RPC_URL_ETHEREUM: node.url, RELAYER_PRIVATE_KEY: relayerKey, PAYMENT_NETWORK: 'ethereum' });
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
    const env = { RPC_URL_ETHEREUM: node.url, RELAYER_PRIVATE_KEY: relayerKey };
    const second = await startTestPlatform({
      env: { ...env, CONTRACTS_ETHEREUM: `vixpToken=${given.vixpToken},didRegistry=${given.didRegistry},settlement=${given.settlement}` },
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
  });
});

test('CONTRACTS_<NETWORK> is name=address pairs of the three platform contracts', () => {
  const address = '0x00000000000000000000000000000000000000aa';
  assert.deepEqual(loadConfig({ CONTRACTS_BNB: ` settlement=${address} ` }).contractAddresses, { bnb: { settlement: address } });
  assert.throws(() => loadConfig({ CONTRACTS_BNB: 'token=0x1' }), /CONTRACTS_BNB: entry "token=0x1" is not name=0x-address/);
  assert.throws(() => loadConfig({ CONTRACTS_OPBNB: `vixpToken=${address},vixpToken=${address}` }), /CONTRACTS_OPBNB: .*each name once/);
});
