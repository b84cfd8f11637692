import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { getAddress, parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type { PaymentRequirements } from '@x402/core/types';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { dateOf } from '../src/statements/statement-day.ts';
import { statementColumns } from '../src/statements/statement-render.ts';
import { csvRecords } from './support/csv.ts';
import { announceClosedDays } from '../src/statements/statement-ready.ts';
import { createStatementRepository } from '../src/store/statement-repository.ts';
import { createOperatorRepository } from '../src/store/operator-repository.ts';
import { addOperator } from '../src/console/operators.ts';
import { createPasswordHasher } from '../src/identity/password-hasher.ts';
import { balanceOf, newUser, startPaymentTest, type PaymentTest } from './support/payments.ts';
import { strangerWallet } from './support/chain-audit.ts';
import { assertSameShape } from './support/doc-examples.ts';
import { addFacilitatorKey } from '../src/x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../src/store/facilitator-key-repository.ts';
import {
  approvedPayment, cancelPayment, cancelReward, claimReward, issueReward, type TestStore,
} from './support/scripted-payments.ts';

let p: PaymentTest;
let store: TestStore;
let otherStore: TestStore;
let outsideStore: TestStore;
before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' });
  store = await p.t.platform.payments.addStore({ tid: 'ST-1001', name: 'Statement Books' });
  otherStore = await p.t.platform.payments.addStore({ tid: 'ST-2002', name: 'Other Shop' });
  outsideStore = await p.t.platform.payments.addStore({ tid: 'ST-3003', name: 'Corner Shop' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

const today = () => dateOf(p.t.platform.clock(), p.t.config.timeZone);

async function statement(tid: string, apiKey: string, accept?: string) {
  const response = await p.t.app.inject({
    method: 'GET', url: `/v1/stores/${tid}/statements/${today()}`,
    headers: { authorization: `Bearer ${apiKey}`, ...(accept && { accept }) },
  });
  return { status: response.statusCode, type: String(response.headers['content-type']), text: response.body };
}

const sum = (amounts: string[]) => amounts.reduce((total, a) => total + parseUnits(a, 18), 0n);

describe('a store\'s daily statement', () => {
  test('payments, a partial refund, a reward claim and a cancellation: every line once, in chain order, balances add up, reconciled', async () => {
    const user = await newUser(p, '100');
    const first = await approvedPayment(p, store, user, '20000');
    const second = await approvedPayment(p, store, user, '5000');
    const refund = await cancelPayment(p, store, user, first.end, '5');
    const kept = await issueReward(p, store, '2500');
    await claimReward(p, user, kept);
    const givenBack = await issueReward(p, store, '1000');
    await claimReward(p, user, givenBack);
    await cancelReward(p, store, givenBack);
    const rewardTx = async (id: string, column: 'claim_transaction_id' | 'cancel_transaction_id') =>
      (await p.t.platform.store.db.selectFrom('rewards').select(column).where('id', '=', id).executeTakeFirstOrThrow())[column];

    const res = await statement(store.tid, store.apiKey);
    assert.equal(res.status, 200, res.text);
    assert.match(res.type, /^application\/json/);
    const body = JSON.parse(res.text);
    assert.equal(body.tid, store.tid);
    assert.equal(body.date, today());
    assert.equal(body.closed, false, 'today is not over');
    assert.equal(getAddress(body.account), getAddress(store.settlementAddress));
    const expected = [
      ['payment', first.tranNo, first.end.approval_no, '20', first.end.transfer_transaction_id],
      ['payment', second.tranNo, second.end.approval_no, '5', second.end.transfer_transaction_id],
      ['refund', first.tranNo, refund.approval_no, '-5', refund.transfer_transaction_id],
      ['reward', kept.reward_id, null, '-2.5', await rewardTx(kept.reward_id!, 'claim_transaction_id')],
      ['reward', givenBack.reward_id, null, '-1', await rewardTx(givenBack.reward_id!, 'claim_transaction_id')],
      ['reward_cancellation', givenBack.reward_id, null, '1', await rewardTx(givenBack.reward_id!, 'cancel_transaction_id')],
    ];
    assert.deepEqual(body.lines.map((l: any) => [l.kind, l.reference, l.kind === 'reward_cancellation' ? null : l.approvalNo, l.amount, l.txHash]), expected);
    for (const line of body.lines) {
      assert.equal(line.reconciled, true, `${line.kind} ${line.reference} found in its receipt`);
      assert.equal(typeof line.logIndex, 'number');
      assert.equal(getAddress(line.counterparty), getAddress(user.address));
      assert.equal(line.token, 'VIXP');
      const receipt = await p.t.platform.chains.ethereum.client.getTransactionReceipt({ hash: line.txHash });
      assert.equal(Number(receipt.blockNumber), line.blockNumber);
      assert.ok(receipt.logs.some((log) => log.logIndex === line.logIndex), 'the log index is in the receipt');
    }
    const orders = body.lines.map((l: any) => l.blockNumber * 1e6 + l.logIndex);
    assert.deepEqual(orders, [...orders].sort((a: number, b: number) => a - b), 'chain order');
    assert.ok(body.lines.at(-1).approvalNo, 'a reward give-back carries its cancellation number');

    assert.equal(body.reconciled, true, JSON.stringify(body.discrepancies));
    assert.deepEqual(body.discrepancies, []);
    const [vixp] = body.balances;
    assert.equal(vixp.opening, '0');
    assert.equal(vixp.net, '17.5');
    assert.equal(vixp.closing, await balanceOf(p, store.settlementAddress));
    assert.equal(sum([vixp.opening, ...body.lines.map((l: any) => l.amount)]), parseUnits(vixp.closing, 18));
    assert.deepEqual(body.totals.map((t: any) => [t.kind, t.count, t.amount]).sort(), [
      ['payment', 2, '25'], ['refund', 1, '-5'], ['reward', 2, '-3.5'], ['reward_cancellation', 1, '1'],
    ].sort());
    assert.deepEqual(body.net, [{ token: 'VIXP', amount: '17.5' }]);

    // The same statement as CSV: named columns, one row per line between the balances.
    const csv = await statement(store.tid, store.apiKey, 'text/csv');
    assert.equal(csv.status, 200);
    assert.match(csv.type, /^text\/csv/);
    assert.equal(csv.text.split('\r\n')[0], statementColumns.join(','));
    const rows = csvRecords(csv.text);
    const lineRows = rows.filter((r) => expected.some(([kind]) => kind === r.kind));
    assert.deepEqual(lineRows.map((r) => [r.kind, r.reference, r.amount, r.tx_hash, r.reconciled]), expected.map(([kind, ref, , amount, tx]) => [kind, ref, amount, tx, 'true']));
    assert.deepEqual(rows.filter((r) => r.kind === 'opening_balance').map((r) => r.amount), ['0']);
    assert.deepEqual(rows.filter((r) => r.kind === 'closing_balance').map((r) => r.amount), [vixp.closing]);
    assert.equal(rows.at(-1)!.kind, 'statement');
    assert.equal(rows.at(-1)!.reconciled, 'true');
    assert.match(lineRows[0]!.local_time ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  test('a transfer sent by hand to the store\'s account from outside the platform: listed as unexplained, not reconciled', async () => {
    const user = await newUser(p, '20');
    const paid = await approvedPayment(p, outsideStore, user, '3000');
    const { ethereum } = p.t.platform.chains;
    const stranger = await strangerWallet(ethereum, '1');
    await p.t.platform.wallet.mint('ethereum', { to: stranger.account.address, amount: '7' });
    const chain = { id: ethereum.chainId, name: 'ethereum', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [ethereum.url] } } };
    const hash = await stranger.writeContract({
      chain, address: p.t.platform.contracts.ethereum.vixpToken as Address, abi: vixpTokenAbi, functionName: 'transfer',
      args: [outsideStore.settlementAddress as Address, parseUnits('4', 18)],
    });
    await ethereum.client.waitForTransactionReceipt({ hash });

    const body = JSON.parse((await statement(outsideStore.tid, outsideStore.apiKey)).text);
    assert.equal(body.reconciled, false);
    assert.deepEqual(body.lines.map((l: any) => [l.kind, l.amount, l.reconciled]), [['payment', '3', true], ['unexplained', '4', false]]);
    const outside = body.lines[1];
    assert.equal(outside.txHash, hash);
    assert.equal(getAddress(outside.counterparty), getAddress(stranger.account.address));
    assert.equal(outside.reference, '');
    assert.deepEqual(body.discrepancies.map((d: any) => d.type), ['unexplained_transfer']);
    assert.equal(body.discrepancies[0].txHash, hash);
    assert.equal(body.discrepancies[0].amount, '4');
    // The lines' net is the payment; the balance grew by the payment and the stranger's 4.
    assert.deepEqual(body.balances.map((b: any) => [b.net, b.unexplained, b.closing, b.difference]), [['3', '4', '7', '4']]);
    assert.equal(paid.end.transfer_transaction_id, body.lines[0].txHash);
  });

  test('store B asking for store A\'s statement is refused; its own has none of A\'s lines', async () => {
    const foreign = await statement(store.tid, otherStore.apiKey);
    assert.equal(foreign.status, 401);
    assert.equal(JSON.parse(foreign.text).error.code, 'request.unauthorized');
    assert.equal((await statement(store.tid, 'vxp_wrong')).status, 401);
    const noKey = await p.t.app.inject({ method: 'GET', url: `/v1/stores/${store.tid}/statements/${today()}` });
    assert.equal(noKey.statusCode, 401);
    const own = JSON.parse((await statement(otherStore.tid, otherStore.apiKey)).text);
    assert.deepEqual(own.lines, []);
    assert.equal(own.reconciled, true);
    const badDate = await p.t.app.inject({ method: 'GET', url: `/v1/stores/${store.tid}/statements/2026-02-30`, headers: { authorization: `Bearer ${store.apiKey}` } });
    assert.equal(badDate.statusCode, 400);
  });
});

test('the operator: vixpay statement and operator-day beside the platform, and the console\'s downloads', async () => {
  const run = promisify(execFile);
  // The machine's clock in another zone than TIME_ZONE (Asia/Seoul): the days stay TIME_ZONE's.
  const runCli = async (...args: string[]) => run(process.execPath, ['bin/vixpay.js', ...args], {
    env: { ...process.env, TZ: 'America/Los_Angeles', DATA_DIR: p.t.dataDir, LOG_LEVEL: 'silent', ...(p.t.config.databaseUrl && { DATABASE_URL: p.t.config.databaseUrl }) },
    maxBuffer: 64 * 1024 * 1024,
  });
  const cli = async (...args: string[]) => (await runCli(...args)).stdout;
  const http = await statement(store.tid, store.apiKey, 'text/csv');
  assert.equal(await cli('statement', '--tid', store.tid, '--date', today(), '--csv'), http.text, 'the CLI writes the same CSV');
  // Without --date: today in TIME_ZONE, named with its zone on stderr; stdout is the document, indented.
  const terminal = await runCli('statement', '--tid', store.tid);
  assert.match(terminal.stderr, new RegExp(`^statement of ${store.tid}: ${today()} in Asia/Seoul \\(TIME_ZONE\\), ${today()}T00:00:00\\.000\\+09:00 to ${today()}T23:59:59\\.999\\+09:00; the day is`));
  assert.match(terminal.stdout, /^\{\n {2}"tid": /);
  const json = JSON.parse(terminal.stdout);
  assert.equal(json.date, today());
  assert.equal(json.timeZone, 'Asia/Seoul');
  assert.equal(json.firstInstant, `${today()}T00:00:00.000+09:00`);
  assert.equal(json.reconciled, true);
  assert.equal(json.lines.length, 6);
  const compact = await runCli('statement', '--tid', store.tid, '--json');
  assert.deepEqual(JSON.parse(compact.stdout), json, '--json: the same document');
  assert.equal(compact.stdout.trim().split('\n').length, 1, '--json: one line');
  assert.equal(compact.stderr, '');
  const readable = await runCli('operator-day', '--network', 'ethereum');
  assert.match(readable.stderr, new RegExp(`^operator's day: ${today()} in Asia/Seoul \\(TIME_ZONE\\)`));
  // Settlement fees first, deploys and mints apart, every fee in ETH with wei beside.
  assert.match(readable.stderr, /\n {2}ethereum: settlement fees [\d.]+ ETH \(\d+ wei\) over \d+ settlement transactions \(\d+ POS, 0 x402, 0 both\), \d+ transfers, [\d.]+ ETH per transfer, [\d.]+ ETH per settlement transaction; not settlement: .*\d+ mint [\d.]+ ETH.*; all fees [\d.]+ ETH \(\d+ wei\)\n/);
  const day = JSON.parse(await cli('operator-day', '--date', today(), '--network', 'ethereum', '--json'));
  assert.deepEqual(JSON.parse(readable.stdout), day, 'the same document, indented');
  assert.deepEqual(day.networks.map((n: any) => n.network), ['ethereum']);
  const settled = day.transactions.find((t: any) => t.txHash === json.lines[0].txHash);
  assert.ok(settled, 'the payment\'s settlement transaction is in the operator\'s day');
  assert.ok(settled.transfers >= 1 && Number(settled.gasUsed) > 0 && BigInt(settled.feeWei) > 0n);
  assert.equal(settled.kind, 'pos-settlement');
  assert.equal(settled.currency, 'ETH');
  assert.equal(parseUnits(settled.fee, 18), BigInt(settled.feeWei), 'the fee in ETH is the fee in wei');
  const [ethereum] = day.networks;
  assert.ok(ethereum.transfers >= settled.transfers);
  assert.equal(ethereum.x402Transfers, 0);
  assert.ok(ethereum.otherTransactions.mint >= 1 && ethereum.otherTransactions.deploy >= 1, 'deploys and mints counted apart');
  assert.equal(ethereum.settlementTransactions, day.transactions.filter((t: any) => t.kind.endsWith('settlement')).length);
  assert.equal(parseUnits(ethereum.feesPaid, 18), BigInt(ethereum.feesPaidWei));
  // The headline: what the settlement transactions cost, apart from the deploys' and mints'.
  const settlementWei = day.transactions.filter((t: any) => t.kind.endsWith('settlement')).reduce((sum: bigint, t: any) => sum + BigInt(t.feeWei), 0n);
  assert.equal(ethereum.settlementFees.total.wei, String(settlementWei));
  assert.equal(ethereum.settlementFees.l1Data.wei, '0', 'no L1 data fee on ethereum');
  assert.equal(BigInt(ethereum.otherFees.total.wei), BigInt(ethereum.feesPaidWei) - settlementWei);
  assert.ok(BigInt(ethereum.otherFeesByKind.deploy.total.wei) > 0n && BigInt(ethereum.otherFeesByKind.mint.total.wei) > 0n);
  assert.equal(readable.stderr.includes(`settlement fees ${ethereum.settlementFees.total.amount} ETH (${settlementWei} wei)`), true);
  const csv = (await cli('operator-day', '--date', today(), '--csv')).trim().split('\r\n');
  assert.equal(csv[0], 'network,tx_hash,kind,block_number,status,gas_used,fee,currency,fee_wei,transfers,pos_transfers,x402_transfers,gas_per_transfer,'
    + 'execution_fee,execution_fee_wei,l1_data_fee,l1_data_fee_wei,operator_fee,operator_fee_wei,fee_per_transfer,fee_per_transfer_wei');
  assert.equal(csv.filter((r) => r.split(',')[1] === 'total').length, 4, 'a total row per network');
  assert.equal(csv.filter((r) => r.split(',')[1] === 'settlements').length, 4, 'a settlements row per network');
  const settlementsRow = csv.find((r) => r.startsWith('ethereum,settlements,'))!.split(',');
  assert.deepEqual([settlementsRow[6], settlementsRow[8]], [ethereum.settlementFees.total.amount, String(settlementWei)]);
  assert.ok(csv.some((r) => r.startsWith('ethereum,other,deploy: ')) && csv.some((r) => r.startsWith('ethereum,other,mint: ')), 'deploys and mints on rows of their own');
  const settledRow = csv.find((r) => r.split(',')[1] === settled.txHash)!.split(',');
  assert.deepEqual([settledRow[2], settledRow[6], settledRow[7], settledRow[8]], ['pos-settlement', settled.fee, 'ETH', settled.feeWei]);

  // The console: an operator downloads any store's statement and the operator's day.
  const { platform } = p.t;
  await addOperator({ operators: createOperatorRepository(platform.store.db), passwords: createPasswordHasher(), clock: platform.clock }, { username: 'accountant', password: 'ledger lines 1234' });
  const login = await p.t.app.inject({ method: 'POST', url: '/console/login', payload: 'username=accountant&password=ledger+lines+1234', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  const download = await p.t.app.inject({ method: 'GET', url: `/console/api/statement?tid=${store.tid}&date=${today()}`, headers: { cookie } });
  assert.equal(download.statusCode, 200);
  assert.match(String(download.headers['content-disposition']), /^attachment; filename="statement-ST-1001-\d{4}-\d{2}-\d{2}\.csv"$/);
  assert.equal(download.body, http.text);
  const dayCsv = await p.t.app.inject({ method: 'GET', url: `/console/api/operator-day?date=${today()}`, headers: { cookie } });
  assert.equal(dayCsv.statusCode, 200);
  assert.equal(dayCsv.body.split('\r\n')[0], csv[0]);
  assert.equal((await p.t.app.inject({ method: 'GET', url: `/console/api/statement?tid=${store.tid}&date=${today()}` })).statusCode, 401, 'no session');
  const page = await p.t.app.inject({ method: 'GET', url: '/console', headers: { cookie } });
  assert.match(page.body, /action="\/console\/api\/statement"/);
});

test('statement.ready: written once per store and closed day, from the day the store was added', async () => {
  const repository = createStatementRepository(p.t.platform.store.db);
  const twoDaysLater = p.t.platform.clock() + 2 * 86_400_000;
  const deps = { repository, clock: () => twoDaysLater, timeZone: p.t.config.timeZone };
  const written = await announceClosedDays(deps);
  const events = await p.t.platform.store.db.selectFrom('webhook_events').select(['tid', 'data']).where('type', '=', 'statement.ready').execute();
  const stores = await p.t.platform.store.db.selectFrom('stores').select('tid').execute();
  // Today and tomorrow have closed two days later; the day before the stores were added is skipped.
  assert.equal(written, stores.length * 2);
  assert.equal(events.length, written);
  const mine = events.filter((e) => e.tid === store.tid).map((e) => JSON.parse(e.data)).sort((a, b) => a.date.localeCompare(b.date));
  assert.equal(mine[0].date, today());
  assert.equal(mine[0].statement_path, `/v1/stores/${store.tid}/statements/${today()}`);
  assert.equal(await announceClosedDays(deps), 0, 'once');
  const documented = /<!-- statements-example: statement-ready -->\n```json\n([\s\S]*?)\n```/.exec(readFileSync('docs/statements.md', 'utf8'));
  assert.ok(documented, 'docs/statements.md shows the event');
  assertSameShape(JSON.parse(documented[1]!).data, mine[0], new Set(['time_zone', 'res_code', 'res_message']));
});

test('docs/statements.md: the example is what the endpoint answers', async () => {
  const doc = readFileSync('docs/statements.md', 'utf8');
  const example = /<!-- statements-example: statement -->\n```json\n([\s\S]*?)\n```/.exec(doc);
  assert.ok(example, 'docs/statements.md has the example');
  const documented = JSON.parse(example[1]!);
  const actual = JSON.parse((await statement(store.tid, store.apiKey)).text);
  assertSameShape(documented, actual, new Set(['kind', 'token', 'timeZone', 'network', 'closed', 'reconciled', 'exchangeCurrency', 'type', 'discrepancyCount']));
  const csv = /<!-- statements-example: csv -->\n```csv\n([\s\S]*?)\n```/.exec(doc);
  assert.ok(csv, 'docs/statements.md has the CSV example');
  assert.equal(csv[1]!.split('\n')[0], statementColumns.join(','));
});

// Last: the operator's day above counts the day's x402 transfers.
test('an x402 payment into a store\'s settlement account: a line of its own kind (x402, payer and nonce as reference), reconciled', async () => {
  const { platform } = p.t;
  const shop = await platform.payments.addStore({ tid: 'ST-4004', name: 'API Shop' });
  const network = platform.config.paymentNetwork;
  const key = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(platform.store.db), clock: Date.now }, { name: 'the shop\'s API', tid: shop.tid });
  const payer = privateKeyToAccount(generatePrivateKey());
  await platform.wallet.mint(network, { to: payer.address, amount: '3' });
  const requirements: PaymentRequirements = {
    scheme: 'exact', network: `eip155:${platform.chains[network].chainId}`, asset: platform.contracts[network].vixpToken, amount: parseUnits('2', 18).toString(),
    payTo: shop.settlementAddress, maxTimeoutSeconds: 120, extra: { name: 'VIXP', version: '1' },
  };
  const { payload } = await new ExactEvmClientScheme(payer).createPaymentPayload(2, requirements);
  const paymentPayload = { x402Version: 2, accepted: requirements, payload, resource: { url: 'http://example.test/report', description: '', mimeType: '' } };
  const settled = await platform.x402.facilitator.settle({ x402Version: 2, paymentPayload, paymentRequirements: requirements }, { keyId: key.id, waitMs: 30_000 });
  assert.equal(settled.response.success, true, JSON.stringify(settled.response));
  const nonce = (payload as { authorization: { nonce: string } }).authorization.nonce;
  const reference = `${payer.address}/${nonce}`;

  const body = JSON.parse((await statement(shop.tid, shop.apiKey)).text);
  assert.deepEqual(body.lines.map((l: any) => [l.kind, l.reference, l.approvalNo, l.amount, l.token, l.txHash, l.reconciled]),
    [['x402', reference, null, '2', 'VIXP', settled.response.transaction, true]]);
  assert.equal(getAddress(body.lines[0].counterparty), payer.address);
  assert.equal(typeof body.lines[0].logIndex, 'number');
  assert.equal(body.reconciled, true, JSON.stringify(body.discrepancies));
  assert.deepEqual(body.totals.map((t: any) => [t.kind, t.count, t.amount]), [['x402', 1, '2']]);
  assert.deepEqual(body.balances.map((b: any) => [b.net, b.unexplained, b.closing, b.difference]), [['2', '0', '2', '0']]);
  const rows = csvRecords((await statement(shop.tid, shop.apiKey, 'text/csv')).text);
  assert.deepEqual(rows.filter((r) => r.kind === 'x402').map((r) => [r.reference, r.amount, getAddress(r.counterparty!), r.reconciled]), [[reference, '2', payer.address, 'true']]);
  assert.deepEqual(rows.filter((r) => r.kind === 'total_x402').map((r) => r.amount), ['2']);
});
