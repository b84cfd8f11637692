import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/shared/logger.ts';
import { composePlatform, type Platform } from '../src/compose/platform.ts';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { parseEventLogs, parseUnits } from 'viem';
import { sha256Hex } from './support/transfer-scheme.ts';
import { rpcOver, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';

// The server runs as users run it (`node src/main.ts`); this test process shares its data directory
// the way the operator CLI does (attached to the same anvils and database). What the server journaled
// is read straight from its database (its SQLite file, or its PostgreSQL schema under
// VIXPAY_TEST_STORE=postgres), and the ethereum anvil is driven through its own JSON-RPC
// (mining paused, pool inspected, process killed) so that each crash happens with transactions
// provably in flight, never by luck of timing.
const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-crash-'));
// A 20 s receipt wait (instead of 60) keeps the chain-node case short: its requests answer when the wait gives up.
const storeEnv = await testStoreEnv(dataDir);
// Batches of at most 10 transfers: a burst of 100 spans several settlement transactions and lanes,
// so a kill finds some mined, some in the node's pool and some only in the journal.
const env = { DATA_DIR: dataDir, CHAIN_POLL_MS: '50', RECEIPT_TIMEOUT_SECONDS: '20', SETTLEMENT_BATCH_MAX_ITEMS: '10', ...storeEnv };
let server: ServerProcess;
let operator: Platform;

const startOperator = () => composePlatform(loadConfig({ ...env, LOG_LEVEL: 'silent' }), createLogger('silent'), { chainMode: 'attach', pairing: 'in-process' });

before(async () => {
  server = await startServerProcess(env);
  operator = await startOperator();
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
  // A mint answers once its transaction is signed and sent, mined or not yet (its receipt wait can end
  // first under load): the burst starts from balances the chain shows.
  const minted = parseUnits(amount, 18);
  await waitFor(`${count} mints of ${amount} VIXP on chain`, async () =>
    ((await Promise.all(accounts.map((a) => balanceRaw(a.address)))).every((b) => b === minted) ? true : undefined));
  return accounts;
}

async function signedTransfer(baseUrl: string, from: Funded, to: string, amount: string) {
  const { tempKey } = (await rpcOver(baseUrl, '/token', 'net_getTempKey', { address: from.address, keyType: 'transfer' })).resultData;
  const hashKey = sha256Hex(`${tempKey}|${from.secretKey}`);
  const data = sha256Hex(`${from.address}|${to}|${amount}|${tempKey}|${hashKey}`);
  const { signature } = (await rpcOver(baseUrl, '/token', 'signData', { address: from.address, tempKey, hashKey, data })).resultData;
  return { fromAddress: from.address, toAddress: to, amount, tempKey, hashKey, signature };
}

/** Balances in base units (VIXP has 18 decimals): exact, unlike decimal strings added as floats. */
const unit = 10n ** 18n;
const senderStart = 10n * unit;
const recipientStart = unit / 1_000_000n; // 0.000001
const amountRaw = 4n * unit;
const balanceRaw = async (address: string) => BigInt((await operator.wallet.getBalance('ethereum', { address })).balanceRaw);
const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

/** Polls `probe` until it returns a value, or fails with `what` at the deadline. */
async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(25);
  }
}

interface JournalRow {
  tx_hash: string; relayer: string; nonce: number; status: string; from_address: string; to_address: string; amount: string;
  block_number: number | null; updated_at: number;
}

/**
 * Rows of the server's database as committed (its SQLite file, or its PostgreSQL schema), with the
 * integer columns `numeric` names as numbers (PostgreSQL answers BIGINT as text).
 */
async function readDatabase<T>(query: string, numeric: string[]): Promise<T[]> {
  let rows: Array<Record<string, unknown>>;
  if (storeEnv.DATABASE_URL) {
    const client = new pg.Client({ connectionString: storeEnv.DATABASE_URL });
    await client.connect();
    try {
      rows = (await client.query(query)).rows;
    } finally {
      await client.end();
    }
  } else {
    const db = new DatabaseSync(path.join(dataDir, 'vixpay.sqlite'), { readOnly: true, timeout: 5_000 });
    try {
      rows = db.prepare(query).all() as Array<Record<string, unknown>>;
    } finally {
      db.close();
    }
  }
  return rows.map((row) => {
    const out = { ...row };
    for (const key of numeric) if (out[key] !== null && out[key] !== undefined) out[key] = Number(out[key]);
    return out as T;
  });
}

