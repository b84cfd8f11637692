// A console record as a page: a receipt, a transaction, a store's statement or the operator's day,
// read from the console's JSON API (the same document is one click away: the "JSON" link).
/* global document, window, URLSearchParams */
'use strict';

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

function titleOf(src, doc) {
  if (src.includes('/receipts/')) return 'Receipt';
  if (src.includes('/transactions/')) return `Transaction on ${doc.network}`;
  if (src.includes('/statement?')) return `Statement of ${doc.tid}, ${doc.date}`;
  if (src.includes('/operator-day?')) return `Operator's day, ${doc.date}`;
  return 'Record';
}

function subtitleOf(doc) {
  if (doc.timeZone && doc.firstInstant) return `${doc.firstInstant} to ${doc.lastInstant} (${doc.timeZone})${doc.closed === false ? ', the day is still running' : ''}`;
  return '';
}

const isPlain = (v) => v === null || typeof v !== 'object';
const text = (v) => (v === null || v === undefined ? '–' : String(v));

function element(name, content, className) {
  const node = document.createElement(name);
  if (content !== undefined) node.textContent = content;
  if (className) node.className = className;
  return node;
}

/** An array of records as a table (a column per key), of plain values as a list. */
function arrayNode(items) {
  if (items.length === 0) return element('p', 'none', 'hint');
  if (items.every(isPlain)) return element('p', items.map(text).join(', '));
  const columns = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const table = element('table');
  const head = table.createTHead().insertRow();
  for (const column of columns) head.appendChild(element('th', column));
  const body = table.createTBody();
  for (const item of items) {
    const row = body.insertRow();
    for (const column of columns) {
      const value = item[column];
      row.appendChild(isPlain(value) ? element('td', text(value), 'mono') : (() => { const td = element('td'); td.appendChild(valueNode(value)); return td; })());
    }
  }
  const wrap = element('div', undefined, 'scroll');
  wrap.appendChild(table);
  return wrap;
}

/** A record: its plain fields as a two-column table, then each nested part under its name. */
function objectNode(record) {
  const fragment = document.createDocumentFragment();
  const plain = Object.entries(record).filter(([, v]) => isPlain(v));
  if (plain.length > 0) {
    const table = element('table', undefined, 'fields');
    for (const [key, value] of plain) {
      const row = table.insertRow();
      row.dataset.field = key;
      row.appendChild(element('th', key));
      row.appendChild(element('td', text(value), 'mono'));
    }
    fragment.appendChild(table);
  }
  for (const [key, value] of Object.entries(record).filter(([, v]) => !isPlain(v))) {
    const section = element('section');
    section.dataset.part = key;
    section.appendChild(element('h2', key));
    section.appendChild(valueNode(value));
    fragment.appendChild(section);
  }
  return fragment;
}

function valueNode(value) {
  if (Array.isArray(value)) return arrayNode(value);
  if (isPlain(value)) return element('p', text(value));
  return objectNode(value);
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
  if (!response.ok) {
    title.textContent = `Not found (${response.status})`;
    document.getElementById('view').appendChild(valueNode(doc));
    return;
  }
  title.textContent = titleOf(src, doc);
  document.title = `${title.textContent} · vixpay console`;
  document.getElementById('subtitle').textContent = subtitleOf(doc);
  document.getElementById('view').appendChild(valueNode(doc));
  document.body.dataset.shown = 'true';
}

show().catch((error) => { document.getElementById('title').textContent = `Could not load: ${error.message}`; });
