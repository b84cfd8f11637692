import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createPublicClient, formatEther, http, numberToHex, pad, parseEther, toHex, type Hex } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { dateOf } from '../src/statements/statement-day.ts';
import { addOperator } from '../src/console/operators.ts';
import { createOperatorRepository } from '../src/store/operator-repository.ts';
import { createPasswordHasher } from '../src/identity/password-hasher.ts';
import { operatorDayLine, type OperatorDay } from '../src/statements/operator-day.ts';
import { relayerLanesOf, skipWithoutHardhat, startHardhatNode, type HardhatNode } from './support/hardhat-node.ts';
import { newUser, startPaymentTest, type PaymentTest } from './support/payments.ts';
import { scriptedPayment } from './support/scripted-payments.ts';
import { waitFor } from './support/wait-for.ts';

// What settlement really costs on an OP-stack network: the platform's optimism network on Hardhat's
// node as OP Mainnet (`hardhat node --chain-type op --chain-id 10`), whose receipts carry an L1 data
// fee (`l1Fee`) once its L1Block predeploy holds real scalars, and an operator fee once its operator
// fee parameters are set. Every figure the operator reads (the operator's day, the console's cost
// panel, /metrics) is checked against the node's own receipts and the relayer's balances, to the wei.

const l1Block = '0x4200000000000000000000000000000000000015';
/** OP Mainnet's published Ecotone fee scalars (SystemConfig): base fee 5227, blob base fee 1014213. */
const baseFeeScalar = 5227n;
const blobBaseFeeScalar = 1_014_213n;
/** Operator fee parameters (Isthmus): OP Mainnet's are 0; set here so that the part is exercised. */
const operatorFeeScalar = 7n;
const operatorFeeConstant = 16_000n;