/**
 * The server's transfer journal, read from its database as it stands: one row per journaled
 * transfer (its authorization), with the settlement transaction that carries it (`status`: that
 * transaction's), in journal order: by the time each was journaled, each lane's in nonce order (on
 * PostgreSQL, journalings on one lane run concurrently and can take their nonces in another order
 * than their timestamps; a lane's transactions are mined in nonce order, whatever their time).
 */
async function journal(senders: Funded[]): Promise<JournalRow[]> {
  const from = new Set(senders.map((s) => s.address.toLowerCase()));
  const rows = (await readDatabase<JournalRow>(`SELECT c.tx_hash, c.relayer, c.nonce, c.status, a.from_address, a.to_address, a.value AS amount, c.block_number, c.updated_at
    FROM authorizations a JOIN chain_txs c ON c.tx_hash = a.tx_hash
    WHERE c.network = 'ethereum' AND c.kind = 'settlement' ORDER BY c.created_at, c.relayer, c.nonce, a.from_address`, ['nonce', 'block_number', 'updated_at']))
    .filter((r) => from.has(r.from_address.toLowerCase()));
  const byLane = new Map<string, JournalRow[]>();
  for (const row of rows) byLane.set(row.relayer, [...(byLane.get(row.relayer) ?? []), row]);
  for (const lane of byLane.values()) lane.sort((x, y) => x.nonce - y.nonce);
  const taken = new Map<string, number>();
  return rows.map((row) => {
    const index = taken.get(row.relayer) ?? 0;
    taken.set(row.relayer, index + 1);
    return byLane.get(row.relayer)![index]!;
  });
}

/** Highest nonce journaled on ethereum by each relayer lane (any kind: settlements, mints, deployments). */
async function lastJournaledNonces(): Promise<Map<string, number>> {
  const rows = await readDatabase<{ relayer: string; nonce: number }>(`SELECT relayer, MAX(nonce) AS nonce FROM chain_txs WHERE network = 'ethereum' GROUP BY relayer`, ['nonce']);
  return new Map(rows.map((r) => [r.relayer, r.nonce]));
}

/** Every lane's next nonce on chain is its last journaled one + 1: nothing journaled is stuck behind a hole. */
async function assertNoNonceGap() {
  const { client } = operator.chains.ethereum;
  for (const [relayer, last] of await lastJournaledNonces()) {
    const chainNonce = await client.getTransactionCount({ address: relayer as `0x${string}`, blockTag: 'latest' });
    assert.equal(chainNonce, last + 1, `every nonce journaled by lane ${relayer} is mined: no gap, nothing stuck`);
  }
}

/** Each lane's journaled nonces (distinct transactions) are contiguous. */
function assertContiguousPerLane(rows: Array<{ relayer: string; nonce: number }>, what: string) {
  const byLane = new Map<string, Set<number>>();
  for (const row of rows) byLane.set(row.relayer, (byLane.get(row.relayer) ?? new Set()).add(Number(row.nonce)));
  for (const [lane, set] of byLane) {
    const nonces = [...set].sort((a, b) => a - b);
    assert.deepEqual(nonces, Array.from({ length: nonces.length }, (_, i) => nonces[0]! + i), `${what}: lane ${lane}`);
  }
}

/** The server's ethereum anvil, as the chain supervisor records it in DATA_DIR/chains/ethereum. */
function ethereumAnvil(): { url: string; pid: number } {
  const dir = path.join(dataDir, 'chains', 'ethereum');
  return { url: readFileSync(path.join(dir, 'anvil.url'), 'utf8').trim(), pid: Number(readFileSync(path.join(dir, 'anvil.pid'), 'utf8')) };
}

let chainRpcId = 1;
async function chainRpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const response = await fetch(url, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: chainRpcId++, method, params }),
  });
  const body = await response.json() as any;
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

type Outcome = { resultCode?: string; TransactionID?: string } | { lost: string };
/**
 * Whether a journaled transfer is on chain: a successful receipt, or (after the chain node was killed)
 * its authorization used in the chain's state although its block is gone. anvil writes its state dump
 * non-atomically: the accounts it dumps can be a few transactions ahead of the blocks it dumps, so a
 * restarted anvil can hold a transfer's effect (balances, the used EIP-3009 nonce) without its receipt.
 * The money-level checks (balances moved exactly once, totals) hold either way.
 */
