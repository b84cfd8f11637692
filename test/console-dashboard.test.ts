import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { formatEther, formatUnits } from 'viem';
import { skipWithout } from './support/parts.ts';
import { networkNames } from '../src/shared/networks.ts';
import { assertSameShape } from './support/doc-examples.ts';
import { newUser, startPaymentTest, type PaymentTest, type TestUser } from './support/payments.ts';
import {
  approvedPayment, cancelPayment, cancelReward, claimReward, failedPayment, issueReward, type TestStore,
} from './support/scripted-payments.ts';
import { addOperator } from '../src/console/operators.ts';
import { localDateTime } from '../src/statements/statement-day.ts';
import { roundedForPerson } from '../src/console/fee-parts.ts';
import { createOperatorRepository } from '../src/store/operator-repository.ts';
import { createPasswordHasher } from '../src/identity/password-hasher.ts';
import { consoleContentSecurityPolicy } from '../src/transports/http/routes/console.ts';

// The operator console after a scripted day of payments, driven in headless Chromium: every figure
// on the page is read as an operator sees it and compared with the database and the chain.
const chromiumPath = '/usr/bin/chromium';
const skip = skipWithout('chromium', !existsSync(chromiumPath) && `${chromiumPath} does not exist`);
// VIXPAY_SCREENSHOTS=dir puts the screenshots there; otherwise in a temp folder (its path is logged).
const shots = process.env.VIXPAY_SCREENSHOTS ?? mkdtempSync(path.join(tmpdir(), 'vixpay-console-shots-'));

let p: PaymentTest;
let browser: Browser;
let baseUrl: string;
const stores: TestStore[] = [];
const users: TestUser[] = [];
const operator = { username: 'olivia', password: 'operator passphrase 1' };

before(async () => {
  if (skip) return;
  mkdirSync(shots, { recursive: true });
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' });
  baseUrl = await p.t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const { platform } = p.t;
  await platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
  for (const [tid, name] of [['CD-1001', 'Morning Bakery'], ['CD-2002', 'Night Books']] as const) {
    const store = await platform.payments.addStore({ tid, name });
    await platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '100' });
    stores.push(store);
  }
  for (let i = 0; i < 3; i++) users.push(await newUser(p, '200'));
  await addOperator({ operators: createOperatorRepository(platform.store.db), passwords: createPasswordHasher(), clock: platform.clock }, operator);

  // The scripted day: approvals at both stores, refused transfers, a partial refund, rewards issued,
  // claimed and cancelled.
  const [bakery, books] = stores as [TestStore, TestStore];
  const [ann, ben, cho] = users as [TestUser, TestUser, TestUser];
  const first = await approvedPayment(p, bakery, ann, '4500');
  await approvedPayment(p, bakery, ben, '12000');
  await approvedPayment(p, books, cho, '30000');
  await approvedPayment(p, books, ann, '1500');
  await approvedPayment(p, bakery, cho, '2250');
  assert.equal((await failedPayment(p, bakery, ben, '8000')).resCode, '04');
  assert.equal((await failedPayment(p, books, cho, '9000')).resCode, '04');
  await cancelPayment(p, bakery, ann, first.end, '1.5');
  const rewards = [await issueReward(p, bakery, '3000'), await issueReward(p, books, '5000'), await issueReward(p, books, '700')];
  await claimReward(p, ben, rewards[0]!);
  await claimReward(p, cho, rewards[1]!);
  await cancelReward(p, books, rewards[2]!);
});
after(async () => {
  await browser?.close();
  await p?.stop();
});

/** The text of a `data-figure` element on the page. */
const shown = (page: Page, name: string) => page.locator(`[data-figure="${name}"]`).first().innerText();

/** Until the page has drawn figures generated after `since` (the page refreshes every 5 s). */
async function untilRefreshedAfter(page: Page, since: string) {
  await page.waitForFunction((after) => ((globalThis as any).document.body.dataset.refreshedAt ?? '') > after, since, { timeout: 30_000 });
}

