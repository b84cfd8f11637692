import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorDay, operatorDayColumns, operatorDayCsv } from './operator-day.ts';
import { parseCsv } from '../../test/support/csv.ts';

// The operator's day CSV writes its fields as the statement's do (src/statements/statement-render.ts
// csvField, tested in statement-render.test.ts and statement-output.test.ts). Apart from those so that
// the statement's own tests, which the statements mutation area runs for every mutant, load no viem.

test('the operator\'s day CSV writes its fields the same way: its total row\'s `;` is quoted', async () => {
  const day = await operatorDay({ repository: { minedBetween: () => Promise.resolve([]) }, timeZone: 'Asia/Seoul', networks: ['ethereum'] }, '2026-11-26');
  const csv = operatorDayCsv(day);
  const [columns, total] = parseCsv(csv);
  assert.equal(total!.length, operatorDayColumns.length, csv);
  assert.deepEqual(total!.slice(0, 3), ['ethereum', 'total', 'settlements: 0; other: none']);
  assert.match(csv, /,"settlements: 0; other: none",/);
  assert.deepEqual(columns, [...operatorDayColumns]);
});
