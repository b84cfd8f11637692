import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseEventLogs, type Address, type Hex, type TransactionReceipt } from 'viem';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { composePlatform, type Platform } from '../../src/compose/platform.ts';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { vixpayAccountAbi } from '../../src/gen/contracts/vixpay-account.ts';
import type { FailpointName } from '../../src/shared/failpoints.ts';
import { voidKeyOf } from '../../src/store/authorization-repository.ts';
import { rpcOver, startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process.ts';
import { sha256Hex } from '../support/transfer-scheme.ts';
import { paymentsClient, testStore } from '../support/payments.ts';
import { freshPostgresSchema } from '../support/store-factories.ts';
import { anvilControls, tokenLedger } from '../support/chain-audit.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * The fault suite's rig: the server as users run it (`node src/main.ts`, test/support/server-process.ts)
 * on a data directory this process shares the way the operator CLI does (attached to the same anvils
 * and database), so that it can set up users and stores, read the store's records and the chain,
 * and check the invariants after each crash. Failpoints are armed by configuration only
 * (FAILPOINTS, honoured with the test switch VIXPAY_TEST_FAULTS=1; src/shared/failpoints.ts).
 */
export interface FaultRig {
  dataDir: string;
  server: ServerProcess;
  operator: Platform;
  grpcPort: number;
  /** (Re)starts the server, with these failpoints armed `crash` (none by default), or `crash-chain`. */
  start(failpoints?: FailpointName[], action?: 'crash' | 'crash-chain'): Promise<void>;
  /** Waits until the server died of an armed crash failpoint (SIGKILL, its trace in the output). */
  crashedAt(name: FailpointName): Promise<void>;
  /** Waits until the server killed its chain node at an armed crash-chain failpoint (and the node is gone). */
  chainKilledAt(name: FailpointName): Promise<void>;
  stop(): Promise<void>;
}

export const password = 'correct horse battery';

export async function startFaultRig(extraEnv: Record<string, string> = {}): Promise<FaultRig> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-faults-'));
  // VIXPAY_TEST_STORE=postgres runs the server on a fresh PostgreSQL schema instead of SQLite.
  const postgres = testStore() === 'postgres' ? await freshPostgresSchema('vixpay_faults') : undefined;
  // Short windows, so that what a crash leaves open settles within a test: an authorization expires
  // 10 s after it is signed, a receipt is waited for 10 s, an operation untouched for 5 s was interrupted and
  // the sweeps run every 2 s.
  const env = {
    DATA_DIR: dataDir, CHAIN_POLL_MS: '50', RECEIPT_TIMEOUT_SECONDS: '10', AUTHORIZATION_TTL_SECONDS: '10', STALE_OPERATION_SECONDS: '5', SWEEP_INTERVAL_SECONDS: '2',
    GRPC_HOST: '127.0.0.1', PAYMENT_PAIRING_WINDOW_SECONDS: '10', PAYMENT_IDLE_TIMEOUT_SECONDS: '20',
    ...(postgres && { DATABASE_URL: postgres.databaseUrl }),
    ...extraEnv,
  };
  // The ports are startServerProcess's to pick (and to pick again when one is taken before the server
  // listens on it); the gRPC clients read rig.grpcPort, the port of the server started last.
  const startServer = async (extra: Record<string, string>): Promise<ServerProcess> => {
    const server = await startServerProcess({ ...env, ...extra });
    rig.grpcPort = server.grpcPort;
    return server;
  };
  const composeOperator = () => composePlatform(loadConfig({ ...env, LOG_LEVEL: 'silent' }), createLogger('silent'), { chainMode: 'attach', pairing: 'in-process' });
  const rig = {
    dataDir, grpcPort: 0,
    server: undefined as unknown as ServerProcess,
    operator: undefined as unknown as Platform,
    async start(failpoints: FailpointName[] = [], action: 'crash' | 'crash-chain' = 'crash') {
      // kill -9, not a clean stop: a clean stop would end the anvils the server owns.
      if (rig.server.child.exitCode === null && rig.server.child.signalCode === null) await stopServerProcess(rig.server, 'SIGKILL');
      rig.server = await startServer({ VIXPAY_TEST_FAULTS: '1', FAILPOINTS: failpoints.map((name) => `${name}=${action}`).join(',') });
      // A chain node killed too was started again by the server, on a new port: attach to it anew
      // (after the server's own start has finished its journal).
      // (A node the server does not run, RPC_URL_ETHEREUM, has no such file and stays where it was.)
      const urlFile = path.join(dataDir, 'chains', 'ethereum', 'anvil.url');
      const url = existsSync(urlFile) ? readFileSync(urlFile, 'utf8').trim() : rig.operator.chains.ethereum.url;
      if (url !== rig.operator.chains.ethereum.url) {
        await rig.operator.stop();
        rig.operator = await composeOperator();
      }
    },
    async crashedAt(name: FailpointName) {
      const { child } = rig.server;
      await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 60_000, message: `the server reaches failpoint ${name}` });
      assert.equal(child.signalCode, 'SIGKILL', `the server was killed at ${name}, not ended otherwise:\n${rig.server.output()}`);
      assert.match(rig.server.output(), new RegExp(`failpoint ${name.replaceAll('.', '\\.')}: crash`));
    },
    async chainKilledAt(name: FailpointName) {
      await waitFor(() => rig.server.output().includes(`failpoint ${name}: chain node killed`), { timeoutMs: 60_000, message: `the server reaches failpoint ${name}` });
      const pid = Number(readFileSync(path.join(dataDir, 'chains', 'ethereum', 'anvil.pid'), 'utf8'));
      await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, message: `the chain node (pid ${pid}) is gone` });
    },
    async stop() {
      await rig.operator?.stop();
      await stopServerProcess(rig.server);
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  rig.server = await startServer({ FAILPOINTS: '' });
  // Attached beside the running server, as the operator CLI is: it never finishes the server's
  // journal (that happens when it is composed, before any crash), it only reads and sets up.
  rig.operator = await composeOperator();
  return rig;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface Funded { address: string; secretKey: string }
export interface RigUser extends Funded { userId: string; token: string }

const unit = 10n ** 18n;
export const units = (whole: number) => BigInt(whole) * unit;

export async function balanceRaw(rig: FaultRig, address: string): Promise<bigint> {
  return BigInt((await rig.operator.wallet.getBalance('ethereum', { address })).balanceRaw);
}

/** A custodial account made over the server's token API, holding `tokens` VIXP. */
export async function fundedAccount(rig: FaultRig, tokens: number): Promise<Funded> {
  const account = (await rpcOver(rig.server.baseUrl, '/token', 'createAddress', {})).resultData as Funded;
  if (tokens > 0) await rig.operator.wallet.mint('ethereum', { to: account.address, amount: String(tokens) });
  return account;
}

/** A user with a custodial wallet, a password, a JWT, and `tokens` VIXP. */
export async function rigUser(rig: FaultRig, tokens: number): Promise<RigUser> {
  const account = await fundedAccount(rig, tokens);
  const userId = `user-${randomUUID()}`;
  await rig.operator.identity.users.createUser({ id: userId, password, name: 'Fault Payer', walletAddress: account.address });
  const { token } = await rig.operator.identity.jwt.issueAccessToken(userId);
  return { ...account, userId, token };
}

/** The app's signed transfer, made over the server's JSON-RPC as an app makes it. */
export async function signedTransfer(rig: FaultRig, from: Funded, to: string, amount: string) {
  const { tempKey } = (await rpcOver(rig.server.baseUrl, '/token', 'net_getTempKey', { address: from.address, keyType: 'transfer' })).resultData;
  const hashKey = sha256Hex(`${tempKey}|${from.secretKey}`);
  const data = sha256Hex(`${from.address}|${to}|${amount}|${tempKey}|${hashKey}`);
  const { signature } = (await rpcOver(rig.server.baseUrl, '/token', 'signData', { address: from.address, tempKey, hashKey, data })).resultData;
  return { fromAddress: from.address, toAddress: to, amount, tempKey, hashKey, signature: signature as string };
}

/** A client of the server's payment API (a new one per use: the server restarts under it). */
export const grpcClient = (rig: FaultRig) => paymentsClient(rig.grpcPort);

/** A JSON-RPC call whose connection the crash may cut: its answer, or `lost`. */
export async function maybeLost<T>(request: Promise<T>): Promise<T | { lost: string }> {
  return request.catch((error: Error) => ({ lost: error.message }));
}

/**
 * What must hold after any crash and restart, on the chain and in the store:
 * - the relayer's journal is finished: no transaction left `signed`, every one recorded mined has
 *   its receipt, and the relayer's nonce on chain follows the last journaled one (no gap);
 * - no authorization stays usable: each ends used, cancelled or expired (the chain moves past its
 *   short validity, and the server's sweep settles it);
 * - the store's records agree with the chain's events: each authorization recorded used has its
 *   AuthorizationUsed event in that transaction and each event has its record, likewise cancelled;
 *   each approved payment, completed cancellation and claimed reward names a used authorization's
 *   transaction; refunds never exceed what was paid;
 * - the webhook outbox holds exactly one event for each approval, completed refund and paid reward;
 * - conservation: the sum of all balances is the total supply, which is what was minted.
 */
export async function assertInvariants(rig: Pick<FaultRig, 'operator'>, options: { outOfBand?: readonly string[] } = {}): Promise<void> {
  const { operator } = rig;
  const { db } = operator.store;
  const chain = operator.chains.ethereum;
  const vixp = operator.contracts.ethereum.vixpToken;

  // Finished, and mined where the journal says so: a node that went back (a rollback) lost blocks the
  // journal recorded, and the platform sends their transactions again from its next sweep on.
  const unfinished = async () => {
    const rows = await db.selectFrom('chain_txs').select(['id', 'tx_hash', 'status', 'relayer', 'nonce', 'kind', 'reference', 'block_number'])
      .where('network', '=', 'ethereum').execute();
    const mined = await Promise.all(rows.map((r) => chain.client.getTransactionReceipt({ hash: r.tx_hash as Hex }).then(() => true, () => false)));
    return rows.filter((r, i) => r.status === 'signed' || !mined[i]);
  };
  await waitFor(async () => (await unfinished()).length === 0, { timeoutMs: 60_000, message: 'the restarted server finished every journaled transaction, each mined on the chain as recorded' })
    .catch(async (error: Error) => {
      // What is left, beside each lane's nonce on chain: a gap below a row, a row the chain never had.
      const rows = await unfinished();
      const lanes = [...new Set(rows.map((r) => r.relayer))];
      const nonces = await Promise.all(lanes.map(async (lane) => `${lane} latest ${await chain.client.getTransactionCount({ address: lane as Hex, blockTag: 'latest' })} pending ${await chain.client.getTransactionCount({ address: lane as Hex, blockTag: 'pending' })}`));
      throw new Error(`${error.message}: ${JSON.stringify(rows)}; ${nonces.join('; ')}`);
    });
  // Every lane of the relayer (each its own nonce sequence).
  const accountSettlement = operator.contracts.ethereum.accountSettlement.toLowerCase();
  const accountBatches: TransactionReceipt[] = [];
  for (const lane of operator.relayer.lanes) {
    const mined = await db.selectFrom('chain_txs').select(['tx_hash', 'status', 'nonce']).where('network', '=', 'ethereum').where('relayer', '=', lane).execute();
    if (mined.length === 0) continue;
    for (const tx of mined) {
      const receipt = await chain.client.getTransactionReceipt({ hash: tx.tx_hash as Hex });
      assert.equal(receipt.status === 'success' ? 'confirmed' : 'failed', tx.status, `journaled ${tx.tx_hash} is recorded as the chain has it`);
      if (receipt.to?.toLowerCase() === accountSettlement) accountBatches.push(receipt);
    }
    const lastNonce = Math.max(...mined.map((tx) => Number(tx.nonce)));
    assert.equal(await chain.client.getTransactionCount({ address: lane, blockTag: 'latest' }), lastNonce + 1, `no nonce gap on lane ${lane}`);
  }

  const anvil = anvilControls(chain);
  await waitFor(async () => {
    const open = await db.selectFrom('authorizations').select(['nonce', 'valid_before']).where('network', '=', 'ethereum')
      .where('status', 'in', ['reserved', 'submitted']).execute();
    if (open.length === 0) return true;
    // Expiry is judged on the chain's time: a block past the validity lets the sweep decide.
    const head = await chain.client.getBlock({ blockTag: 'latest' });
    if (open.some((a) => Number(a.valid_before) <= Date.now() / 1000 && head.timestamp < BigInt(a.valid_before))) await anvil.mine({ blocks: 1 });
    return false;
  }, { timeoutMs: 60_000, message: 'every authorization left open by the crash ends used, cancelled or expired', intervalMs: 250 }).catch(async (error: unknown) => {
    // Which ones, as the store and the chain have them: what a replay of the failure starts from.
    const open = await db.selectFrom('authorizations').select(['nonce', 'status', 'reference', 'valid_before', 'tx_hash', 'cancel_tx_hash', 'from_address', 'updated_at'])
      .where('network', '=', 'ethereum').where('status', 'in', ['reserved', 'submitted']).execute();
    const head = await chain.client.getBlock({ blockTag: 'latest' }).catch(() => undefined);
    throw new Error(`${(error as Error).message}; open at the chain's ${head ? `block ${head.number} (time ${head.timestamp})` : 'unknown head'}, now ${Math.floor(Date.now() / 1000)}: ${JSON.stringify(open).slice(0, 1500)}`);
  });

  const authorizations = await db.selectFrom('authorizations').selectAll().where('network', '=', 'ethereum').execute();
  const used = await chain.client.getContractEvents({ address: vixp, abi: vixpTokenAbi, eventName: 'AuthorizationUsed', fromBlock: 0n });
  const canceled = await chain.client.getContractEvents({ address: vixp, abi: vixpTokenAbi, eventName: 'AuthorizationCanceled', fromBlock: 0n });
  // By the payer and the nonce on chain, as the token keys them: an outside payer's row (x402) is keyed by
  // network, token, payer and nonce, and a custodial payer's counter nonce (src/wallet/authorization-nonce.ts)
  // starts at the clock's microseconds, so two payers' first authorizations of one millisecond share a nonce.
  const onChainKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
  const recordOf = new Map(authorizations.map((a) => [onChainKey(a.from_address, a.chain_nonce ?? a.nonce), a]));
  // Authorizations a test signed itself, outside the platform (to drain an account behind its back).
  const outOfBand = new Set((options.outOfBand ?? []).map((n) => n.toLowerCase()));
  for (const event of used) {
    if (outOfBand.has(String(event.args.nonce).toLowerCase())) continue;
    const record = recordOf.get(onChainKey(String(event.args.authorizer), String(event.args.nonce)));
    assert.ok(record, `AuthorizationUsed ${event.args.nonce} on chain has its record`);
    assert.equal(record.status, 'used', `authorization ${record.reference} used on chain is recorded used`);
    assert.equal(record.tx_hash?.toLowerCase(), event.transactionHash.toLowerCase(), `authorization ${record.reference} names the transaction that used it`);
  }
  for (const event of canceled) {
    const record = recordOf.get(onChainKey(String(event.args.authorizer), String(event.args.nonce)));
    assert.ok(record, `AuthorizationCanceled ${event.args.nonce} on chain has its record`);
    assert.equal(record.status, 'canceled', `authorization ${record.reference} cancelled on chain is recorded cancelled`);
  }
  const usedOnChain = new Set(used.map((e) => onChainKey(String(e.args.authorizer), String(e.args.nonce))));
  const accountRows = authorizations.filter(isAccountRow);
  // A transfer is on chain by its AuthorizationUsed (EIP-3009) or, on the account path, as its row
  // recorded used, which assertAccountTransfers checks against the chain below.
  const usedTxs = new Set([...used.map((e) => e.transactionHash.toLowerCase()),
    ...accountRows.filter((a) => a.status === 'used').map((a) => String(a.tx_hash).toLowerCase())]);
  for (const record of authorizations) {
    const chainNonce = record.chain_nonce ?? record.nonce;
    // An account transfer (a token without EIP-3009): its nonce is the account's, checked below. A
    // reference a stale sweep voided before anything was signed under it has nothing on chain.
    if (isAccountRow(record) || record.nonce === voidKeyOf(record.network, record.reference)) continue;
    if (record.status === 'used') assert.ok(usedOnChain.has(onChainKey(record.from_address, chainNonce)), `authorization ${record.reference} recorded used is used on chain`);
    const state = await chain.client.readContract({
      address: record.contract_address as Address, abi: vixpTokenAbi, functionName: 'authorizationState', args: [record.from_address as Address, chainNonce as Hex],
    });
    if (record.status === 'expired') assert.equal(state, false, `authorization ${record.reference} recorded expired was never used`);
  }

  await assertAccountTransfers(chain.client, accountRows);
  // The converse: every transfer an account batch moved has its row, recorded used in that transaction.
  for (const receipt of accountBatches) {
    for (const log of parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs })) {
      const row = accountRows.find((a) => a.tx_hash?.toLowerCase() === receipt.transactionHash.toLowerCase() && a.from_address.toLowerCase() === log.args.from.toLowerCase()
        && a.to_address.toLowerCase() === log.args.to.toLowerCase() && BigInt(a.value) === log.args.value && a.contract_address.toLowerCase() === log.address.toLowerCase());
      assert.equal(row?.status, 'used', `the account transfer of ${log.args.value} from ${log.args.from} in ${receipt.transactionHash} has its row, recorded used`);
    }
  }

  const payments = await db.selectFrom('payments').select(['tid', 'tran_no', 'status', 'transfer_transaction_id', 'token_amount', 'refunded_amount']).execute();
  for (const payment of payments) {
    if (payment.status === 'approved') assert.ok(usedTxs.has(String(payment.transfer_transaction_id).toLowerCase()), `approved payment ${payment.tran_no} names a transfer on chain`);
    assert.ok(BigInt(payment.refunded_amount) <= BigInt(payment.token_amount ?? '0'), `payment ${payment.tran_no}: refunds never exceed what was paid`);
  }
  const cancellations = await db.selectFrom('payment_cancellations').selectAll().execute();
  for (const c of cancellations) {
    if (c.status === 'done') assert.ok(usedTxs.has(String(c.transfer_transaction_id).toLowerCase()), `completed cancellation ${c.id} names a refund on chain`);
  }
  const rewards = await db.selectFrom('rewards').selectAll().execute();
  for (const r of rewards) {
    if (r.status === 'claimed' || r.status === 'canceling') assert.ok(usedTxs.has(String(r.claim_transaction_id).toLowerCase()), `claimed reward ${r.id} names its payout on chain`);
    if (r.status === 'canceled' && r.cancel_transaction_id) assert.ok(usedTxs.has(r.cancel_transaction_id.toLowerCase()), `canceled reward ${r.id} names its give-back on chain`);
  }

  // The webhook outbox is written with each state change it reports: one event per approval,
  // completed refund and paid reward, naming the same transaction.
  const events = await db.selectFrom('webhook_events').select(['type', 'data']).execute();
  const eventsOf = (type: string, field: string, value: string | null) => events
    .filter((e) => e.type === type && String((JSON.parse(e.data) as Record<string, string>)[field]).toLowerCase() === String(value).toLowerCase()).length;
  for (const payment of payments.filter((x) => x.status === 'approved')) {
    // Payments settled in one batch share its transaction: each approval's event is its tid and tran_no's.
    const approvals = events.filter((e) => e.type === 'payment.approved').map((e) => JSON.parse(e.data) as Record<string, string>)
      .filter((d) => d.tid === payment.tid && d.tran_no === payment.tran_no && String(d.transfer_transaction_id).toLowerCase() === String(payment.transfer_transaction_id).toLowerCase());
    assert.equal(approvals.length, 1, `approved payment ${payment.tran_no} has its payment.approved event`);
  }
  for (const c of cancellations.filter((x) => x.status === 'done')) {
    // Refunds settled in one batch share its transaction too: each event is its cancellation's, by
    // its cancel number (approval_no, unique), naming that transaction.
    const own = events.filter((e) => e.type === 'payment.canceled').map((e) => JSON.parse(e.data) as Record<string, string>).filter((d) => d.approval_no === c.cancel_no);
    assert.deepEqual(own.map((d) => String(d.transfer_transaction_id).toLowerCase()), [String(c.transfer_transaction_id).toLowerCase()], `completed cancellation ${c.id} has its payment.canceled event`);
  }
  for (const r of rewards.filter((x) => x.claim_transaction_id && (x.status === 'claimed' || x.status === 'canceling' || x.status === 'canceled'))) {
    assert.equal(eventsOf('reward.claimed', 'reward_id', r.id), 1, `paid reward ${r.id} has its reward.claimed event`);
  }

  const ledger = await tokenLedger(chain.client, vixp);
  assert.equal(ledger.sumOfBalances, ledger.totalSupply, 'the sum of all balances is the total supply');
  assert.equal(ledger.totalSupply, ledger.minted, 'the total supply is what was minted');
}

