import type { OpenStatement, StatementLine, StatementSummary } from './statement.ts';

/** The CSV's columns, named in its first row (docs/statements.md). */
export const statementColumns = [
  'local_time', 'kind', 'reference', 'approval_no', 'amount', 'token', 'token_contract', 'currency_amount', 'currency', 'rate',
  'counterparty', 'tx_hash', 'block_number', 'log_index', 'reconciled',
] as const;

/**
 * The statement as one JSON document, written as its lines are read: header, `lines`, then the
 * summary. `pretty`: indented as a person reads it on a terminal (the same document).
 */
export async function* statementJson(statement: OpenStatement, options: { pretty?: boolean } = {}): AsyncGenerator<string> {
  const pretty = options.pretty === true;
  const header = pretty ? JSON.stringify(statement.header, null, 2).slice(0, -2) : JSON.stringify(statement.header).slice(0, -1);
  yield pretty ? `${header},\n  "lines": [` : `${header},"lines":[`;
  const lines = statement.lines();
  let first = true;
  for (let next = await lines.next(); ; next = await lines.next()) {
    if (next.done) {
      yield pretty ? `\n  ],\n${JSON.stringify(next.value, null, 2).slice(2)}` : `],${JSON.stringify(next.value).slice(1)}`;
      return;
    }
    const line = pretty ? `\n    ${JSON.stringify(next.value, null, 2).replaceAll('\n', '\n    ')}` : JSON.stringify(next.value);
    yield `${first ? '' : ','}${line}`;
    first = false;
  }
}

// The characters a spreadsheet takes as the start of a formula (OWASP "CSV Injection"): = + - @,
// tab and CR, and their full-width and small forms (＝ ＋ － ＠ ﹦ ﹢ ﹣ ﹫), which some spreadsheets
// fold into the ASCII ones.
const formulaCharacter = '=+\\-@\\t\\r\\uFF1D\\uFF0B\\uFF0D\\uFF20\\uFE66\\uFE62\\uFE63\\uFE6B';
// Where a reader may start a new cell inside our field: a line break, or a comma, semicolon or tab
// (a spreadsheet that splits on `;` does not see our quotes: `";=1+1"` gives it a cell `=1+1"`).
const lineBreak = '\\r\\n\\v\\f\\u0085\\u2028\\u2029';
const separator = `,;\\t${lineBreak}`;
const formulaStart = new RegExp(`^\\s*[${formulaCharacter}]`);
const formulaAfterSeparator = new RegExp(`([${separator}])(?=[^\\S${lineBreak}]*[${formulaCharacter}])`, 'g');
const needsQuotes = new RegExp(`["'${separator}]`);
const plainNumber = /^-?\d+(\.\d+)?$/;

/**
 * A field as a spreadsheet reads it back, inert (OWASP's CSV injection rule; docs/statements.md
 * "CSV"): a field whose first character after any leading whitespace starts a formula gets a `'`
 * in front, and so does each physical line, and each piece after a comma, semicolon or tab, inside
 * it that would; a field holding a quote, a `'`, a comma, a semicolon, a tab or a line break is
 * quoted, its quotes doubled. A plain decimal number (`-12.5`: an amount, a net) is written as it is.
 */
export function csvField(value: string | number | boolean | null): string {
  const s = value === null ? '' : String(value);
  if (typeof value !== 'string' || plainNumber.test(s)) return s;
  let inert = s.replace(formulaAfterSeparator, "$1'");
  if (formulaStart.test(inert)) inert = `'${inert}`;
  return needsQuotes.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

const row = (cells: Partial<Record<typeof statementColumns[number], string | number | boolean | null>>) =>
  `${statementColumns.map((c) => csvField(cells[c] ?? null)).join(',')}\r\n`;

function lineRow(line: StatementLine): string {
  return row({
    local_time: line.localTime, kind: line.kind, reference: line.reference, approval_no: line.approvalNo, amount: line.amount, token: line.token,
    token_contract: line.tokenContract, currency_amount: line.exchangeAmount, currency: line.exchangeCurrency, rate: line.exchangeRate,
    counterparty: line.counterparty, tx_hash: line.txHash, block_number: line.blockNumber, log_index: line.logIndex, reconciled: line.reconciled,
  });
}

function summaryRows(statement: OpenStatement, summary: StatementSummary): string {
  const { header } = statement;
  const last = header.lastBlock >= header.firstBlock ? header.lastBlock : header.firstBlock - 1;
  return [
    ...summary.totals.map((t) => row({ kind: `total_${t.kind}`, reference: `${t.count} ${t.count === 1 ? 'line' : 'lines'}`, amount: t.amount, token: t.token })),
    ...summary.net.map((n) => row({ kind: 'net', amount: n.amount, token: n.token })),
    ...summary.balances.map((b) => row({ kind: 'closing_balance', amount: b.closing, token: b.token, token_contract: b.tokenContract, block_number: last, reconciled: b.difference === '0' })),
    ...summary.discrepancies.filter((d) => d.type === 'balance_mismatch').map((d) => row({ kind: 'balance_mismatch', amount: d.difference, token: d.token, reconciled: false })),
    row({ kind: 'statement', reference: header.closed ? 'closed' : 'open (the day is not over)', reconciled: summary.reconciled }),
  ].join('');
}

/** The statement as CSV: a header row of column names, the opening balances, one row per line, totals, closing balances. */
export async function* statementCsv(statement: OpenStatement): AsyncGenerator<string> {
  const { header } = statement;
  yield `${statementColumns.join(',')}\r\n`;
  for (const b of header.openingBalances) {
    yield row({ local_time: `${header.date} 00:00:00`, kind: 'opening_balance', amount: b.balance, token: b.token, token_contract: b.tokenContract, block_number: header.firstBlock > 0 ? header.firstBlock - 1 : null });
  }
  const lines = statement.lines();
  for (let next = await lines.next(); ; next = await lines.next()) {
    if (next.done) {
      yield summaryRows(statement, next.value);
      return;
    }
    yield lineRow(next.value);
  }
}

/** Pieces joined into chunks of about `bytes`: a stream of 100,000 lines is not 100,000 writes. */
export async function* batched(pieces: AsyncIterable<string>, bytes = 64 * 1024): AsyncGenerator<string> {
  let buffer = '';
  for await (const piece of pieces) {
    buffer += piece;
    if (buffer.length >= bytes) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}
