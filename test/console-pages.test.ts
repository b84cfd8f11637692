import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { skipWithout } from './support/parts.ts';
import { newUser, startPaymentTest, type PaymentTest, type TestUser } from './support/payments.ts';
import { approvedPayment, cancelPayment, claimReward, issueReward, type TestStore } from './support/scripted-payments.ts';
import { addOperator } from '../src/console/operators.ts';
import { localDateTime } from '../src/statements/statement-day.ts';
import { createOperatorRepository } from '../src/store/operator-repository.ts';
import { createPasswordHasher } from '../src/identity/password-hasher.ts';

// The statement, the operator's day and a receipt as a person reads them in headless Chromium at
// 1280 px and on a phone (390 px): the verdict visible first, nothing wider than the window, every
// amount whole in its cell. The screenshots are docs/console.md's (VIXPAY_UPDATE_SCREENSHOTS=1 writes them there).
const chromiumPath = '/usr/bin/chromium';
const skip = skipWithout('chromium', !existsSync(chromiumPath) && `${chromiumPath} does not exist`);
const shots = process.env.VIXPAY_UPDATE_SCREENSHOTS === '1' ? path.join('docs', 'screenshots') : mkdtempSync(path.join(tmpdir(), 'vixpay-pages-'));
const operator = { username: 'pia', password: 'operator passphrase 2' };
const viewports = [
  { name: '1280', options: { viewport: { width: 1280, height: 900 } } },
  { name: '390', options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } },
] as const;

let p: PaymentTest;
let browser: Browser;
let baseUrl: string;
let store: TestStore;
// A store the operator minted to by hand: a transfer no record explains, so its statement is not reconciled.
let minted: TestStore;
let today: string;
let tranNo: string;
let user: TestUser;

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
  store = await platform.payments.addStore({ tid: 'PG-1001', name: 'Corner Cafe' });
  minted = await platform.payments.addStore({ tid: 'PG-2002', name: 'Harbour Books' });
  await platform.wallet.mint('ethereum', { to: minted.settlementAddress, amount: '1000' });
  user = await newUser(p, '200');
  await addOperator({ operators: createOperatorRepository(platform.store.db), passwords: createPasswordHasher(), clock: platform.clock }, operator);
  const first = await approvedPayment(p, store, user, '4500');
  tranNo = first.tranNo;
  await approvedPayment(p, store, user, '12000');
  await cancelPayment(p, store, user, first.end, '1.5');
  await claimReward(p, user, await issueReward(p, store, '3000'));
  today = localDateTime(platform.clock(), 'Asia/Seoul').slice(0, 10);
});
after(async () => {
  await browser?.close();
  await p?.stop();
});

async function login(page: Page) {
  await page.goto(`${baseUrl}/console/login`);
  await page.fill('input[name=username]', operator.username);
  await page.fill('input[name=password]', operator.password);
  await Promise.all([page.waitForURL(`${baseUrl}/console`), page.click('button[type=submit]')]);
}

/** What a person would find wrong: the page wider than the window, an amount cut or wrapped, a verdict out of sight. */
async function assertReadable(page: Page, what: string) {
  const seen = await page.evaluate(() => {
    const doc = (globalThis as any).document;
    const width = doc.documentElement.clientWidth as number;
    const cut = [...doc.querySelectorAll('.amount')].flatMap((amount: any) => {
      const cell = amount.closest('td, dd, .figure') ?? amount.parentElement;
      const box = amount.getBoundingClientRect();
      const whole = amount.textContent === amount.dataset.amount;
      const clipped = cell.scrollWidth > cell.clientWidth || amount.scrollWidth > amount.clientWidth + 1 || box.right > width + 0.5 || box.left < 0;
      return whole && !clipped ? [] : [`${amount.textContent} (${Math.round(box.left)}..${Math.round(box.right)} of ${width})`];
    });
    const verdict = doc.getElementById('verdict')?.getBoundingClientRect();
    return {
      scrollWidth: doc.documentElement.scrollWidth as number, width, cut, amounts: doc.querySelectorAll('.amount').length as number,
      // On the first screen, wherever the page is scrolled to now.
      verdictInView: verdict ? verdict.top + (globalThis as any).scrollY >= 0 && verdict.bottom + (globalThis as any).scrollY <= (globalThis as any).innerHeight && verdict.right <= width : false,
    };
  });
  assert.ok(seen.scrollWidth <= seen.width, `${what}: the page is ${seen.scrollWidth} px wide in a ${seen.width} px window`);
  assert.deepEqual(seen.cut, [], `${what}: amounts cut or not whole`);
  assert.ok(seen.amounts > 0, `${what}: amounts shown`);
  assert.ok(seen.verdictInView, `${what}: the verdict is on the first screen`);
}