/** The JSON block after `<!-- console-example: NAME -->` in docs/console.md. */
function docExample(name: string): unknown {
  const doc = readFileSync('docs/console.md', 'utf8');
  const match = new RegExp(`<!-- console-example: ${name} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  assert.ok(match, `docs/console.md has the example ${name}`);
  return JSON.parse(match[1]!);
}

/** Arrays cut to their first element: the examples show one of each row, a live answer has as many as there are. */
function firstOfEach(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, 1).map(firstOfEach);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, firstOfEach(v)]));
  return value;
}

/** Sum of base-unit amounts in token units (18 decimals: VIXP). */
const units = (amounts: string[]) => formatUnits(amounts.reduce((a, b) => a + BigInt(b), 0n), 18);

async function login(page: Page) {
  await page.goto(`${baseUrl}/console`);
  assert.equal(new URL(page.url()).pathname, '/console/login', 'no session: the login page');
  await page.fill('input[name=username]', operator.username);
  await page.fill('input[name=password]', operator.password);
  await Promise.all([page.waitForURL(`${baseUrl}/console`), page.click('button[type=submit]')]);
}

test('the console after a scripted day: figures match the database and the chain, the charts move, search links receipts and transactions', { skip, timeout: 240_000 }, async (t) => {
  t.diagnostic(`screenshots in ${shots}`);
  const { db } = p.t.platform.store;
  // The browser's clock in another zone than TIME_ZONE (Asia/Seoul): the page shows the platform's zone.
  const page = await browser.newPage({ viewport: { width: 1400, height: 1800 }, timezoneId: 'America/Los_Angeles' });
  const problems: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  page.on('pageerror', (error) => problems.push(error.message));

  // A wrong password stays on the login page; the right one opens the console.
  await page.goto(`${baseUrl}/console/login`);
  await page.fill('input[name=username]', operator.username);
  await page.fill('input[name=password]', 'not the password');
  const refused = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/console/login') && r.request().method() === 'POST'), page.click('button[type=submit]')]);
  assert.equal(refused[0].status(), 401);
  assert.match(await page.locator('.error').innerText(), /Wrong username or password/);
  await page.screenshot({ path: path.join(shots, '1-login-refused.png') });
  problems.length = 0;
  await login(page);
  await untilRefreshedAfter(page, '');

  // Totals against the database.
  const payments = await db.selectFrom('payments').select(['status', 'token_amount', 'tid']).execute();
  const approved = payments.filter((row) => row.status === 'approved');
  assert.equal(await shown(page, 'payments.total'), String(payments.length));
  assert.equal(await shown(page, 'payments.approved'), String(approved.length));
  assert.equal(await shown(page, 'payments.failed'), String(payments.filter((row) => row.status === 'failed').length));
  assert.equal(approved.length, 5);
  assert.equal(await shown(page, 'volume'), `${units(approved.map((row) => row.token_amount!))} VIXP`);
  const refunds = await db.selectFrom('payment_cancellations').select('token_amount').where('status', '=', 'done').execute();
  assert.equal(await shown(page, 'refunds.count'), String(refunds.length));
  assert.equal(await shown(page, 'refunds.amount'), `${units(refunds.map((row) => row.token_amount))} VIXP`);
  const rewards = await db.selectFrom('rewards').select(['status', 'claim_transaction_id', 'token_amount']).execute();
  assert.equal(await shown(page, 'rewards.issued'), String(rewards.length));
  assert.equal(await shown(page, 'rewards.claimed'), String(rewards.filter((row) => row.claim_transaction_id).length));
  assert.equal(await shown(page, 'rewards.canceled'), String(rewards.filter((row) => row.status === 'canceled').length));
  assert.equal(await shown(page, 'rewards.claimedAmount'), `${units(rewards.filter((row) => row.claim_transaction_id).map((row) => row.token_amount))} VIXP`);
  // The cards are today's in TIME_ZONE, dated, yesterday beside them: the scripted day is all today.
  const todayInSeoul = localDateTime(p.t.platform.clock(), 'Asia/Seoul').slice(0, 10);
  assert.equal(await shown(page, 'days.today.date'), todayInSeoul);
  assert.equal(await shown(page, 'days.yesterday.date'), localDateTime(Date.parse(`${todayInSeoul}T00:00:00+09:00`) - 1, 'Asia/Seoul').slice(0, 10));
  assert.equal(await shown(page, 'days.today.payments.total'), String(payments.length));
  assert.equal(await shown(page, 'days.today.payments.approved'), String(approved.length));
  assert.equal(await shown(page, 'days.today.volume'), `${units(approved.map((row) => row.token_amount!))} VIXP`);
  assert.equal(await shown(page, 'days.today.refunds.count'), String(refunds.length));
  assert.equal(await shown(page, 'days.today.rewards.issued'), String(rewards.length));
  assert.equal(await shown(page, 'days.yesterday.payments.total'), '0');
  assert.equal(await shown(page, 'days.yesterday.volume'), '0');
  const backlog = await db.selectFrom('chain_txs').select('id').where('status', '=', 'signed').execute();
  assert.equal(await shown(page, 'journal.total'), String(backlog.length));

  // res_code table: 00 for the approvals, 04 for the refused transfers.
  assert.equal(await page.locator('#res-codes tr[data-res-code="00"] td').nth(2).innerText(), String(approved.length));
  assert.equal(await page.locator('#res-codes tr[data-res-code="04"] td').nth(2).innerText(), '2');

  // Store balances as the chain has them, and each store's approvals.
  for (const store of stores) {
    const row = page.locator(`#stores tr[data-tid="${store.tid}"] td`);
    const onChain = (await p.t.platform.wallet.getBalance('ethereum', { address: store.settlementAddress })).balance;
    assert.equal(await row.nth(4).innerText(), `${onChain} VIXP`);
    assert.equal(await row.nth(2).innerText(), String(approved.filter((r) => r.tid === store.tid).length));
  }
  // Relayer lanes: every lane on every network, those that never sent a transaction too, with its
  // journal counts and its gas on chain rounded for a person.
  const laneAddresses = p.t.platform.relayer.lanes;
  assert.ok(laneAddresses.length > 1);
  const used = await db.selectFrom('chain_txs').select(['network', 'relayer']).distinct().execute();
  assert.ok(used.length < networkNames.length * laneAddresses.length, 'some lane has sent nothing yet');
  assert.equal(await page.locator('#relayers tr').count(), networkNames.length * laneAddresses.length);
  for (const network of networkNames) {
    for (const [lane, address] of laneAddresses.entries()) {
      const row = page.locator(`#relayers tr[data-relayer="${network}:${address}"] td`);
      assert.equal(await row.nth(1).innerText(), String(lane));
      const journaled = await db.selectFrom('chain_txs').select('status').where('network', '=', network).where('relayer', '=', address).execute();
      assert.equal(await row.nth(3).innerText(), String(journaled.filter((tx) => tx.status === 'signed').length));
      assert.equal(await row.nth(4).innerText(), String(journaled.length));
      const gas = Number(formatEther(await p.t.platform.chains[network].client.getBalance({ address })));
      // The relayer may spend gas between the page's read and ours (the test's own payments are done).
      const symbol = network.includes('bnb') ? 'BNB' : 'ETH';
      assert.equal(await row.nth(5).innerText(), `${gas.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${symbol}`);
    }
  }

  // Settlement costs today, network by network, against what the chain's receipts add up to:
  // settlement fees the headline, deploys and mints apart, every fee in the network's coin with wei on hover.
  for (const network of networkNames) {
    const mined = await db.selectFrom('chain_txs').select(['tx_hash', 'kind']).where('network', '=', network).where('status', '!=', 'signed').execute();
    let gas = 0n;
    let fees = 0n;
    let settlementFees = 0n;
    let settlementGas = 0n;
    let settlements = 0;
    let transfers = 0;
    for (const { tx_hash: hash, kind } of mined) {
      const receipt = await p.t.platform.chains[network].client.getTransactionReceipt({ hash: hash as `0x${string}` });
      gas += receipt.gasUsed;
      fees += receipt.gasUsed * receipt.effectiveGasPrice;
      if (kind === 'settlement') settlementFees += receipt.gasUsed * receipt.effectiveGasPrice;
      const executed = (await db.selectFrom('authorizations').select('nonce').where('network', '=', network).where('tx_hash', '=', hash).where('status', '=', 'used').execute()).length;
      if (executed > 0) {
        settlements++;
        settlementGas += receipt.gasUsed;
        transfers += executed;
      }
    }
    const row = page.locator(`#settlement-costs tr[data-network="${network}"] td`);
    const currency = network.includes('bnb') ? 'BNB' : 'ETH';
    const feeTitle = (wei: bigint) => `${formatEther(wei)} ${currency} (${wei} wei): execution ${formatEther(wei)} (${wei} wei) + L1 data 0 (0 wei) + operator 0 (0 wei)`;
    assert.equal(await row.nth(1).getAttribute('title'), feeTitle(settlementFees), `${network} settlement fees, in ${currency} with wei beside`);
    assert.match(await row.nth(1).innerText(), new RegExp(`^[\\d.,]+ ${currency}$`));
    assert.equal(await row.nth(2).innerText(), `0.00 ${currency}`, `${network}: no L1 data fee on anvil`);
    const perTransfer = transfers ? (settlementFees * 2n + BigInt(transfers)) / (2n * BigInt(transfers)) : undefined;
    assert.equal(await row.nth(3).innerText(), perTransfer === undefined ? '–' : roundedForPerson(formatEther(perTransfer), currency), `${network} fee per transfer`);
    assert.equal(await row.nth(4).innerText(), String(settlements), `${network} settlement transactions`);
    assert.equal(await row.nth(5).innerText(), String(transfers), `${network} transfers`);
    assert.equal(await row.nth(6).innerText(), transfers ? Math.round(Number(settlementGas) / transfers).toLocaleString('en-US') : '–', `${network} gas per transfer`);
    assert.equal(await row.nth(7).innerText(), settlements ? String(Number((transfers / settlements).toFixed(2))) : '–');
    // Deploys and mints apart from the settlements, each kind with its fees.
    const others = mined.filter((m) => m.kind !== 'settlement');
    const otherKinds = [...new Set(others.map((o) => o.kind))].map((kind) => `${others.filter((o) => o.kind === kind).length} ${kind}`);
    const shownOthers = (await row.nth(8).innerText()).split(', ').map((entry) => entry.replace(new RegExp(` [\\d.,]+ ${currency}$`), ''));
    assert.deepEqual(shownOthers.sort(), (otherKinds.length ? otherKinds : ['–']).sort(), `${network} other transactions`);
    assert.equal(await row.nth(9).innerText(), String(mined.length), `${network} transactions`);
    assert.equal(await row.nth(10).innerText(), gas.toLocaleString('en-US'), `${network} gas`);
    assert.equal(await row.nth(11).getAttribute('title'), feeTitle(fees), `${network} all fees`);
    assert.equal(await row.nth(5).getAttribute('title'), `${transfers} POS · 0 x402`);
    if (network === 'ethereum') {
      assert.ok(transfers >= 8, 'the day\'s approvals, refund and claims settled on ethereum');
      assert.ok(gas > 0n && fees > settlementFees && settlementFees > 0n, 'settlement fees are a part of the fees');
    }
  }

  // The per-minute chart holds every payment of the window (the whole day fits in the last hour).
  const charted = () => page.evaluate(() => {
    const chart = (globalThis as any).Chart.getChart('per-minute');
    return chart.data.datasets.map((set: any) => set.data.reduce((a: number, b: number) => a + b, 0)) as number[];
  });
  assert.deepEqual(await charted(), [approved.length, 2, 0]);
  await page.screenshot({ path: path.join(shots, '2-console-after-day.png'), fullPage: true });

  // The charts move: one more payment appears at the next refresh.
  const [bakery] = stores as [TestStore];
  const extra = await approvedPayment(p, bakery, users[2]!, '1000');
  // A refresh generated after the approval (one that began during it may show it pending).
  await untilRefreshedAfter(page, new Date(p.t.platform.clock()).toISOString());
  assert.deepEqual(await charted(), [approved.length + 1, 2, 0]);
  assert.equal(await shown(page, 'payments.approved'), String(approved.length + 1));
  await page.screenshot({ path: path.join(shots, '3-console-after-one-more.png'), fullPage: true });

  // Search by tran_no: the row links its receipt and its on-chain transaction.
  await page.fill('#search input[name=q]', extra.tranNo);
  await page.click('#search button');
  const found = page.locator(`#search-results tr[data-reference="${extra.tranNo}"]`);
  await found.waitFor({ timeout: 10_000 });
  // Its time in the platform's zone, named in the header and the column, whatever the browser's zone.
  assert.equal(await shown(page, 'timeZone'), 'Asia/Seoul');
  const createdAt = Number((await db.selectFrom('payments').select('created_at').where('tran_no', '=', extra.tranNo).executeTakeFirstOrThrow()).created_at);
  assert.equal(await found.locator('td').nth(0).innerText(), localDateTime(createdAt, 'Asia/Seoul'));
  // The links open pages; the JSON behind each is one click away on it.
  const receiptPage = await found.locator('td').nth(7).locator('a').getAttribute('href');
  const txPage = await found.locator('td').nth(8).locator('a').getAttribute('href');
  const receiptHref = new URL(receiptPage!, baseUrl).searchParams.get('src');
  const txHref = new URL(txPage!, baseUrl).searchParams.get('src');
  assert.match(receiptHref!, /^\/console\/api\/receipts\/payments\//);
  const view = await browser.newPage({ timezoneId: 'America/Los_Angeles' });
  await view.context().addCookies(await page.context().cookies());
  await view.goto(`${baseUrl}${receiptPage}`);
  await view.waitForSelector('body[data-shown="true"]', { timeout: 10_000 });
  assert.equal(await view.locator('#title').innerText(), `Receipt of ${bakery.tid} ${extra.tranNo}`);
  assert.equal(await view.locator('#verdict strong').innerText(), 'Valid receipt');
  assert.equal(await view.locator('#raw').getAttribute('href'), receiptHref);
  assert.ok(await view.locator('dd', { hasText: extra.tranNo }).count() > 0, 'the receipt page shows its tran_no');
  await view.screenshot({ path: path.join(shots, '5-receipt-page.png'), fullPage: true });
  await view.goto(`${baseUrl}/console/view?tid=${bakery.tid}&date=${todayInSeoul}`);
  await view.waitForSelector('body[data-shown="true"]', { timeout: 10_000 });
  assert.equal(await view.locator('#title').innerText(), `Statement of ${bakery.tid}, ${todayInSeoul}`);
  assert.match(await view.locator('#subtitle').innerText(), new RegExp(`^${todayInSeoul} in Asia/Seoul \\(UTC\\+09:00\\), 00:00 to 24:00`));
  const statementJson = await (await page.request.get(`${baseUrl}/console/api/statement?tid=${bakery.tid}&date=${todayInSeoul}&format=json`)).json();
  assert.equal(await view.locator('section[data-part="lines"] tbody tr').count(), statementJson.lines.length);
  assert.ok(statementJson.lines.length > 0);
  await view.screenshot({ path: path.join(shots, '6-statement-page.png'), fullPage: true });
  await view.close();
  const receipt = await (await page.request.get(`${baseUrl}${receiptHref}`)).json();
  assert.equal(receipt.receipts[0].credentialSubject.tranNo, extra.tranNo);
  assert.equal(receipt.receipts[0].credentialSubject.transactionId, extra.end.transfer_transaction_id);
  const tx = await (await page.request.get(`${baseUrl}${txHref}`)).json();
  assert.equal(tx.status, 'success');
  assert.deepEqual(tx.transfers.map((x: any) => [x.from, x.to, x.amount]), [[users[2]!.address, bakery.settlementAddress, '1']]);
  // Search by transaction id and by user: as many rows as the database has.
  for (const [query, expected] of [
    [extra.end.transfer_transaction_id!, 1],
    [users[0]!.address, (await db.selectFrom('payments').select('id').where('user_address', '=', users[0]!.address).execute()).length],
    [users[1]!.userId, 2 + 1], // ben: an approval and a refused payment, and a claimed reward
  ] as const) {
    await page.fill('#search input[name=q]', query);
    await page.click('#search button');
    await page.waitForFunction((q) => (globalThis as any).document.getElementById('search-status')?.textContent?.includes(q), query, { timeout: 10_000 });
    assert.equal(await page.locator('#search-results tr').count(), expected, `search ${query}`);
  }
  await page.screenshot({ path: path.join(shots, '4-console-search.png'), fullPage: true });
  assert.deepEqual(problems, [], 'no script error and no CSP violation on the page');

  // Logging out ends the session: the API refuses the old cookie.
  const cookie = (await page.context().cookies()).find((c) => c.name === 'vixpay_console')!;
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  await Promise.all([page.waitForURL(`${baseUrl}/console/login`), page.click('header form button')]);
  const stale = await fetch(`${baseUrl}/console/api/figures`, { headers: { cookie: `vixpay_console=${cookie.value}` } });
  assert.equal(stale.status, 401);
  await page.close();
});