describe('fees on an OP-stack network (Hardhat EDR, --chain-type op, OP Mainnet\'s L1 scalars)', { skip: skipWithoutHardhat }, () => {
  let node: HardhatNode;
  let p: PaymentTest;
  const lanes: Hex[] = [];
  const funded = parseEther('1000');

  before(async () => {
    node = await startHardhatNode(['--chain-type', 'op', '--chain-id', '10']);
    const client = createPublicClient({ transport: http(node.url) });
    const setStorage = (slot: number, value: bigint) =>
      client.request({ method: 'hardhat_setStorageAt', params: [l1Block, numberToHex(slot), pad(numberToHex(value), { size: 32 })] } as never);
    // Slot 3 packs sequenceNumber (uint64, lowest), blobBaseFeeScalar (uint32), baseFeeScalar (uint32).
    await setStorage(3, (baseFeeScalar << 96n) | (blobBaseFeeScalar << 64n));
    // Slot 8 packs operatorFeeConstant (uint64, lowest) and operatorFeeScalar (uint32).
    await setStorage(8, (operatorFeeScalar << 64n) | operatorFeeConstant);
    const relayerKey = generatePrivateKey();
    for (const lane of relayerLanesOf(relayerKey)) {
      lanes.push(lane.address);
      await client.request({ method: 'hardhat_setBalance', params: [lane.address, toHex(funded)] } as never);
    }
    // Hardhat's EDR in OP mode (0.22, Isthmus) refuses a type-4 transaction (`eth_sendRawTransaction`:
    // "Invalid parameters"), although Isthmus has EIP-7702: custodial transfers take EIP-3009 on it.
    p = await startPaymentTest({ RPC_URL_OPTIMISM: node.url, RELAYER_PRIVATE_KEY: relayerKey, PAYMENT_NETWORK: 'optimism', EIP7702_OPTIMISM: 'off' });
  });
  after(async () => {
    await p?.stop();
    await node?.stop();
  });

  test('the operator\'s day, the console\'s costs and /metrics say what the receipts say: execution, L1 data and operator fees, to the wei', async (context) => {
    const chain = p.t.platform.chains.optimism;
    assert.equal(chain.managed, false);
    assert.equal(chain.chainId, 10);
    assert.match(await chain.client.request({ method: 'web3_clientVersion' } as never) as string, /hardhat|edr/i);
    const store = await p.t.platform.payments.addStore({ tid: 'OP-1001', name: 'Optimism Cafe' });
    await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
    for (const amount of ['12000', '3000', '4500']) {
      const user = await newUser(p, '30');
      const paid = await scriptedPayment(p, store, user, amount, `OP${randomUUID().slice(0, 8)}`);
      assert.equal(paid.posEnd.content.state, 'END_PAY', JSON.stringify(paid.posEnd));
    }

    // Every relayed transaction on optimism (deploys, mints, settlements), from the node's receipts and headers,
    // once the three payments' authorizations are recorded as used (a receipt is read after END_PAY is answered).
    const { db } = p.t.platform.store;
    await waitFor(async () => (await db.selectFrom('authorizations').select('nonce').where('network', '=', 'optimism')
      .where('status', '=', 'used').execute()).length >= 3, { timeoutMs: 60_000, message: 'the three payments\' authorizations used' });
    const rows = await db.selectFrom('chain_txs').selectAll().where('network', '=', 'optimism').where('status', '!=', 'signed').execute();
    const days = new Set<string>();
    const sums = { execution: 0n, l1Data: 0n, operator: 0n, settlementTotal: 0n, settlementL1: 0n, settlementExecution: 0n, settlementOperator: 0n, transfers: 0, settlements: 0 };
    // The last settlement transaction mined (by block, then position): what /metrics' last-fee gauges say.
    let last: { block: bigint; index: number; execution: bigint; l1Fee: bigint; operatorFee: bigint; transfers: number } | undefined;
    for (const row of rows) {
      const receipt = await chain.client.getTransactionReceipt({ hash: row.tx_hash as Hex });
      const raw = receipt as unknown as Record<string, Hex>;
      const block = await chain.client.getBlock({ blockHash: receipt.blockHash });
      assert.equal('blockTimestamp' in receipt, false, 'Hardhat\'s receipts carry no block time');
      assert.equal(Number(row.block_timestamp), Number(block.timestamp), `${row.tx_hash}: its block header's time`);
      days.add(dateOf(Number(block.timestamp) * 1000, p.t.config.timeZone));
      const execution = receipt.gasUsed * receipt.effectiveGasPrice;
      const l1Fee = BigInt(raw.l1Fee!);
      // The Isthmus operator fee formula, from the receipt's own parameters.
      const operatorFee = receipt.gasUsed * BigInt(raw.operatorFeeScalar!) / 1_000_000n + BigInt(raw.operatorFeeConstant!);
      assert.ok(l1Fee > 0n, `${row.tx_hash}: a non-zero L1 data fee`);
      assert.equal(BigInt(raw.operatorFeeConstant!), operatorFeeConstant);
      assert.deepEqual([row.fee_wei, row.l1_fee_wei, row.operator_fee_wei], [String(execution), String(l1Fee), String(operatorFee)], row.tx_hash);
      sums.execution += execution;
      sums.l1Data += l1Fee;
      sums.operator += operatorFee;
      const executed = (await db.selectFrom('authorizations').select('nonce').where('network', '=', 'optimism').where('tx_hash', '=', row.tx_hash).where('status', '=', 'used').execute()).length;
      if (row.kind === 'settlement') {
        sums.settlements++;
        sums.settlementTotal += execution + l1Fee + operatorFee;
        sums.settlementL1 += l1Fee;
        sums.settlementExecution += execution;
        sums.settlementOperator += operatorFee;
        sums.transfers += executed;
        if (executed > 0 && (!last || receipt.blockNumber > last.block || (receipt.blockNumber === last.block && receipt.transactionIndex > last.index))) {
          last = { block: receipt.blockNumber, index: receipt.transactionIndex, execution, l1Fee, operatorFee, transfers: executed };
        }
      }
    }
    const total = sums.execution + sums.l1Data + sums.operator;
    assert.ok(sums.settlements >= 1 && sums.transfers >= 3, JSON.stringify(sums, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value)));
    assert.ok(rows.some((r) => r.kind === 'deploy') && rows.some((r) => r.kind === 'mint'), 'deploys and mints beside the settlements');
    // What left the relayer's lanes is exactly that: the three parts, nothing else.
    let spent = 0n;
    for (const lane of lanes) spent += funded - await chain.client.getBalance({ address: lane });
    assert.equal(spent, total, 'the lanes paid the receipts\' fees, L1 data and operator fees included');

    // The operator's day (the days the blocks fall in; one unless the test ran over midnight in TIME_ZONE).
    const daysOf: OperatorDay[] = [];
    for (const date of days) daysOf.push(await p.t.platform.statements.operatorDay(date));
    const optimism = daysOf.map((d) => d.networks.find((n) => n.network === 'optimism')!);
    const added = (pick: (n: (typeof optimism)[number]) => string) => optimism.reduce((sum, n) => sum + BigInt(pick(n)), 0n);
    assert.equal(daysOf.reduce((n, d) => n + d.transactions.filter((t) => t.network === 'optimism').length, 0), rows.length, 'every transaction listed');
    assert.equal(added((n) => n.feesPaidWei), total, 'the day\'s fees are what the receipts say, L1 data fee included');
    assert.equal(added((n) => n.fees.execution.wei), sums.execution);
    assert.equal(added((n) => n.fees.l1Data.wei), sums.l1Data);
    assert.equal(added((n) => n.fees.operator.wei), sums.operator);
    assert.equal(added((n) => n.settlementFees.total.wei), sums.settlementTotal, 'the headline: settlement fees');
    assert.equal(added((n) => n.settlementFees.l1Data.wei), sums.settlementL1);
    assert.equal(added((n) => n.otherFees.total.wei), total - sums.settlementTotal, 'deploys and mints apart');
    assert.ok(optimism.every((n) => n.currency === 'ETH'));
    for (const t of daysOf.flatMap((d) => d.transactions)) {
      if (t.network !== 'optimism') continue;
      const row = rows.find((r) => r.tx_hash === t.txHash)!;
      assert.equal(t.feeWei, String(BigInt(row.fee_wei!) + BigInt(row.l1_fee_wei!) + BigInt(row.operator_fee_wei!)), `${t.txHash}: the whole fee`);
      assert.equal(t.fee, formatEther(BigInt(t.feeWei!)));
      assert.equal(t.fees!.l1Data.wei, row.l1_fee_wei);
    }
    if (optimism.length === 1) {
      const [n] = optimism;
      const perTransfer = (sums.settlementTotal * 2n + BigInt(sums.transfers)) / (2n * BigInt(sums.transfers));
      assert.equal(n!.settlementFeePerTransfer!.total.wei, String(perTransfer), 'per transfer, to the nearest wei');
      assert.equal(n!.settlementFeePerTransfer!.total.amount, formatEther(perTransfer));
      // Each part per transfer and per settlement transaction, to the nearest wei on its own, in ETH with wei beside.
      const nearest = (wei: bigint, count: number) => (wei * 2n + BigInt(count)) / (2n * BigInt(count));
      for (const [per, count] of [[n!.settlementFeePerTransfer!, sums.transfers], [n!.settlementFeePerTransaction!, sums.settlements]] as const) {
        for (const [part, wei] of [['execution', sums.settlementExecution], ['l1Data', sums.settlementL1], ['operator', sums.settlementOperator], ['total', sums.settlementTotal]] as const) {
          assert.equal(per[part].wei, String(nearest(wei, count)), `${part} per ${count}`);
          assert.equal(per[part].amount, formatEther(nearest(wei, count)));
        }
      }
      // The CLI's line names the L1 data and operator fees of the settlement fees.
      const line = operatorDayLine(n!);
      assert.ok(line.startsWith(`optimism: settlement fees ${formatEther(sums.settlementTotal)} ETH (${sums.settlementTotal} wei; execution `), line);
      assert.match(line, new RegExp(` \\+ L1 data ${formatEther(sums.settlementL1).replace('.', '\\.')} \\+ operator `));
      const perTransferPart = (wei: bigint) => formatEther(nearest(wei, sums.transfers)).replace('.', '\\.');
      const perTransactionPart = (wei: bigint) => formatEther(nearest(wei, sums.settlements)).replace('.', '\\.');
      assert.match(line, new RegExp(`, ${perTransferPart(sums.settlementTotal)} ETH per transfer \\(execution ${perTransferPart(sums.settlementExecution)} \\+ L1 data ${perTransferPart(sums.settlementL1)}\\), `
        + `${perTransactionPart(sums.settlementTotal)} ETH per settlement transaction \\(execution ${perTransactionPart(sums.settlementExecution)} \\+ L1 data ${perTransactionPart(sums.settlementL1)}\\);`));
      context.diagnostic(line);
    }

    // The console's cost panel: the same figures (today's; the day began before the platform started).
    const { platform } = p.t;
    await addOperator({ operators: createOperatorRepository(platform.store.db), passwords: createPasswordHasher(), clock: platform.clock }, { username: 'op-fees', password: 'l1 data fees 1234' });
    const login = await p.t.app.inject({ method: 'POST', url: '/console/login', payload: 'username=op-fees&password=l1+data+fees+1234', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const figures = JSON.parse((await p.t.app.inject({ method: 'GET', url: '/console/api/figures', headers: { cookie } })).body);
    const costs = figures.settlementCosts.networks.find((n: { network: string }) => n.network === 'optimism');
    const today = optimism.at(-1)!;
    assert.deepEqual(
      [costs.settlementFees, costs.fees, costs.otherFeesByKind, costs.feesPaidWei, costs.settlementFeePerTransfer, costs.settlementFeePerTransaction],
      [today.settlementFees, today.fees, today.otherFeesByKind, today.feesPaidWei, today.settlementFeePerTransfer, today.settlementFeePerTransaction],
    );

    // /metrics: the same parts, in ether (a float sum: to within a billionth).
    const metrics = (await p.t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const metric = (name: string, labels: string) => {
      const line = metrics.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    };
    const close = (actual: number, wei: bigint, what: string) => {
      const expected = Number(formatEther(wei));
      assert.ok(Math.abs(actual - expected) <= expected * 1e-9, `${what}: ${actual} ≠ ${expected}`);
    };
    close(metric('vixpay_relayer_fees_paid_ether_total', 'network="optimism"'), total, 'all fees');
    const part = (name: string, purpose: string) => metric('vixpay_relayer_fee_parts_ether_total', `network="optimism",part="${name}",purpose="${purpose}"`);
    close(part('l1_data', 'settlement') + part('l1_data', 'other'), sums.l1Data, 'L1 data fees');
    close(part('execution', 'settlement') + part('execution', 'other'), sums.execution, 'execution fees');
    close(part('operator', 'settlement') + part('operator', 'other'), sums.operator, 'operator fees');
    close(part('execution', 'settlement') + part('l1_data', 'settlement') + part('operator', 'settlement'), sums.settlementTotal, 'settlement fees');
    // The last settlement transaction's fee in wei, exact: by part, per transaction and per transfer it executed.
    const nearestWei = (wei: bigint, count: number) => Number((wei * 2n + BigInt(count)) / (2n * BigInt(count)));
    const lastFee = last!;
    const lastTotal = lastFee.execution + lastFee.l1Fee + lastFee.operatorFee;
    for (const [per, count] of [['transaction', 1], ['transfer', lastFee.transfers]] as const) {
      for (const [name, wei] of [['execution', lastFee.execution], ['l1_data', lastFee.l1Fee], ['operator', lastFee.operatorFee], ['total', lastTotal]] as const) {
        assert.equal(metric('vixpay_settlement_last_fee_wei', `network="optimism",part="${name}",per="${per}"`), nearestWei(wei, count), `last settlement's ${name} per ${per}`);
      }
    }
  });
});
