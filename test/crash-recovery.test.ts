import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/shared/logger.ts';
import { startPlatform, type Platform } from '../src/platform.ts';
import { sha256Hex } from './support/transfer-scheme.ts';
import { rpcOver, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';

// The server runs as users run it (`node src/main.ts`); this test process shares its data directory
// the way the operator CLI does (attached to the same anvils and database).
const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-crash-'));
const env = { DATA_DIR: dataDir, CHAIN_POLL_MS: '50' };
let server: ServerProcess;
let operator: Platform;

before(async () => {
  server = await startServerProcess(env);
  operator = await startPlatform(loadConfig({ ...env, LOG_LEVEL: 'silent' }), createLogger('silent'), { chainMode: 'attach' });
});
after(async () => {
  await operator?.stop();
  if (server) await stopServerProcess(server);
  rmSync(dataDir, { recursive: true, force: true });
});

interface Funded { address: string; secretKey: string }

async function fundedAccounts(count: number, amount: string): Promise<Funded[]> {
  const accounts: Funded[] = [];
  for (let i = 0; i < count; i++) accounts.push((await rpcOver(server.baseUrl, '/token', 'createAddress', {})).resultData);
  await Promise.all(accounts.map((a) => operator.wallet.mint('ethereum', { to: a.address, amount })));
  return accounts;
}

async function signedTransfer(baseUrl: string, from: Funded, to: string, amount: string) {
  const { tempKey } = (await rpcOver(baseUrl, '/token', 'net_getTempKey', { address: from.address, keyType: 'transfer' })).resultData;
  const hashKey = sha256Hex(`${tempKey}|${from.secretKey}`);
  const data = sha256Hex(`${from.address}|${to}|${amount}|${tempKey}|${hashKey}`);
  const { signature } = (await rpcOver(baseUrl, '/token', 'signData', { address: from.address, tempKey, hashKey, data })).resultData;
  return { fromAddress: from.address, toAddress: to, amount, tempKey, hashKey, signature };
}

const balanceOf = async (address: string) => (await operator.wallet.getBalance('ethereum', { address })).balance;

test('100 concurrent transfers from 100 accounts all succeed, with contiguous relayer nonces', async () => {
  const senders = await fundedAccounts(100, '10');
  const recipients = await fundedAccounts(100, '0.000001');
  const requests = await Promise.all(senders.map((s, i) => signedTransfer(server.baseUrl, s, recipients[i]!.address, '3')));
  const results = await Promise.all(requests.map((p) => rpcOver(server.baseUrl, '/token', 'transfer', p)));
  assert.deepEqual(results.map((r) => r.resultCode), Array(100).fill('200'));
  const hashes = results.map((r) => r.TransactionID as string);
  const rows = await operator.store.db.selectFrom('chain_txs').select(['nonce', 'status'])
    .where('tx_hash', 'in', hashes).execute();
  const nonces = rows.map((r) => Number(r.nonce)).sort((a, b) => a - b);
  assert.equal(nonces.length, 100);
  assert.deepEqual(nonces, Array.from({ length: 100 }, (_, i) => nonces[0]! + i), 'contiguous');
  assert.ok(rows.every((r) => r.status === 'confirmed'));
  for (let i = 0; i < 100; i++) {
    assert.equal(await balanceOf(senders[i]!.address), '7');
    assert.equal(await balanceOf(recipients[i]!.address), '3.000001');
  }
});

test('kill -9 during a burst, then a restart: every accepted transfer happened exactly once, none twice', async () => {
  const senders = await fundedAccounts(100, '10');
  const recipients = await fundedAccounts(100, '0.000001');
  const requests = await Promise.all(senders.map((s, i) => signedTransfer(server.baseUrl, s, recipients[i]!.address, '4')));

  const inFlight = requests.map((p) => rpcOver(server.baseUrl, '/token', 'transfer', p).catch((error: Error) => ({ lost: error.message })));
  await new Promise((resolve) => setTimeout(resolve, 150));
  await stopServerProcess(server, 'SIGKILL');
  const outcomes = await Promise.all(inFlight);

  server = await startServerProcess(env);
  const accepted = outcomes.map((o: any) => o.resultCode === '200');
  assert.ok(accepted.some(Boolean) || outcomes.every((o: any) => 'lost' in o), 'the burst reached the server');

  const stuck = await operator.store.db.selectFrom('chain_txs').select('tx_hash').where('status', '=', 'signed').execute();
  assert.deepEqual(stuck, [], 'recovery finished every journaled transaction');
  for (let i = 0; i < 100; i++) {
    const received = await balanceOf(recipients[i]!.address);
    const sent = await balanceOf(senders[i]!.address);
    assert.ok(received === '4.000001' || received === '0.000001', `recipient ${i}: ${received}`);
    assert.equal(Number(sent) + Number(received), 10.000001, `sender ${i} and recipient ${i} together hold what they had`);
    if (accepted[i]) assert.equal(received, '4.000001', `accepted transfer ${i} happened`);
  }
  // Sending every request again: one that had happened is refused; one the crash cut off before it
  // was journaled happens now, once. Either way each recipient ends with exactly one transfer.
  const before = await Promise.all(recipients.slice(0, 20).map((r) => balanceOf(r.address)));
  const replays = await Promise.all(requests.slice(0, 20).map((p) => rpcOver(server.baseUrl, '/token', 'transfer', p)));
  for (let i = 0; i < 20; i++) {
    if (before[i] === '4.000001') assert.notEqual(replays[i].resultCode, '200', `replay ${i} refused`);
    assert.equal(await balanceOf(recipients[i]!.address), '4.000001', `recipient ${i} received exactly once`);
  }
});

test('stopping and starting again keeps accounts, balances and contracts', async () => {
  const [holder] = await fundedAccounts(1, '5');
  const contractsBefore = operator.contracts;
  await stopServerProcess(server);
  server = await startServerProcess(env);
  const info = await rpcOver(server.baseUrl, '/token', 'getTokenInfo', {});
  assert.equal(info.resultData.contractAddress, contractsBefore.ethereum.vixpToken);
  assert.equal((await rpcOver(server.baseUrl, '/token', 'getBalance', { address: holder!.address })).resultData.balance, '5');
  const temp = await rpcOver(server.baseUrl, '/token', 'net_getTempKey', { address: holder!.address, keyType: 'transfer' });
  assert.equal(temp.resultCode, '200', 'the account is still in custody');
});