/** Screenshots docs/console.md shows: written there by this test with VIXPAY_UPDATE_SCREENSHOTS=1, else to the temp folder. */
const docScreenshots = ['console-today.png', 'console-phone.png'];
const docShot = (name: string) => (process.env.VIXPAY_UPDATE_SCREENSHOTS === '1' ? path.join('docs', 'screenshots', name) : path.join(shots, name));

test('on a phone (390 px): nothing wider than the screen, the charts within it; docs/console.md shows both screenshots', { skip, timeout: 120_000 }, async () => {
  for (const name of docScreenshots) {
    assert.match(readFileSync('docs/console.md', 'utf8'), new RegExp(`\\(screenshots/${name.replace('.', '\\.')}\\)`), `docs/console.md shows ${name}`);
  }
  mkdirSync(path.dirname(docShot('x')), { recursive: true });
  const wide = await browser.newPage({ viewport: { width: 1280, height: 1000 }, timezoneId: 'America/Los_Angeles' });
  await login(wide);
  await untilRefreshedAfter(wide, '');
  await wide.screenshot({ path: docShot('console-today.png') });
  await wide.close();
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  await login(phone);
  await untilRefreshedAfter(phone, '');
  const widths = await phone.evaluate(() => {
    const doc = (globalThis as any).document;
    return {
      page: doc.documentElement.scrollWidth as number,
      charts: [...doc.querySelectorAll('canvas')].map((c: any) => c.getBoundingClientRect().right as number),
      cards: [...doc.querySelectorAll('.card')].map((c: any) => c.getBoundingClientRect().right as number),
    };
  });
  assert.ok(widths.page <= 390, `the page is ${widths.page} px wide`);
  for (const right of [...widths.charts, ...widths.cards]) assert.ok(right <= 390, `a chart or card ends at ${right} px`);
  await phone.screenshot({ path: docShot('console-phone.png') });
  await phone.close();
});

