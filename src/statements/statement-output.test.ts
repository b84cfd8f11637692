import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { batched, csvField, statementColumns, statementCsv, statementJson } from './statement-render.ts';
import type { OpenStatement, StatementLine, StatementSummary } from './statement.ts';
import { parseCsv } from '../../test/support/csv.ts';

// The statement's CSV and JSON as a reader gets them (docs/statements.md): every row and column of
// the CSV, the JSON document compact and pretty, and any text field (a property run beside
// statement-render.test.ts's hostile references) read back inert.
const seed = 29;

const formula = /^\s*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20\uFE66\uFE62\uFE63\uFE6B]/;

test('any text field reads back as itself, with a quote mark before whatever a spreadsheet would take for a formula', () => {
  const text = fc.oneof(fc.string({ maxLength: 40 }), fc.stringMatching(/^[=+\-@\t\r\n,;"' a1\uFF1D\uFE62\u2028]{0,20}$/));
  fc.assert(fc.property(text, (value) => {
    const cells = parseCsv(`${csvField(value)}\r\n`);
    assert.equal(cells.length, 1);
    assert.equal(cells[0]!.length, 1, JSON.stringify(value));
    const back = cells[0]![0]!;
    // Nothing is lost but the quote marks added: take them out and the value is there.
    assert.ok(back.length >= value.length);
    // A plain decimal number (an amount, a net: `-12.5`) is a number to a spreadsheet too, written as it is.
    if (/^-?\d+(\.\d+)?$/.test(value)) return back === value;
    // No piece a reader could start a cell at (a line, or after a comma, semicolon or tab) starts a formula.
    for (const piece of back.split(/[,;\t\r\n\v\f\u0085\u2028\u2029]/)) assert.doesNotMatch(piece, formula, JSON.stringify({ value, back }));
    return true;
  }), { seed, numRuns: 3000 });
  assert.equal(csvField('=1+1'), `"'=1+1"`);
  assert.equal(csvField(' @SUM(A1)'), `"' @SUM(A1)"`);
  assert.equal(csvField('a;=1'), '"a;\'=1"');
  assert.equal(csvField('say "hi", ok'), '"say ""hi"", ok"');
  assert.equal(csvField('-12.5'), '-12.5', 'a plain number stays a number');
  assert.equal(csvField('-12.5e3'), `"'-12.5e3"`);
  assert.equal(csvField(null), '');
  assert.equal(csvField(42), '42');
  assert.equal(csvField(true), 'true');
  assert.equal(csvField('plain'), 'plain');
  assert.equal(csvField("it's"), '"it\'s"');
});

const header = {
  tid: 'T-1', date: '2026-11-26', timeZone: 'Asia/Seoul', network: 'payment', account: '0xaa', from: '2026-11-26T00:00:00.000+09:00',
  to: '2026-11-27T00:00:00.000+09:00', firstInstant: 'a', lastInstant: 'b', closed: true, firstBlock: 5, lastBlock: 9,
  openingBalances: [{ token: 'VIXP', tokenContract: '0xcc', balance: '1' }],
};
const line: StatementLine = {
  time: 't', localTime: '2026-11-26 10:00:00', kind: 'payment', reference: '=HYPERLINK("x")', approvalNo: 'A1', amount: '2.5', token: 'VIXP',
  tokenContract: '0xcc', exchangeAmount: '2500', exchangeCurrency: 'KRW', exchangeRate: '1000', counterparty: '0xbb', txHash: '0x01',
  blockNumber: 6, logIndex: 0, reconciled: true,
};
const summary: StatementSummary = {
  totals: [{ kind: 'payment', token: 'VIXP', count: 1, amount: '2.5' }], net: [{ token: 'VIXP', amount: '2.5' }],
  balances: [{ token: 'VIXP', tokenContract: '0xcc', opening: '1', net: '2.5', unexplained: '0', closing: '3.5', difference: '0' }],
  reconciled: true, discrepancyCount: 1,
  discrepancies: [{ type: 'balance_mismatch', token: 'VIXP', expected: '3.5', actual: '3.4', difference: '-0.1' }],
};
function statement(h = header): OpenStatement {
  return { header: h, async *lines() { yield line; return summary; } };
}
async function text(pieces: AsyncIterable<string>): Promise<string> {
  let all = '';
  for await (const piece of pieces) all += piece;
  return all;
}

test('the CSV: the column row, opening balances at the block before the day, the lines, totals, net, closing balances, mismatches and the state', async () => {
  const rows = parseCsv(await text(statementCsv(statement())));
  const at = (r: string[]) => Object.fromEntries(statementColumns.map((c, i) => [c, r[i]]));
  assert.deepEqual(rows[0], [...statementColumns]);
  assert.ok(rows.every((r) => r.length === statementColumns.length));
  assert.deepEqual(rows.map((r) => at(r).kind), ['kind', 'opening_balance', 'payment', 'total_payment', 'net', 'closing_balance', 'balance_mismatch', 'statement']);
  assert.equal(at(rows[1]!).block_number, '4');
  assert.equal(at(rows[1]!).local_time, '2026-11-26 00:00:00');
  assert.equal(at(rows[2]!).reference, '\'=HYPERLINK("x")');
  assert.equal(at(rows[2]!).currency_amount, '2500');
  assert.equal(at(rows[3]!).reference, '1 line', 'one line, not "1 lines"');
  assert.equal(at(rows[5]!).block_number, '9');
  assert.equal(at(rows[5]!).reconciled, 'true');
  assert.equal(at(rows[6]!).amount, '-0.1');
  assert.deepEqual([at(rows[7]!).reference, at(rows[7]!).reconciled], ['closed', 'true']);
  const open = parseCsv(await text(statementCsv(statement({ ...header, closed: false, firstBlock: 0, lastBlock: -1 }))));
  assert.equal(at(open[1]!).block_number, '', 'no block before the first');
  assert.equal(at(open[5]!).block_number, '-1', 'no block in the day yet: the closing balance is of the block before it');
  assert.equal(at(open[7]!).reference, 'open (the day is not over)');
});

test('the JSON: one document, compact or pretty, with the header, the lines and the summary', async () => {
  const compact = await text(statementJson(statement()));
  const pretty = await text(statementJson(statement(), { pretty: true }));
  const expected = { ...header, lines: [line], ...summary };
  assert.deepEqual(JSON.parse(compact), expected);
  assert.deepEqual(JSON.parse(pretty), expected);
  assert.ok(!compact.includes('\n'));
  assert.ok(pretty.includes('\n    {'));
  const empty: OpenStatement = { header, async *lines() { yield* []; return summary; } };
  assert.deepEqual(JSON.parse(await text(statementJson(empty))).lines, []);
  assert.deepEqual(JSON.parse(await text(statementJson(empty, { pretty: true }))).lines, []);
});

test('batched joins pieces into chunks of about the size asked, losing nothing', async () => {
  async function* pieces() { for (let i = 0; i < 10; i++) yield 'x'.repeat(3); }
  const chunks: string[] = [];
  for await (const chunk of batched(pieces(), 7)) chunks.push(chunk);
  assert.deepEqual(chunks, ['x'.repeat(9), 'x'.repeat(9), 'x'.repeat(9), 'xxx']);
  const none: string[] = [];
  for await (const chunk of batched((async function* () { yield* []; })())) none.push(chunk);
  assert.deepEqual(none, []);
});