/** The text lines a node's text takes on screen. */
const textLines = (page: Page, selector: string) => page.locator(selector).first().evaluate((node) => {
  const range = (globalThis as any).document.createRange();
  range.selectNodeContents(node);
  return new Set([...range.getClientRects()].map((r: any) => Math.round(r.top))).size;
});

async function open(page: Page, url: string) {
  await page.goto(`${baseUrl}${url}`);
  await page.waitForSelector('body[data-shown="true"]', { timeout: 20_000 });
}

for (const { name, options } of viewports) {
  test(`at ${name} px: the statement, the operator's day and a receipt read at a glance, nothing clipped`, { skip, timeout: 180_000 }, async () => {
    const page = await browser.newPage({ ...options, timezoneId: 'America/Los_Angeles' });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => { if (message.type() === 'error') problems.push(`${message.text()} ${message.location().url}`); });
    await login(page);
    // The dashboard: the day inputs start at today in TIME_ZONE (not the browser's zone); a store's balance whole.
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.refreshedAt);
    assert.deepEqual(await page.locator('form.download input[type=date]').evaluateAll((inputs) => inputs.map((i: any) => i.value)), [today, today]);
    const balance = page.locator(`#stores tr[data-tid="${minted.tid}"] td`).nth(4);
    assert.equal(await balance.innerText(), '1000 VIXP');
    const fits = await balance.evaluate((td: any) => ({ fits: td.scrollWidth <= td.clientWidth, right: td.getBoundingClientRect().right, width: td.ownerDocument.documentElement.clientWidth }));
    assert.ok(fits.fits && fits.right <= fits.width, `the store's balance is whole on screen: ${JSON.stringify(fits)}`);

    // A statement with a discrepancy says so first, in words.
    await open(page, `/console/view?tid=${minted.tid}&date=${today}`);
    assert.equal(await page.locator('#verdict strong').innerText(), 'Not reconciled: 1 discrepancy');
    assert.match(await page.locator('#verdict li').innerText(), /^1000 VIXP minted into the account, that no record of the platform explains \(transaction 0x[0-9a-f]{4}…[0-9a-f]{4}, log \d+\)\.$/);
    assert.equal(await page.locator('section[data-part="lines"] td[data-label="Matched"]').innerText(), '✗ no record');
    assert.equal(await page.locator('section[data-part="lines"] td[data-label="Kind"]').innerText(), 'Unexplained');
    await assertReadable(page, `a statement with a discrepancy at ${name}`);
    await page.screenshot({ path: path.join(shots, `statement-discrepancy-${name}.png`), fullPage: true });

    // The statement: the verdict first, the day's lines with time, kind, amount, counterparty and transaction.
    const statement = await (await page.request.get(`${baseUrl}/console/api/statement?tid=${store.tid}&date=${today}&format=json`)).json();
    await open(page, `/console/view?tid=${store.tid}&date=${today}`);
    assert.equal(statement.reconciled, true);
    assert.equal(await page.locator('#verdict strong').innerText(), 'Reconciled');
    assert.match(await page.locator('#verdict p').innerText(), /^Every line matches its transfer on chain and the balances add up\./);
    assert.equal(await page.locator('#subtitle').innerText(), `${today} in Asia/Seoul (UTC+09:00), 00:00 to 24:00, the day is still running · ethereum`);
    const lines = page.locator('section[data-part="lines"] tbody tr');
    assert.equal(await lines.count(), statement.lines.length);
    assert.equal(statement.lines.length, 4, 'two payments, a refund and a reward');
    for (const [i, line] of (statement.lines as any[]).entries()) {
      const row = lines.nth(i);
      assert.equal(await row.locator('td[data-label="Amount"]').innerText(), `${line.amount} ${line.token}`);
      assert.equal(await row.locator('td[data-label="Time"]').innerText(), line.localTime.slice(11));
      assert.equal(await row.locator('td[data-label="Counterparty"] span').getAttribute('title'), line.counterparty);
      assert.equal(new URL(await row.locator('td[data-label="Transaction"] a').getAttribute('href') ?? '', baseUrl).searchParams.get('src'), `/console/api/transactions/ethereum/${line.txHash}`);
      assert.equal(await row.locator('td[data-label="Matched"]').innerText(), '✓ on chain');
      assert.equal(await textLines(page, `section[data-part="lines"] tbody tr:nth-child(${i + 1}) td[data-label="Details"] summary`), 1, 'the reference on one line');
    }
    // The rest of a line a click away: its reference and approval number.
    assert.equal(await lines.first().locator('dl').isVisible(), false);
    await lines.first().locator('summary').click();
    assert.match(await lines.first().locator('dl').innerText(), new RegExp(`Approval no\\.\\s+${statement.lines[0].approvalNo}`));
    const matched = await lines.first().locator('td[data-label="Matched"]').evaluate((td: any) => td.getBoundingClientRect().right <= td.ownerDocument.documentElement.clientWidth);
    assert.ok(matched, 'the Matched column is on screen');
    await assertReadable(page, `statement at ${name}`);
    await page.screenshot({ path: path.join(shots, `statement-${name}.png`), fullPage: true });

    // The operator's day: its totals as the verdict, the fees per network.
    const day = await (await page.request.get(`${baseUrl}/console/api/operator-day?date=${today}&format=json`)).json();
    await open(page, `/console/view?date=${today}`);
    const mined = day.transactions.length;
    const networks = day.networks.filter((n: any) => n.transactions > 0);
    assert.ok(mined > 0);
    assert.match(await page.locator('#verdict strong').innerText(), new RegExp(`^${mined} transactions mined on ${networks.length} networks?$`));
    for (const [i, n] of networks.entries()) {
      const row = page.locator('section[data-part="fees"] tbody tr').nth(i);
      assert.equal(await row.locator('td[data-label="Network"]').innerText(), n.network);
      assert.equal(await row.locator('td[data-label="Fees paid"]').innerText(), `${n.feesPaid} ${n.currency}`);
    }
    // By part, for the day, per transfer and per settlement transaction: each figure is the API's, to the wei on hover.
    const settled = day.networks.filter((n: any) => n.settlementTransactions > 0);
    const split = page.locator('section[data-part="fee-split"] tbody tr');
    assert.equal(await split.count(), settled.length * 3);
    for (const [i, n] of settled.entries()) {
      for (const [j, key] of ['settlementFees', 'settlementFeePerTransfer', 'settlementFeePerTransaction'].entries()) {
        const total = split.nth(i * 3 + j).locator('td[data-label="Total"] .amount');
        assert.equal(await total.innerText(), n[key].total.rounded);
        assert.equal(await total.getAttribute('title'), `${n[key].total.amount} ${n.currency} (${n[key].total.wei} wei)`);
      }
    }
    assert.equal(await page.locator('section[data-part="transactions"] tbody tr').count(), mined);
    await assertReadable(page, `operator's day at ${name}`);
    await page.screenshot({ path: path.join(shots, `operator-day-${name}.png`), fullPage: true });

    // A payment's receipts (its approval and its refund): valid, what each proves, the credential a click away.
    const src = `/console/api/receipts/payments/${store.tid}/${tranNo}`;
    const receipts = await (await page.request.get(`${baseUrl}${src}`)).json();
    await open(page, `/console/view?src=${encodeURIComponent(src)}`);
    assert.equal(await page.locator('section.receipt').count(), 2);
    const payment = receipts.receipts[0].credentialSubject;
    assert.equal(await page.locator('section.receipt .verdict.ok strong').first().innerText(), 'Valid receipt');
    assert.match(await page.locator('section.receipt .verdict p').first().innerText(),
      new RegExp(`^It proves: ${payment.from.slice(0, 6)}…${payment.from.slice(-4)} paid ${payment.amount} VIXP to store ${store.tid} \\(tran_no ${tranNo}, approval ${payment.approvalNo}\\)\\.`));
    assert.equal(await page.locator('section.receipt ul.checks li.yes').count(), 10, 'five checks passed for each receipt');
    assert.equal(await page.locator('section.receipt details.more summary').first().innerText(), 'How it was checked: 5 of 5 checks passed');
    await page.locator('section.receipt details.more summary', { hasText: 'The credential' }).first().click();
    const jwt = receipts.receipts[0].proof.jwt as string;
    assert.equal(await page.locator('pre.jwt').first().innerText(), jwt);
    const jwtLines = await textLines(page, 'pre.jwt');
    assert.ok(jwtLines <= Math.ceil(jwt.length / 30), `the credential wraps at 30 characters a line or more (${jwt.length} characters on ${jwtLines} lines)`);
    await assertReadable(page, `receipt at ${name}`);
    await page.screenshot({ path: path.join(shots, `receipt-${name}.png`), fullPage: true });
    assert.deepEqual(problems, [], 'no script error and no CSP violation');
    assert.match(readFileSync('docs/console.md', 'utf8'), new RegExp(`\\(screenshots/receipt-${name}\\.png\\)`), 'docs/console.md shows the screenshots');
    await page.close();
  });
}

test('a receipt that is not ours is not valid: the verify API says which check failed', { skip }, async () => {
  const page = await browser.newPage();
  await login(page);
  const forged = await page.request.post(`${baseUrl}/console/api/receipts/verify`, { data: { proof: { jwt: 'eyJhbGciOiJFUzI1NksifQ.e30.c2ln' } } });
  assert.equal(forged.status(), 200);
  const answer = await forged.json();
  assert.equal(answer.verified, false);
  assert.equal(answer.checks.at(-1).check, 'signature');
  assert.equal((await page.request.post(`${baseUrl}/console/api/receipts/verify`, { data: { receipt: 'none' } })).status(), 400);
  await page.close();
  const stranger = await fetch(`${baseUrl}/console/api/receipts/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(stranger.status, 401);
});