test('the console is served with a strict CSP, its chart library from our origin, and refuses anyone but an operator', { skip }, async () => {
  const page = await fetch(`${baseUrl}/console/login`);
  assert.equal(page.headers.get('content-security-policy'), consoleContentSecurityPolicy);
  assert.match(consoleContentSecurityPolicy, /script-src 'self';/);
  assert.doesNotMatch(consoleContentSecurityPolicy, /unsafe-inline|unsafe-eval|https?:/);
  const html = await (await fetch(`${baseUrl}/console/login`)).text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/, 'no inline script');
  const chart = await fetch(`${baseUrl}/console/assets/chart.umd.min.js`);
  assert.equal(chart.status, 200);
  assert.match(chart.headers.get('content-type') ?? '', /javascript/);
  assert.match(await chart.text(), /Chart\.js v4/);

  // No session: the page sends to the login, the API answers 401; a user's JWT is not a session.
  const console = await fetch(`${baseUrl}/console`, { redirect: 'manual' });
  assert.equal(console.status, 303);
  assert.equal(console.headers.get('location'), '/console/login');
  assert.equal((await fetch(`${baseUrl}/console/api/figures`)).status, 401);
  const asUser = await fetch(`${baseUrl}/console/api/figures`, { headers: { authorization: `Bearer ${users[0]!.token}`, cookie: `vixpay_console=${users[0]!.token}` } });
  assert.equal(asUser.status, 401);
  // A user's password does not log in to the console.
  const userLogin = await fetch(`${baseUrl}/console/login`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: users[0]!.userId, password: 'correct horse battery' }),
  });
  assert.equal(userLogin.status, 401);
  // A login form posted from another site is refused.
  const crossSite = await fetch(`${baseUrl}/console/login`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    body: new URLSearchParams(operator),
  });
  assert.equal(crossSite.status, 403);
});

