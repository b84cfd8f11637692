// The operator console's page script (served from our origin; the page allows no inline script).
// It draws /console/api/figures every few seconds with Chart.js, and the search and latest tables.
/* global Chart, document, window, setTimeout, FormData */
'use strict';

const refreshMs = 5000;
const colors = { approved: '#2e7d32', failed: '#c62828', pending: '#f9a825' };
let perMinuteChart;
let resCodeChart;
// Every time on the page is shown in the platform's zone (TIME_ZONE, from the figures), named, never the browser's.
let timeZone = 'UTC';
const wallClocks = new Map();

/** `yyyy-mm-dd HH:MM:SS` (or `HH:MM` with `minutes`) of an instant in the platform's zone. */
function inZone(at, minutes) {
  const key = `${timeZone}:${minutes ? 'm' : 's'}`;
  let format = wallClocks.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', minutes
      ? { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit' }
      : { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    wallClocks.set(key, format);
  }
  const p = Object.fromEntries(format.formatToParts(new Date(at)).map((part) => [part.type, part.value]));
  return minutes ? `${p.hour}:${p.minute}` : `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

function figure(name, value) {
  for (const element of document.querySelectorAll(`[data-figure="${name}"]`)) element.textContent = String(value);
}

function amounts(totals) {
  return totals.length === 0 ? '0' : totals.map((t) => `${t.amount} ${t.token}`).join(' + ');
}

/** A whole number with its thousands grouped (gas counts: `1,234,567`). */
function grouped(value) {
  return BigInt(value).toLocaleString('en-US');
}

function cell(row, text, className) {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function linkCell(row, href, text) {
  const td = document.createElement('td');
  if (href) {
    const a = document.createElement('a');
    a.href = href;
    a.textContent = text;
    a.target = '_blank';
    a.rel = 'noopener';
    td.appendChild(a);
  } else {
    td.textContent = '–';
  }
  row.appendChild(td);
  return td;
}

/** A link to a block explorer (etherscan, bscscan…) beside a cell's own, on a network's public chain only. */
function explorerLink(td, href) {
  if (!href) return;
  const a = document.createElement('a');
  a.href = href;
  a.textContent = 'explorer';
  a.className = 'explorer';
  a.target = '_blank';
  a.rel = 'noopener noreferrer';
  td.append(' ', a);
}

function fillTable(id, rows, render) {
  const body = document.getElementById(id);
  // Each cell carries its column's name: on a phone a row is a card of label/value lines (console.css).
  const labels = [...body.closest('table').querySelectorAll('thead th')].map((th) => th.textContent);
  body.replaceChildren(...rows.map((data) => {
    const row = document.createElement('tr');
    render(row, data);
    [...row.cells].forEach((td, i) => { td.dataset.label = labels[i] ?? ''; });
    return row;
  }));
}

/** The Statements forms' day inputs start at today in the platform's zone (an operator may pick another). */
function todayInForms(today) {
  for (const input of document.querySelectorAll('form.download input[type=date]')) {
    if (!input.value) input.value = today;
    input.max = today;
  }
}

function minuteLabel(at) {
  return inZone(at, true);
}

function drawCharts(figures) {
  const labels = figures.perMinute.map((m) => minuteLabel(m.at));
  const series = ['approved', 'failed', 'pending'].map((status) => ({
    label: status, data: figures.perMinute.map((m) => m[status]), backgroundColor: colors[status], borderColor: colors[status], stack: 'payments',
  }));
  if (!perMinuteChart) {
    perMinuteChart = new Chart(document.getElementById('per-minute'), {
      type: 'bar',
      data: { labels, datasets: series },
      options: { maintainAspectRatio: false, animation: false, scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } },
    });
  } else {
    perMinuteChart.data.labels = labels;
    series.forEach((s, i) => { perMinuteChart.data.datasets[i].data = s.data; });
    perMinuteChart.update();
  }
  const codes = figures.byResCode;
  const codeData = {
    labels: codes.map((c) => `${c.resCode} ${c.resMessage}`),
    datasets: [{ label: 'payments', data: codes.map((c) => c.count), backgroundColor: codes.map((c) => (c.resCode === '00' ? colors.approved : c.resCode === 'pending' ? colors.pending : colors.failed)) }],
  };
  if (!resCodeChart) {
    resCodeChart = new Chart(document.getElementById('by-res-code'), {
      type: 'bar', data: codeData,
      options: { indexAxis: 'y', maintainAspectRatio: false, animation: false, plugins: { legend: { display: false } }, scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } },
    });
  } else {
    resCodeChart.data = codeData;
    resCodeChart.update();
  }
}

function activityRow(row, r) {
  row.dataset.reference = r.reference;
  cell(row, inZone(r.createdAt));
  cell(row, r.kind);
  cell(row, r.tid);
  cell(row, r.reference, 'mono');
  cell(row, r.failureCode ? `${r.status} (${r.failureCode})` : r.status);
  cell(row, r.amount === null ? '–' : `${r.amount} ${r.tokenSymbol ?? ''}`);
  cell(row, r.userAddress ?? '–', 'mono');
  // An x402 payment's receipt is the facilitator key's to read (docs/x402.md); its transaction is linked.
  const receipt = r.kind === 'payment' && r.status === 'approved'
    ? `/console/api/receipts/payments/${encodeURIComponent(r.tid)}/${encodeURIComponent(r.reference)}`
    : r.kind === 'reward' && r.transactionId ? `/console/api/receipts/rewards/${encodeURIComponent(r.tid)}/${encodeURIComponent(r.reference)}` : undefined;
  // Opened as pages (view.html), their JSON one click away there.
  const page = (src) => (src ? `/console/view?src=${encodeURIComponent(src)}` : undefined);
  linkCell(row, page(receipt), 'receipt');
  explorerLink(linkCell(row, page(r.transactionId ? `/console/api/transactions/${encodeURIComponent(r.network)}/${encodeURIComponent(r.transactionId)}` : undefined), r.transactionId ? `${r.transactionId.slice(0, 10)}…` : ''), r.explorerUrl);
}

async function getJson(url) {
  const response = await fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (response.status === 401) {
    window.location.assign('/console/login');
    throw new Error('logged out');
  }
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

async function refresh() {
  const figures = await getJson('/console/api/figures');
  timeZone = figures.timeZone;
  figure('timeZone', timeZone);
  figure('generatedAt', inZone(figures.generatedAt));
  figure('windowMinutes', figures.windowMinutes);
  for (const key of ['total', 'approved', 'failed', 'pending']) figure(`payments.${key}`, figures.payments[key]);
  figure('volume', amounts(figures.volume));
  figure('refunds.count', figures.refunds.count);
  figure('refunds.amount', amounts(figures.refunds.amounts));
  for (const key of ['issued', 'claimed', 'canceled']) figure(`rewards.${key}`, figures.rewards[key]);
  figure('rewards.claimedAmount', amounts(figures.rewards.claimedAmounts));
  for (const key of ['settled', 'pending', 'failed']) figure(`x402.${key}`, figures.x402[key]);
  figure('x402.settledAmount', amounts(figures.x402.settledAmounts));
  // The cards: today in TIME_ZONE, yesterday beside it.
  todayInForms(figures.days.today.date);
  for (const [name, day] of Object.entries(figures.days)) {
    figure(`days.${name}.date`, day.date);
    for (const key of ['total', 'approved', 'failed', 'pending']) figure(`days.${name}.payments.${key}`, day.payments[key]);
    figure(`days.${name}.volume`, amounts(day.volume));
    figure(`days.${name}.refunds.count`, day.refunds.count);
    figure(`days.${name}.refunds.amount`, amounts(day.refunds.amounts));
    figure(`days.${name}.rewards.issued`, day.rewards.issued);
    figure(`days.${name}.rewards.claimed`, day.rewards.claimed);
    figure(`days.${name}.x402.settled`, day.x402.settled);
    figure(`days.${name}.x402.failed`, day.x402.failed);
    figure(`days.${name}.x402.settledAmount`, amounts(day.x402.settledAmounts));
  }
  figure('journal.total', figures.journal.total);
  figure('journal.oldest', figures.journal.oldestPendingAt ? `${figures.journal.oldestPendingAgeSeconds} s ago` : 'none');
  fillTable('res-codes', figures.byResCode, (row, c) => {
    row.dataset.resCode = c.resCode;
    cell(row, c.resCode);
    cell(row, c.resMessage);
    cell(row, String(c.count));
  });
  fillTable('stores', figures.stores, (row, s) => {
    row.dataset.tid = s.tid;
    cell(row, s.tid);
    cell(row, s.name);
    cell(row, String(s.approved));
    cell(row, s.settlementAddress, 'mono');
    cell(row, `${s.balance} ${s.token}`);
  });
  const costs = figures.settlementCosts;
  figure('settlementCosts.since', inZone(costs.since));
  figure('settlementCosts.timeZone', costs.timeZone);
  // A fee rounded for a person; exact, by part and in wei, on hover (src/console/fee-parts.ts).
  const feeCell = (row, fees, currency) => {
    const td = cell(row, fees ? fees.total.rounded : '–');
    if (fees) {
      td.title = `${fees.total.amount} ${currency} (${fees.total.wei} wei): execution ${fees.execution.amount} (${fees.execution.wei} wei)`
        + ` + L1 data ${fees.l1Data.amount} (${fees.l1Data.wei} wei) + operator ${fees.operator.amount} (${fees.operator.wei} wei)`;
    }
    return td;
  };
  const splitCell = (row, fees, currency) => {
    if (!fees) return cell(row, '–');
    const operator = fees.operator.wei === '0' ? '' : ` + ${fees.operator.amount}`;
    const td = cell(row, `${fees.execution.amount} + ${fees.l1Data.amount}${operator} = ${fees.total.amount} ${currency}`);
    td.title = `execution ${fees.execution.wei} wei + L1 data ${fees.l1Data.wei} wei + operator ${fees.operator.wei} wei = ${fees.total.wei} wei`;
    return td;
  };
  fillTable('settlement-costs', costs.networks, (row, c) => {
    row.dataset.network = c.network;
    cell(row, c.network);
    feeCell(row, c.settlementFees, c.currency);
    cell(row, c.settlementFees.l1Data.rounded).title = `${c.settlementFees.l1Data.amount} ${c.currency} (${c.settlementFees.l1Data.wei} wei)`;
    feeCell(row, c.settlementFeePerTransfer, c.currency);
    const byKind = c.settlementsByKind;
    cell(row, grouped(c.settlementTransactions)).title = `${byKind.pos} POS · ${byKind.x402} x402 · ${byKind.mixed} both`;
    cell(row, grouped(c.transfers)).title = `${c.posTransfers} POS · ${c.x402Transfers} x402`;
    cell(row, c.averageGasPerTransfer === null ? '–' : grouped(c.averageGasPerTransfer));
    cell(row, c.transfersPerTransaction === null ? '–' : String(c.transfersPerTransaction));
    const other = Object.entries(c.otherTransactions).map(([kind, n]) => `${n} ${kind} ${c.otherFeesByKind[kind]?.total.rounded ?? ''}`.trim());
    cell(row, other.length === 0 ? '–' : other.join(', ')).title = `${c.otherFees.total.amount} ${c.currency} (${c.otherFees.total.wei} wei)`;
    cell(row, grouped(c.transactions));
    cell(row, grouped(c.gasUsed));
    feeCell(row, c.fees, c.currency);
    // The settlement fees' execution part, then per transfer and per settlement transaction: execution + L1 data (+ operator, where any) = the fee, exact; wei on hover.
    cell(row, c.settlementFees.execution.rounded).title = `${c.settlementFees.execution.amount} ${c.currency} (${c.settlementFees.execution.wei} wei)`;
    splitCell(row, c.settlementFeePerTransfer, c.currency);
    splitCell(row, c.settlementFeePerTransaction, c.currency);
  });
  fillTable('relayers', figures.relayers, (row, r) => {
    row.dataset.relayer = `${r.network}:${r.address}`;
    cell(row, r.network);
    cell(row, r.lane === null ? 'retired' : String(r.lane));
    cell(row, r.address, 'mono');
    cell(row, String(r.pending));
    cell(row, String(r.transactions));
    // Rounded for a person; the exact balance on hover.
    cell(row, r.balanceRounded).title = r.nativeBalance;
  });
  drawCharts(figures);
  const recent = await getJson('/console/api/recent');
  fillTable('recent', recent.rows, activityRow);
  document.body.dataset.refreshedAt = figures.generatedAt;
}

function loop() {
  refresh().catch((error) => { figure('generatedAt', `failed: ${error.message}`); }).finally(() => setTimeout(loop, refreshMs));
}

document.getElementById('search').addEventListener('submit', (event) => {
  event.preventDefault();
  const q = new FormData(event.target).get('q');
  const status = document.getElementById('search-status');
  status.textContent = 'searching…';
  getJson(`/console/api/search?q=${encodeURIComponent(q)}`).then((result) => {
    status.textContent = `${result.rows.length} found for “${result.query}”`;
    fillTable('search-results', result.rows, activityRow);
  }, (error) => { status.textContent = `search failed: ${error.message}`; });
});

loop();