async function landed(txHash: string): Promise<'receipt' | 'state only' | false> {
  const { client } = operator.chains.ethereum;
  const receipt = await client.getTransactionReceipt({ hash: txHash as `0x${string}` }).catch(() => undefined);
  if (receipt) return receipt.status === 'success' ? 'receipt' : false;
  const authorization = await operator.store.db.selectFrom('authorizations').select(['from_address', 'nonce', 'chain_nonce', 'contract_address'])
    .where('tx_hash', '=', txHash).executeTakeFirst();
  if (!authorization) return false;
  const used = await client.readContract({
    address: authorization.contract_address as `0x${string}`, abi: vixpTokenAbi, functionName: 'authorizationState',
    args: [authorization.from_address as `0x${string}`, (authorization.chain_nonce ?? authorization.nonce) as `0x${string}`],
  });
  return used ? 'state only' : false;
}

const answered = (o: Outcome): o is { resultCode?: string; TransactionID?: string } => !('lost' in o);

/**
 * What recovery must leave behind for one burst (sender i → recipient i, 4 VIXP each), checked on
 * chain in base units: no journal row still `signed`; every journaled transfer has a successful
 * receipt and moved its amount exactly once; nothing else moved; every transfer answered 200 is
 * among them; the total is conserved; relayer nonces have no gap (the chain's next nonce is the
 * journal's last one + 1, so nothing journaled is stuck behind a hole).
 */
async function assertExactlyOnce(senders: Funded[], recipients: Funded[], outcomes: Outcome[], totalBefore: bigint): Promise<JournalRow[]> {
  const rows = await journal(senders);
  assert.deepEqual(rows.filter((r) => r.status !== 'confirmed').map((r) => `${r.tx_hash} ${r.status}`), [],
    'recovery finished every journaled transfer (none left signed or failed)');
  for (const row of rows) {
    assert.ok(await landed(row.tx_hash), `journaled transfer ${row.tx_hash} (nonce ${row.nonce}) is on chain`);
  }
  const journaledFrom = new Set(rows.map((r) => r.from_address.toLowerCase()));
  for (let i = 0; i < senders.length; i++) {
    const sent = await balanceRaw(senders[i]!.address);
    const received = await balanceRaw(recipients[i]!.address);
    const moved = journaledFrom.has(senders[i]!.address.toLowerCase());
    assert.equal(sent, moved ? senderStart - amountRaw : senderStart, `sender ${i} (${moved ? 'journaled' : 'not journaled'}): balance ${sent}`);
    assert.equal(received, moved ? recipientStart + amountRaw : recipientStart, `recipient ${i} (${moved ? 'journaled' : 'not journaled'}): balance ${received}`);
    const outcome = outcomes[i]!;
    if (answered(outcome) && outcome.resultCode === '200') assert.ok(moved, `transfer ${i} was answered 200 (${outcome.TransactionID}) and happened`);
  }
  const totalAfter = sum(await Promise.all([...senders, ...recipients].map((a) => balanceRaw(a.address))));
  assert.equal(totalAfter, totalBefore, 'the burst conserved the total');
  await assertNoNonceGap();
  return rows;
}

/**
 * Sends every request of the burst again. One that was journaled is refused before anything is
 * signed (its temp key is spent) and journals nothing. One the crash cut off before it was journaled
 * either happens now, once, or is refused because the crash had already spent its temp key; never
 * both. Afterwards a pair has moved exactly once if its transfer was journaled or its replay
 * succeeded, and not at all otherwise.
 */