test('vixpay operator add makes an operator who can log in; a second with the same name is refused', { skip }, async () => {
  const env = {
    ...process.env, DATA_DIR: p.t.dataDir, LOG_LEVEL: 'silent', ...(p.t.config.databaseUrl && { DATABASE_URL: p.t.config.databaseUrl }),
  };
  const vixpay = (...args: string[]) => promisify(execFile)(process.execPath, ['bin/vixpay.js', ...args, '--json'], { env });
  const added = JSON.parse((await vixpay('operator', 'add', '--username', 'carl', '--password', 'carl operator passphrase')).stdout);
  assert.deepEqual(added, { username: 'carl' });
  await assert.rejects(vixpay('operator', 'add', '--username', 'carl', '--password', 'another passphrase 2'), (error: any) => {
    assert.equal(error.code, 1);
    assert.equal(JSON.parse(error.stdout).error.code, 'auth.user_exists');
    return true;
  });
  await assert.rejects(vixpay('operator', 'add', '--username', 'dora', '--password', 'short'), (error: any) => JSON.parse(error.stdout).error.code === 'request.invalid');
  const login = await fetch(`${baseUrl}/console/login`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: 'carl', password: 'carl operator passphrase' }),
  });
  assert.equal(login.status, 303);
  assert.equal(login.headers.get('location'), '/console');
  const cookie = login.headers.get('set-cookie') ?? '';
  assert.match(cookie, /^vixpay_console=[\w-]{43}; Max-Age=28800; Path=\/console; HttpOnly; SameSite=Strict$/);
  const figures = await fetch(`${baseUrl}/console/api/figures`, { headers: { cookie: cookie.split(';')[0]! } });
  assert.equal(figures.status, 200);
  assert.equal(figures.headers.get('content-security-policy'), consoleContentSecurityPolicy);

  // docs/console.md's examples are what the API answers.
  const session = { headers: { cookie: cookie.split(';')[0]! } };
  const fixed = new Set(['windowMinutes', 'network', 'token', 'kind']);
  const documented = await (await fetch(`${baseUrl}/console/api/figures?minutes=3`, session)).json() as any;
  assert.equal(documented.perMinute.length, 3);
  assertSameShape(firstOfEach(docExample('figures')), firstOfEach(documented), fixed);
  const { tran_no: tranNo } = await p.t.platform.store.db.selectFrom('payments').select('tran_no').where('status', '=', 'approved').executeTakeFirstOrThrow();
  const search = await (await fetch(`${baseUrl}/console/api/search?q=${tranNo}`, session)).json() as any;
  assert.equal(search.rows.length, 1);
  assertSameShape(firstOfEach(docExample('search')), search, fixed);
});
