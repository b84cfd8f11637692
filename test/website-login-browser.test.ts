import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { skipWithout } from './support/parts.ts';
import { addUser } from '../src/identity/add-user.ts';
import { approveWebsiteLogin } from '../src/cli/approve-login.ts';

// The demo shop's website login, driven in a real headless Chromium: the page shows the QR code,
// the app side answers with a VP over the public APIs, and the page greets the user.
const chromiumPath = '/usr/bin/chromium';
const skip = skipWithout('chromium', !existsSync(chromiumPath) && `${chromiumPath} does not exist`);

let t: TestPlatform;
let browser: Browser;
let baseUrl: string;
// VIXPAY_SCREENSHOTS=dir keeps the screenshots to look at.
const keepShots = process.env.VIXPAY_SCREENSHOTS;
const shots = keepShots ?? mkdtempSync(path.join(tmpdir(), 'vixpay-shots-'));

before(async () => {
  if (skip) return;
  t = await startTestPlatform();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
after(async () => {
  await browser?.close();
  await t?.stop();
  if (!keepShots) rmSync(shots, { recursive: true, force: true });
});

test('a visitor logs in to the demo shop through the app, and is greeted by name', { skip }, async () => {
  const user = await addUser(
    { users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() },
    { id: 'dana', password: 'dana password', name: 'Dana' },
  );
  const page = await browser.newPage();
  await page.goto(`${baseUrl}/demo/login`);
  await page.waitForSelector('#qr svg');
  const requestId = await page.getAttribute('body', 'data-request-id');
  assert.ok(requestId && requestId.length >= 40, 'the page shows an unguessable requestId');
  assert.equal(await page.textContent('#request-id'), requestId);
  await page.screenshot({ path: path.join(shots, 'waiting.png') });

  const approved = await approveWebsiteLogin({
    server: baseUrl, requestId, id: 'dana', password: 'dana password', address: user.address, secretKey: user.secretKey,
  });
  assert.equal(approved.userId, 'dana');

  await page.waitForSelector('#greeting:not([hidden])', { timeout: 15_000 });
  assert.equal(await page.textContent('#greeting'), 'Welcome, Dana!');
  assert.equal(await page.getAttribute('body', 'data-logged-in'), 'dana');
  const shot = path.join(shots, 'greeted.png');
  await page.screenshot({ path: shot });
  assert.ok(statSync(shot).size > 5_000, 'a real screenshot');

  // The site reads the result once; a second read is the contract's 400.
  const again = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user-result-by-app', payload: { requestId } });
  assert.equal(again.statusCode, 400);
  assert.deepEqual(again.json(), { error: { code: '400', message: 'Never requested or timeout' } });
});
