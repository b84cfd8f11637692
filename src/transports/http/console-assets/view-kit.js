// The pieces every console page is made of: elements, labelled tables that turn into cards on a
// phone, amounts that never wrap, addresses and hashes shortened with the whole one a hover away.
/* global document */

/** An element with text (textContent, never HTML: every value comes from the API). */
export function element(name, content, className) {
  const node = document.createElement(name);
  if (content !== undefined && content !== null) node.textContent = String(content);
  if (className) node.className = className;
  return node;
}

export const text = (v) => (v === null || v === undefined || v === '' ? '–' : String(v));

/** `0x1234…abcd`, the whole value as the title and for copying. */
export function short(value, className = 'mono') {
  if (!value) return element('span', '–');
  const node = element('span', value.length > 14 ? `${value.slice(0, 6)}…${value.slice(-4)}` : value, className);
  node.title = value;
  return node;
}

/** An amount with its token, on one line, whole: `-2.5 VIXP`. */
export function amount(value, token) {
  const node = element('span', `${value} ${token}`, 'amount');
  if (String(value).startsWith('-')) node.classList.add('out');
  node.dataset.amount = `${value} ${token}`;
  return node;
}

/** A link to another console page (a record's JSON as a page). */
export function pageLink(src, content) {
  const a = element('a');
  a.href = `/console/view?src=${encodeURIComponent(src)}`;
  a.appendChild(typeof content === 'string' ? document.createTextNode(content) : content);
  return a;
}

export function transactionLink(network, hash) {
  if (!hash) return element('span', '–');
  return pageLink(`/console/api/transactions/${encodeURIComponent(network)}/${encodeURIComponent(hash)}`, short(hash));
}

/** A heading and its content as a section, `data-part` naming it for tests and styles. */
export function section(part, heading, ...children) {
  const node = element('section', undefined, 'part');
  node.dataset.part = part;
  if (heading) node.appendChild(element('h2', heading));
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

/** Label/value pairs as a definition list (values: text or nodes). */
export function facts(pairs, className = 'facts') {
  const dl = element('dl', undefined, className);
  for (const [label, value] of pairs) {
    if (value === undefined) continue;
    dl.appendChild(element('dt', label));
    const dd = element('dd');
    if (value instanceof globalThis.Node) dd.appendChild(value);
    else dd.textContent = text(value);
    dl.appendChild(dd);
  }
  return dl;
}

/** The rest of a record a click away. */
export function more(summary, pairs) {
  const details = element('details', undefined, 'more');
  details.appendChild(element('summary', summary));
  details.appendChild(facts(pairs, 'facts small'));
  return details;
}

/**
 * A table with a column per `{ label, cell(row), className }`. Every cell carries its column's label
 * (data-label), which the phone layout shows beside the value when each row becomes a card.
 */
export function table(columns, rows, className, empty = 'none') {
  if (rows.length === 0) return element('p', empty, 'hint');
  // A table of a few narrow columns (`plain`) stays a table on a phone.
  const node = element('table', undefined, [className?.includes('plain') ? '' : 'cards-on-phone', className].filter(Boolean).join(' '));
  const head = node.createTHead().insertRow();
  for (const column of columns) head.appendChild(element('th', column.label, column.className));
  const body = node.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const column of columns) {
      const td = element('td', undefined, column.className);
      td.dataset.label = column.label;
      const value = column.cell(row);
      if (value instanceof globalThis.Node) td.appendChild(value);
      else td.textContent = text(value);
      tr.appendChild(td);
    }
  }
  return node;
}

/** The verdict at the top of a page: ok (green) or not (red), a headline and what it means. */
export function verdict(ok, headline, explanation) {
  const node = element('div', undefined, `verdict ${ok ? 'ok' : 'bad'}`);
  node.id = 'verdict';
  node.setAttribute('role', 'status');
  node.appendChild(element('strong', headline));
  if (explanation) node.appendChild(element('p', explanation));
  return node;
}

/** Figures as cards: `[label, value node or text, note]`. */
export function figures(items) {
  const node = element('div', undefined, 'figures');
  for (const [label, value, note] of items) {
    const card = element('div', undefined, 'figure');
    card.appendChild(element('span', label, 'label'));
    const big = element('span', undefined, 'value');
    if (value instanceof globalThis.Node) big.appendChild(value);
    else big.textContent = text(value);
    card.appendChild(big);
    if (note) card.appendChild(element('span', note, 'note'));
    node.appendChild(card);
  }
  return node;
}

/** `2026-11-26 22:00:31` → `22:00:31` (the page names the day already). */
export const timeOfDay = (localTime) => (localTime ? localTime.slice(11) : '–');

export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
