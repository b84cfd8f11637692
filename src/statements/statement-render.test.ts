import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OpenStatement, StatementHeader, StatementLine, StatementSummary } from './statement.ts';
import { csvField, statementCsv } from './statement-render.ts';
import { parseCsv } from '../../test/support/csv.ts';

// Item 5 of issue 28: OWASP's CSV injection rule in full. Each hostile reference (a POS chooses
// its tran_no) is written into a statement's CSV, then read back three ways: by a CSV reader that
// honours quotes (the value comes back, a `'` in front where it would start a formula), line by
// line, and split on `;`, `,` or tab by a reader that does not see quotes (no piece starts a formula).

// `as`: the header grows fields this test does not read.
const header = {
  tid: 'T-1001', date: '2026-11-26', timeZone: 'Asia/Seoul', network: 'ethereum', account: '0x0000000000000000000000000000000000000001',
  from: '2026-11-25T15:00:00.000Z', to: '2026-11-26T15:00:00.000Z', firstInstant: '2026-11-26T00:00:00.000+09:00', lastInstant: '2026-11-26T23:59:59.999+09:00',
  closed: true, firstBlock: 10, lastBlock: 12, openingBalances: [],
} as StatementHeader;
const summary: StatementSummary = { totals: [], net: [{ token: 'USDC', amount: '-1.5' }], balances: [], reconciled: true, discrepancyCount: 0, discrepancies: [] };

function line(reference: string): StatementLine {
  return {
    time: '2026-11-26T01:00:00.000Z', localTime: '2026-11-26 10:00:00', kind: 'payment', reference, approvalNo: '00012345', amount: '-1.5', token: 'USDC',
    tokenContract: '0x0000000000000000000000000000000000000002', exchangeAmount: '2000', exchangeCurrency: 'KRW', exchangeRate: '1333.33',
    counterparty: '0x0000000000000000000000000000000000000003', txHash: `0x${'ab'.repeat(32)}`, blockNumber: 11, logIndex: 0, reconciled: true,
  };
}

async function csvOf(references: string[]): Promise<string> {
  const statement: OpenStatement = {
    header,
    async *lines() {
      for (const reference of references) yield line(reference);
      return summary;
    },
  };
  let csv = '';
  for await (const piece of statementCsv(statement)) csv += piece;
  return csv;
}

const formulaStart = /^\s*[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20\uFE66\uFE62\uFE63\uFE6B]/;

// [the reference as the POS sent it, what a spreadsheet shows]
const forms: Array<[string, string]> = [
  ['=1+1', "'=1+1"],
  ['+1+1', "'+1+1"],
  ['-1+1', "'-1+1"],
  ['@SUM(A1)', "'@SUM(A1)"],
  ['\t=1+1', "'\t'=1+1"],
  ['\r=1+1', "'\r'=1+1"],
  [' =1+1', "' =1+1"],
  ['\u3000=1+1', "'\u3000=1+1"],
  ['＝1+1', "'＝1+1"],
  ['＋1+1', "'＋1+1"],
  ['－1+1', "'－1+1"],
  ['＠SUM(A1)', "'＠SUM(A1)"],
  ['﹦1+1', "'﹦1+1"],
  ['\n=1+1', "\n'=1+1"],
  ['ok\r\n=1+1', "ok\r\n'=1+1"],
  ['ok\n  @x', "ok\n'  @x"],
  [';=1+1', ";'=1+1"],
  ['a,=1+1', "a,'=1+1"],
  ['\tok', "'\tok"],
  ['\rok', "'\rok"],
  ['a\t=1+1', "a\t'=1+1"],
  ['a;+1', "a;'+1"],
  ['a,-1', "a,'-1"],
  ['a;@x', "a;'@x"],
  ['a; =1', "a;' =1"],
  ['a\t\t@x', "a\t'\t'@x"],
  ['a;b', 'a;b'],
  ['say "hi"', 'say "hi"'],
  ["O'Brien", "O'Brien"],
  ['T-0001', 'T-0001'],
  ['-12', '-12'],
];

describe('statement CSV: formulas made inert (OWASP)', () => {
  test('each form reads back as its value, a \' in front where it would start a formula', async () => {
    const rows = parseCsv(await csvOf(forms.map(([reference]) => reference)));
    const referenceColumn = rows[0]!.indexOf('reference');
    const read = rows.slice(1, 1 + forms.length).map((cells) => cells[referenceColumn]);
    assert.deepEqual(read, forms.map(([, shown]) => shown));
    for (const cells of rows) assert.equal(cells.length, rows[0]!.length, 'every row has every column');
  });

  test('no physical line, and no piece split on ; , or tab by a reader blind to quotes, starts a formula', async () => {
    const csv = await csvOf(forms.map(([reference]) => reference));
    const pieces = csv.split(/\r\n|[\r\n]/).flatMap((physical) => physical.split(/[;,\t]/));
    // A plain number (`-1.5`) is a value, not a formula.
    const starting = pieces.map((piece) => piece.replace(/^"/, '')).filter((piece) => formulaStart.test(piece) && !/^-?\d+(\.\d+)?$/.test(piece));
    assert.deepEqual(starting, []);
  });

  test('a field holding ; , a quote or a line break is quoted; numbers and plain text are written as they are', () => {
    assert.equal(csvField(';=1+1'), `";'=1+1"`);
    assert.equal(csvField('a;b'), '"a;b"');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('a\nb'), '"a\nb"');
    assert.equal(csvField('=1+1'), `"'=1+1"`);
    assert.equal(csvField('-1.5'), '-1.5');
    assert.equal(csvField(-3), '-3');
    assert.equal(csvField(true), 'true');
    assert.equal(csvField(null), '');
    assert.equal(csvField('2026-11-26 10:00:00'), '2026-11-26 10:00:00');
  });
});