const isAccountRow = (record: { network: string; nonce: string }) => record.nonce.startsWith(`${record.network}:account:`);

/**
 * The account transfers' rows (docs/decisions/tokens.md) agree with the chain: one recorded used has
 * its nonce used at the account and the token's Transfer of exactly its value from the account to its
 * payee in the transaction it names; one cancelled, its nonce used and the account's NonceCancelled in
 * its cancellation's transaction; one expired, its nonce unused.
 */
async function assertAccountTransfers(client: FaultRig['operator']['chains']['ethereum']['client'], records: ReadonlyArray<{
  reference: string; status: string; from_address: string; to_address: string; contract_address: string; value: string; chain_nonce: string | null; tx_hash: string | null; cancel_tx_hash: string | null;
}>): Promise<void> {
  for (const record of records) {
    const account = record.from_address as Address;
    const nonce = BigInt(record.chain_nonce ?? '0x');
    const code = await client.getCode({ address: account });
    const used = code !== undefined && code.startsWith('0xef0100')
      && await client.readContract({ address: account, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [nonce] });
    if (record.status === 'expired') assert.equal(used, false, `account transfer ${record.reference} recorded expired was never executed`);
    if (record.status === 'used') {
      assert.equal(used, true, `account transfer ${record.reference} recorded used has its nonce used`);
      const receipt = await client.getTransactionReceipt({ hash: record.tx_hash as Hex });
      const moved = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs }).filter((log) => log.address.toLowerCase() === record.contract_address.toLowerCase()
        && log.args.from.toLowerCase() === account.toLowerCase() && log.args.to.toLowerCase() === record.to_address.toLowerCase() && log.args.value === BigInt(record.value));
      assert.equal(moved.length, 1, `account transfer ${record.reference} recorded used moved its value once in ${record.tx_hash}`);
    }
    if (record.status === 'canceled') {
      assert.equal(used, true, `account transfer ${record.reference} recorded cancelled has its nonce used`);
      const receipt = await client.getTransactionReceipt({ hash: record.cancel_tx_hash as Hex });
      const cancelled = parseEventLogs({ abi: vixpayAccountAbi, eventName: 'NonceCancelled', logs: receipt.logs })
        .filter((log) => log.address.toLowerCase() === account.toLowerCase() && log.args.nonce === nonce);
      assert.equal(cancelled.length, 1, `account transfer ${record.reference} recorded cancelled has its NonceCancelled in ${record.cancel_tx_hash}`);
    }
  }
}

/** The authorization of an operation (by its transfer reference prefix), if one was made. */
export async function authorizationsOf(rig: FaultRig, referencePrefix: string) {
  return rig.operator.store.db.selectFrom('authorizations').selectAll().where('reference', 'like', `${referencePrefix}%`).execute();
}

/** The server's log so far (for a failure message). */
export function serverLog(rig: FaultRig): string {
  return rig.server.output().slice(-4000);
}
