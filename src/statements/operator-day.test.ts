import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorDay, operatorDayColumns, operatorDayCsv } from './operator-day.ts';

// The operator's day CSV writes its fields as the statement's do (src/statements/statement-render.ts
// csvField, tested in statement-render.test.ts and statement-output.test.ts). Apart from those so that
// the statement's own tests, which the statements mutation area runs for every mutant, load no viem.

/** RFC 4180 as a spreadsheet reads it: rows of cells, quotes honoured. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { cells.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { cells.push(cell); rows.push(cells); cells = []; cell = ''; i++; } else cell += c;
  }
  return rows;
}

test('the operator\'s day CSV writes its fields the same way: its total row\'s `;` is quoted', async () => {
  const day = await operatorDay({ repository: { minedBetween: () => Promise.resolve([]) }, timeZone: 'Asia/Seoul', networks: ['ethereum'] }, '2026-11-26');
  const csv = operatorDayCsv(day);
  const [columns, total] = parseCsv(csv);
  assert.equal(total!.length, operatorDayColumns.length, csv);
  assert.deepEqual(total!.slice(0, 3), ['ethereum', 'total', 'settlements: 0; other: none']);
  assert.match(csv, /,"settlements: 0; other: none",/);
  assert.deepEqual(columns, [...operatorDayColumns]);
});
