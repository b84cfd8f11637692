// A console record as a page: a receipt, a transaction, a store's statement or the operator's day,
// read from the console's JSON API (the same document is one click away: the "JSON" link). Each kind
// has its page (view-*.js): the verdict first, the figures an operator reads, the rest a click away.
/* global document, window, URLSearchParams */
import { element, facts } from './view-kit.js';
import { daySubtitle, statementPage, statementTitle } from './view-statement.js';
import { operatorDayPage, operatorDayTitle } from './view-day.js';
import { receiptPage, receiptSubtitle, receiptTitle, transactionPage } from './view-receipt.js';

/** The API document this page shows: `?src=/console/api/…`, or the Statements panel's form (tid, date). */
function sourceOf(params) {
  const src = params.get('src');
  if (src) return src.startsWith('/console/api/') ? src : undefined;
  const date = params.get('date');
  if (!date) return undefined;
  const tid = params.get('tid');
  return tid
    ? `/console/api/statement?tid=${encodeURIComponent(tid)}&date=${encodeURIComponent(date)}&format=json`
    : `/console/api/operator-day?date=${encodeURIComponent(date)}&format=json`;
}

/** The page for a document: its title, the line under it and its parts. */
function pageOf(src, doc) {
  if (src.includes('/receipts/')) return { kind: 'receipt', title: receiptTitle(doc), subtitle: receiptSubtitle(doc), parts: () => receiptPage(doc) };
  if (src.includes('/transactions/')) return { kind: 'transaction', title: `Transaction on ${doc.network}`, parts: () => transactionPage(doc) };
  if (src.includes('/statement?')) return { kind: 'statement', title: statementTitle(doc), subtitle: daySubtitle(doc), parts: () => statementPage(doc) };
  if (src.includes('/operator-day?')) return { kind: 'operator-day', title: operatorDayTitle(doc), subtitle: daySubtitle(doc), parts: () => operatorDayPage(doc) };
  return { kind: 'record', title: 'Record', parts: () => [facts(Object.entries(doc).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : v]))] };
}

async function show() {
  const src = sourceOf(new URLSearchParams(window.location.search));
  const title = document.getElementById('title');
  if (!src) {
    title.textContent = 'Nothing to show';
    return;
  }
  document.getElementById('raw').href = src;
  const response = await fetch(src, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (response.status === 401) {
    window.location.assign('/console/login');
    return;
  }
  const doc = await response.json();
  const view = document.getElementById('view');
  if (!response.ok) {
    title.textContent = `Not found (${response.status})`;
    view.appendChild(element('p', doc.error?.message ?? JSON.stringify(doc), 'error'));
    return;
  }
  const page = pageOf(src, doc);
  title.textContent = page.title;
  document.title = `${page.title} · vixpay console`;
  document.body.dataset.page = page.kind;
  document.getElementById('subtitle').textContent = page.subtitle ?? '';
  view.replaceChildren(...await page.parts());
  document.body.dataset.shown = 'true';
}

show().catch((error) => { document.getElementById('title').textContent = `Could not load: ${error.message}`; });