async function assertReplaysSettleOnce(senders: Funded[], recipients: Funded[], requests: Awaited<ReturnType<typeof signedTransfer>>[], journaled: JournalRow[], totalBefore: bigint) {
  const journaledFrom = new Set(journaled.map((r) => r.from_address.toLowerCase()));
  const replays = await Promise.all(requests.map((p) => rpcOver(server.baseUrl, '/token', 'transfer', p)));
  const rows = await journal(senders);
  for (let i = 0; i < senders.length; i++) {
    const from = senders[i]!.address.toLowerCase();
    const code = replays[i].resultCode;
    const rowsOf = rows.filter((r) => r.from_address.toLowerCase() === from).length;
    if (journaledFrom.has(from)) {
      assert.equal(code, '440', `replay ${i} of a journaled transfer refused: its temp key is spent`);
      assert.equal(rowsOf, 1, `replay ${i} of a journaled transfer journaled nothing`);
    } else {
      assert.ok(code === '200' || code === '440', `replay ${i} of a transfer never journaled happens now or is refused: ${code}`);
      assert.equal(rowsOf, code === '200' ? 1 : 0, `replay ${i} (${code}) journaled exactly what it did`);
    }
    const moved = journaledFrom.has(from) || code === '200';
    assert.equal(await balanceRaw(senders[i]!.address), moved ? senderStart - amountRaw : senderStart, `sender ${i} sent ${moved ? 'exactly once' : 'nothing'}`);
    assert.equal(await balanceRaw(recipients[i]!.address), moved ? recipientStart + amountRaw : recipientStart, `recipient ${i} received ${moved ? 'exactly once' : 'nothing'}`);
  }
  const totalAfter = sum(await Promise.all([...senders, ...recipients].map((a) => balanceRaw(a.address))));
  assert.equal(totalAfter, totalBefore, 'the replays conserved the total');
  return replays.filter((r, i) => r.resultCode === '200' && !journaledFrom.has(senders[i]!.address.toLowerCase())).length;
}

async function burst() {
  const senders = await fundedAccounts(100, '10');
  const recipients = await fundedAccounts(100, '0.000001');
  const requests = await Promise.all(senders.map((s, i) => signedTransfer(server.baseUrl, s, recipients[i]!.address, '4')));
  const totalBefore = sum(await Promise.all([...senders, ...recipients].map((a) => balanceRaw(a.address))));
  assert.equal(totalBefore, 100n * (senderStart + recipientStart));
  return { senders, recipients, requests, totalBefore };
}

test('100 concurrent transfers from 100 accounts all succeed in settlement batches, with contiguous nonces per lane; each TransactionID carries its own Transfer', async () => {
  const senders = await fundedAccounts(100, '10');
  const recipients = await fundedAccounts(100, '0.000001');
  const requests = await Promise.all(senders.map((s, i) => signedTransfer(server.baseUrl, s, recipients[i]!.address, '3')));
  const results = await Promise.all(requests.map((p) => rpcOver(server.baseUrl, '/token', 'transfer', p)));
  assert.deepEqual(results.map((r) => r.resultCode), Array(100).fill('200'));
  const hashes = [...new Set(results.map((r) => r.TransactionID as string))];
  const rows = await operator.store.db.selectFrom('chain_txs').select(['relayer', 'nonce', 'status', 'kind'])
    .where('tx_hash', 'in', hashes).execute();
  assert.equal(rows.length, hashes.length, 'every TransactionID is a journaled transaction');
  assert.ok(rows.every((r) => r.status === 'confirmed' && r.kind === 'settlement'));
  assertContiguousPerLane(rows, 'contiguous');
  console.log(`100 transfers in ${hashes.length} settlement transactions over ${new Set(rows.map((r) => r.relayer)).size} lanes`);
  const { client } = operator.chains.ethereum;
  for (let i = 0; i < 100; i++) {
    assert.equal(await balanceRaw(senders[i]!.address), senderStart - 3n * unit, `sender ${i}`);
    assert.equal(await balanceRaw(recipients[i]!.address), recipientStart + 3n * unit, `recipient ${i}`);
    // How a client finds its own transfer in a shared transaction: the token's Transfer log from its
    // account to its payee, for its amount (docs/token-api.md).
    const receipt = await client.getTransactionReceipt({ hash: results[i].TransactionID });
    const own = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs })
      .filter((log) => log.args.from.toLowerCase() === senders[i]!.address.toLowerCase() && log.args.to.toLowerCase() === recipients[i]!.address.toLowerCase());
    assert.deepEqual(own.map((log) => log.args.value), [3n * unit], `transfer ${i}'s receipt carries its Transfer`);
  }
});

