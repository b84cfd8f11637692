import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operatorDay, operatorDayColumns, operatorDayCsv, operatorDayLine } from './operator-day.ts';
import { parseCsv } from '../../test/support/csv.ts';

// The operator's day CSV writes its fields as the statement's do (src/statements/statement-render.ts
// csvField, tested in statement-render.test.ts and statement-output.test.ts). Apart from those so that
// the statement's own tests, which the statements mutation area runs for every mutant, load no viem.

test('the operator\'s day CSV writes its fields the same way: its total row\'s `;` is quoted', async () => {
  const day = await operatorDay({ repository: { minedBetween: () => Promise.resolve([]) }, timeZone: 'Asia/Seoul', networks: ['ethereum'] }, '2026-11-26');
  const csv = operatorDayCsv(day);
  const [columns, settlements, total] = parseCsv(csv);
  assert.equal(total!.length, operatorDayColumns.length, csv);
  assert.deepEqual(settlements!.slice(0, 3), ['ethereum', 'settlements', 'settlements: 0']);
  assert.deepEqual(total!.slice(0, 3), ['ethereum', 'total', 'settlements: 0; other: none']);
  assert.match(csv, /,"settlements: 0; other: none",/);
  assert.deepEqual(columns, [...operatorDayColumns]);
});

test('an OP-stack day: settlement fees the headline (execution + L1 data + operator fee), per transfer and per transaction; deploys and mints apart', async () => {
  const tx = (txHash: string, kind: string, feeWei: string, l1FeeWei: string | null, transfers: number, operatorFeeWei: string | null = null) => ({
    network: 'optimism', txHash, kind, blockNumber: 7, status: 'confirmed', gasUsed: '100000', feeWei, l1FeeWei, operatorFeeWei, transfers, x402Transfers: 0,
  });
  const mined = [
    tx('0xdeploy', 'deploy', '5000000000000000', '900000000000', 0),
    tx('0xa', 'settlement', '300000000000000', '1097845000000', 3, '16000'),
    tx('0xb', 'settlement', '100000000000000', '2000000000000', 0),
    tx('0xmint', 'mint', '40000000000000', '1000', 0),
  ];
  const day = await operatorDay({ repository: { minedBetween: () => Promise.resolve(mined) }, timeZone: 'UTC', networks: ['optimism'] }, '2026-11-26');
  const [n] = day.networks;
  const settlementWei = 300000000000000n + 1097845000000n + 16000n + 100000000000000n + 2000000000000n;
  assert.equal(n!.settlementFees.total.wei, String(settlementWei));
  assert.equal(n!.settlementFees.total.amount, '0.000403097845016');
  assert.equal(n!.settlementFees.total.rounded, '0.000403 ETH');
  assert.deepEqual([n!.settlementFees.execution.wei, n!.settlementFees.l1Data.wei, n!.settlementFees.operator.wei], ['400000000000000', '3097845000000', '16000']);
  assert.equal(n!.settlementFeesPaidWei, String(settlementWei));
  // Both settlement transactions paid (one executed nothing): over the three transfers, to the nearest wei.
  assert.equal(n!.settlementFeePerTransfer!.total.wei, '134365948338667');
  assert.equal(n!.settlementFeePerTransfer!.l1Data.wei, '1032615000000');
  assert.equal(n!.settlementFeePerTransaction!.total.wei, String(settlementWei / 2n));
  assert.deepEqual(Object.keys(n!.otherFeesByKind).sort(), ['deploy', 'mint']);
  assert.equal(n!.otherFeesByKind.deploy!.total.wei, '5000900000000000');
  assert.equal(n!.otherFeesByKind.mint!.total.wei, '40000000001000');
  assert.equal(n!.otherFees.total.wei, String(5000900000000000n + 40000000001000n));
  assert.equal(n!.feesPaidWei, String(settlementWei + 5000900000000000n + 40000000001000n));
  assert.equal(n!.fees.total.wei, n!.feesPaidWei);
  const a = day.transactions.find((t) => t.txHash === '0xa')!;
  assert.equal(a.feeWei, '301097845016000', 'the whole fee');
  assert.equal(a.fee, '0.000301097845016');
  assert.equal(a.fees!.l1Data.amount, '0.000001097845');
  assert.equal(a.feePerTransfer!.wei, '100365948338667');
  assert.equal(day.transactions.find((t) => t.txHash === '0xdeploy')!.feePerTransfer, null);

  const csv = parseCsv(operatorDayCsv(day));
  const column = (row: string[], name: typeof operatorDayColumns[number]) => row[operatorDayColumns.indexOf(name)];
  const byHash = (hash: string) => csv.find((r) => r[1] === hash)!;
  const aRow = byHash('0xa');
  assert.deepEqual(['fee_wei', 'execution_fee_wei', 'l1_data_fee_wei', 'operator_fee_wei', 'fee_per_transfer_wei'].map((c) => column(aRow, c as never)),
    ['301097845016000', '300000000000000', '1097845000000', '16000', '100365948338667']);
  assert.deepEqual(byHash('settlements').slice(0, 9), ['optimism', 'settlements', 'settlements: 2 (1 pos)', '', '', '', '0.000403097845016', 'ETH', String(settlementWei)]);
  assert.equal(column(byHash('settlements'), 'fee_per_transfer_wei'), '134365948338667');
  assert.deepEqual(csv.filter((r) => r[1] === 'other').map((r) => [r[2], column(r, 'fee_wei')]), [['deploy: 1', '5000900000000000'], ['mint: 1', '40000000001000']]);
  assert.equal(column(byHash('total'), 'fee_wei'), n!.feesPaidWei);
  assert.equal(operatorDayLine(n!), 'optimism: settlement fees 0.000403097845016 ETH (403097845016000 wei; execution 0.0004 + L1 data 0.000003097845 + operator 0.000000000000016) '
    + 'over 2 settlement transactions (1 POS, 0 x402, 0 both), 3 transfers, 0.000134365948338667 ETH per transfer (execution 0.000133333333333333 + L1 data 0.000001032615), '
    + '0.000201548922508 ETH per settlement transaction (execution 0.0002 + L1 data 0.0000015489225); '
    + 'not settlement: 1 deploy 0.0050009 ETH, 1 mint 0.000040000000001 ETH; all fees 0.005443997845017 ETH (5443997845017000 wei)');
});