test('kill -9 of the server with transfers journaled but unmined: the restart finishes each exactly once', async () => {
  const { senders, recipients, requests, totalBefore } = await burst();
  const chain = ethereumAnvil();
  // Mining paused: every transfer that gets journaled and broadcast stays unmined until the kill.
  await chainRpc(chain.url, 'evm_setAutomine', [false]);
  let outcomes: Outcome[];
  let atKill: JournalRow[];
  try {
    const inFlight = requests.map((p) => rpcOver(server.baseUrl, '/token', 'transfer', p).catch((error: Error): Outcome => ({ lost: error.message })));
    // Kill once at least half the burst is journaled and the lower half of those is in the node's pool.
    atKill = await waitFor('50 transfers journaled, the lowest 25 of them broadcast to the paused chain', async () => {
      const rows = await journal(senders);
      // Two settlement transactions at least: one to be mined while the server is down, one dropped.
      if (rows.length < 50 || new Set(rows.map((r) => r.tx_hash)).size < 2) return undefined;
      const known = await Promise.all(rows.slice(0, 25).map((r) => chainRpc(chain.url, 'eth_getTransactionByHash', [r.tx_hash])));
      return known.every((tx) => tx !== null) ? rows : undefined;
    });
    await stopServerProcess(server, 'SIGKILL');
    outcomes = await Promise.all(inFlight);
    atKill = await journal(senders);

    assert.ok(atKill.length >= 50, `${atKill.length} transfers journaled at the kill`);
    assert.deepEqual(atKill.filter((r) => r.status !== 'signed').map((r) => r.tx_hash), [], 'nothing was mined, so every journaled row is signed at the kill');
    assert.deepEqual(outcomes.filter((o) => answered(o) && ['200', '202'].includes(o.resultCode!)), [], 'nothing was answered 200 or 202 with mining paused');
    const fromOf = senders.map((s) => s.address.toLowerCase());
    for (const row of atKill) {
      const i = fromOf.indexOf(row.from_address.toLowerCase());
      assert.ok(!answered(outcomes[i]!), `journaled transfer ${i} (${row.tx_hash}) was accepted and still unanswered at the kill`);
    }
    assertContiguousPerLane(atKill, 'journaled nonces are contiguous');

    // The two ways a node can stand after the crash. The lower half of the journaled transfers is
    // mined while the server is down (on chain, but its journal row still says signed); the upper
    // half is dropped from the node's pool (only the journal still has it). The halves split between
    // settlement transactions (one carries many transfers; how many depends on the timing of the
    // burst), at the boundary nearest the middle.
    const pool = await Promise.all(atKill.map(async (r) => (await chainRpc(chain.url, 'eth_getTransactionByHash', [r.tx_hash])) !== null));
    const boundaries = atKill.map((_, k) => k).filter((k) => k > 0 && atKill[k]!.tx_hash !== atKill[k - 1]!.tx_hash);
    const middle = Math.floor(atKill.length / 2);
    const half = boundaries.reduce((best, k) => (Math.abs(k - middle) < Math.abs(best - middle) ? k : best), boundaries[0]!);
    for (let k = half; k < atKill.length; k++) if (pool[k]) await chainRpc(chain.url, 'anvil_dropTransaction', [atKill[k]!.tx_hash]);
    await chainRpc(chain.url, 'evm_mine', []);
    await chainRpc(chain.url, 'anvil_dropAllTransactions', []);
    const minedWhileDown = (await Promise.all(atKill.map((r) => chainRpc(chain.url, 'eth_getTransactionReceipt', [r.tx_hash]))))
      .filter((receipt) => receipt !== null).length;
    assert.ok(minedWhileDown >= 1, `${minedWhileDown} journaled transfers mined while the server was down`);
    assert.ok(atKill.length - minedWhileDown >= 1, 'some journaled transfers exist only in the journal');
    console.log(`server kill: ${atKill.length} transfers journaled and unmined at the kill (${pool.filter(Boolean).length} in the node's pool); ` +
      `${minedWhileDown} mined while the server was down, ${atKill.length - minedWhileDown} left only in the journal`);
  } finally {
    await chainRpc(chain.url, 'evm_setAutomine', [true]);
  }

  server = await startServerProcess(env);
  const journaled = await assertExactlyOnce(senders, recipients, outcomes, totalBefore);
  assert.deepEqual(journaled.map((r) => r.tx_hash), atKill.map((r) => r.tx_hash), 'recovery finished exactly the transfers in flight at the kill');
  const replayed = await assertReplaysSettleOnce(senders, recipients, requests, journaled, totalBefore);
  console.log(`server kill: ${requests.length - journaled.length} transfers never journaled, ${replayed} of them done by their replay`);
});

test('stopping and starting again keeps accounts, balances and contracts', async () => {
  const [holder] = await fundedAccounts(1, '5');
  const contractsBefore = operator.contracts;
  await stopServerProcess(server);
  server = await startServerProcess(env);
  // A clean stop ends the server's anvils; the restarted ones listen on new ports.
  await operator.stop();
  operator = await startOperator();
  const info = await rpcOver(server.baseUrl, '/token', 'getTokenInfo', {});
  assert.equal(info.resultData.contractAddress, contractsBefore.ethereum.vixpToken);
  assert.equal((await rpcOver(server.baseUrl, '/token', 'getBalance', { address: holder!.address })).resultData.balance, '5');
  const temp = await rpcOver(server.baseUrl, '/token', 'net_getTempKey', { address: holder!.address, keyType: 'transfer' });
  assert.equal(temp.resultCode, '200', 'the account is still in custody');
});

// The chain node itself killed: anvil comes back from its last checkpoint (src/chain/chain-checkpoint.ts),
// so blocks mined after it are gone although the journal recorded them mined (and the API answered 200).
// Recovery mines them again from the journal in their order and at their times, then sends every other
// journaled transaction at or above the relayer's nonce on chain again, in order.
test('kill -9 of the ethereum anvil during a burst, then a restart', async (t) => {
  const { senders, recipients, requests, totalBefore } = await burst();
  const chain = ethereumAnvil();
  const statePath = path.join(dataDir, 'chains', 'ethereum', 'state.json');
  // Mining paused, so the kill finds what it is about whatever the machine's pace: transfers journaled
  // and never mined, and one settlement transaction mined and recorded confirmed after the node's last
  // checkpoint, whose block the restarted node will not have. (Waiting for that moment in a free-running
  // burst missed it whenever the burst finished between two looks.)
  await chainRpc(chain.url, 'evm_setAutomine', [false]);
  let killed = false;
  let inFlight: Array<Promise<Outcome>>;
  try {
    inFlight = requests.map((p) => rpcOver(server.baseUrl, '/token', 'transfer', p).catch((error: Error): Outcome => ({ lost: error.message })));
    const pooled = await waitFor('30 transfers journaled in two settlement transactions at least, all in the paused node\'s pool', async () => {
      const rows = await journal(senders);
      if (rows.length < 30 || new Set(rows.map((r) => r.tx_hash)).size < 2) return undefined;
      const known = await Promise.all(rows.map((r) => chainRpc(chain.url, 'eth_getTransactionByHash', [r.tx_hash])));
      return known.every((tx) => tx !== null) ? rows : undefined;
    });
    // Empty the pool, then mine the journaled transactions one at a time, in each lane's nonce order,
    // until one is recorded confirmed before the node's next state dump; the last stays unmined.
    await chainRpc(chain.url, 'anvil_dropAllTransactions', []);
    const hashes = [...new Set(pooled.map((r) => r.tx_hash))];
    let minedAfterDump = false;
    for (const hash of hashes.slice(0, -1)) {
      const dumpedAt = statSync(statePath).mtimeMs;
      const [{ raw_tx }] = await readDatabase<{ raw_tx: string }>(`SELECT raw_tx FROM chain_txs WHERE tx_hash = '${hash}'`, []) as [{ raw_tx: string }];
      await chainRpc(chain.url, 'eth_sendRawTransaction', [raw_tx]).catch(() => undefined); // the sweep may have re-sent it
      await chainRpc(chain.url, 'evm_mine', []);
      await waitFor(`${hash} recorded confirmed`, async () => (await journal(senders)).some((r) => r.tx_hash === hash && r.status === 'confirmed') || undefined);
      if (statSync(statePath).mtimeMs === dumpedAt) { minedAfterDump = true; break; }
    }
    assert.ok(minedAfterDump, 'a settlement transaction was recorded confirmed between two state dumps');
    process.kill(chain.pid, 'SIGKILL');
    killed = true;
  } finally {
    if (!killed) await chainRpc(chain.url, 'evm_setAutomine', [true]);
  }
  const atKill = await journal(senders);
  // What the node will come back with: the last dump's block.
  const dumpedBlock = Number(BigInt(JSON.parse(readFileSync(statePath, 'utf8')).best_block_number));
  // The server, still running, answers each request once its receipt wait gives up.
  const outcomes = await Promise.all(inFlight);
  const answers = (code: string) => outcomes.filter((o) => answered(o) && o.resultCode === code).length;
  const report = [
    `anvil kill: ${atKill.length} transfers journaled at the kill (${atKill.filter((r) => r.status === 'signed').length} signed, ` +
    `${atKill.filter((r) => r.status === 'confirmed').length} confirmed, ` +
    `${atKill.filter((r) => r.status === 'confirmed' && r.block_number! > dumpedBlock).length} of them in blocks after the last state dump, block ${dumpedBlock})`,
    `answers: ${answers('200')} × 200, ${answers('202')} × 202, ${outcomes.length - answers('200') - answers('202')} other or lost`,
  ];
  assert.ok(atKill.some((r) => r.status === 'signed'), 'some journaled transfers were unmined at the kill');
  assert.ok(atKill.some((r) => r.status === 'confirmed' && r.block_number! > dumpedBlock), 'some transfers recorded confirmed are in blocks the node lost');

  await stopServerProcess(server);
  server = await startServerProcess(env);
  await operator.stop();
  operator = await startOperator();

  const { client } = operator.chains.ethereum;
  const after = await journal(senders);
  const onChain = await Promise.all(after.map(async (r) => (await client.getTransactionReceipt({ hash: r.tx_hash as `0x${string}` }).catch(() => undefined))?.status));
  report.push(`after the restart: ${after.filter((r) => r.status === 'signed').length} rows still signed; ` +
    `${onChain.filter((s) => s === 'success').length} of ${after.length} journaled transfers on chain; ` +
    `${after.filter((r, i) => r.status === 'confirmed' && onChain[i] !== 'success').length} recorded confirmed but absent from the chain`);
  console.log(report.join('\n'));

  await t.test('nothing happened twice, nothing appeared that was not journaled, and the total is conserved', async () => {
    const journaledFrom = new Set(after.map((r) => r.from_address.toLowerCase()));
    for (let i = 0; i < senders.length; i++) {
      const sent = await balanceRaw(senders[i]!.address);
      const received = await balanceRaw(recipients[i]!.address);
      const moved = sent === senderStart - amountRaw && received === recipientStart + amountRaw;
      assert.ok(moved || (sent === senderStart && received === recipientStart), `pair ${i} moved once or not at all: ${sent}, ${received}`);
      if (moved) assert.ok(journaledFrom.has(senders[i]!.address.toLowerCase()), `pair ${i} moved only through the journal`);
    }
    const totalAfter = sum(await Promise.all([...senders, ...recipients].map((a) => balanceRaw(a.address))));
    assert.equal(totalAfter, totalBefore, 'the burst conserved the total');
    // A journaled transfer is never signed a second time, whatever the chain lost: its temp key is spent.
    const replayed = after.map((r) => senders.findIndex((s) => s.address.toLowerCase() === r.from_address.toLowerCase()));
    const replays = await Promise.all(replayed.map((i) => rpcOver(server.baseUrl, '/token', 'transfer', requests[i]!)));
    replays.forEach((r, k) => assert.equal(r.resultCode, '440', `replay of journaled transfer ${replayed[k]} refused: its temp key is spent`));
    assert.equal((await journal(senders)).length, after.length, 'the replays journaled nothing');
    // The platform answered 200 only on a recorded receipt.
    const recorded = new Map(after.map((r) => [r.tx_hash, r.status]));
    outcomes.forEach((o, i) => {
      if (answered(o) && o.resultCode === '200') assert.equal(recorded.get(o.TransactionID!), 'confirmed', `transfer ${i} answered 200 on a recorded receipt`);
    });
  });

  await t.test('every transfer answered 200 is on chain, exactly once', async () => {
    for (let i = 0; i < senders.length; i++) {
      const outcome = outcomes[i]!;
      if (!answered(outcome) || outcome.resultCode !== '200') continue;
      assert.ok(await landed(outcome.TransactionID!), `transfer ${i} answered 200 (${outcome.TransactionID}) is on chain`);
      assert.equal(await balanceRaw(senders[i]!.address), senderStart - amountRaw, `sender ${i} of a transfer answered 200`);
      assert.equal(await balanceRaw(recipients[i]!.address), recipientStart + amountRaw, `recipient ${i} of a transfer answered 200`);
    }
  });

  await t.test('recovery finished every journaled transfer exactly once: no row left signed, no nonce gap, replays settle', async () => {
    const journaled = await assertExactlyOnce(senders, recipients, outcomes, totalBefore);
    await assertReplaysSettleOnce(senders, recipients, requests, journaled, totalBefore);
  });
});
