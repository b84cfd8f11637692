// A store's daily statement on a day of 100,000 payments (docs/statements.md): the payments and the
// settlement transactions carrying them (100 per transaction, one per block) are seeded with bulk SQL
// inserts into a platform's SQLite, on blocks mined for them on its anvil today. The statement
// (GET /v1/stores/{tid}/statements/{date}'s JSON, every byte produced) is timed beside one plain query
// reading the same rows, in the same run; with the peak RSS growth of each. The seeded transactions
// carry no Transfer log on chain: every line is looked for in the chain's logs (getLogs over the day's
// blocks) and reported as a line without its log, so the matching and the discrepancy list are timed too.
import { randomBytes, randomUUID } from 'node:crypto';
import { startBenchPlatform } from './bench-platform.ts';
import { repeat, rssGrowthDuring, spread, ratio, type Spread } from './measure.ts';
import { batched, statementJson } from '../src/statements/statement-render.ts';
import { dateOf } from '../src/statements/statement-day.ts';

export interface StatementFigures {
  payments: number;
  transactions: number;
  seedSeconds: number;
  statementMs: Spread;
  statementBytes: number;
  statementRssGrowthMiB: Spread;
  plainQueryMs: Spread;
  plainQueryRssGrowthMiB: Spread;
  statementVsPlainQuery: number;
}

const perTransaction = 100;
const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

export async function measureStatements(options: { payments: number; runs: number; log(message: string): void }): Promise<StatementFigures> {
  const bench = await startBenchPlatform();
  try {
    const { platform } = bench;
    const { db } = platform.store;
    const network = platform.config.paymentNetwork;
    const chain = platform.chains[network];
    const store = await platform.payments.addStore({ tid: 'BENCH-STMT', name: 'Statement bench' });
    const token = platform.contracts[network].vixpToken;
    const transactions = Math.ceil(options.payments / perTransaction);
    const began = performance.now();
    // One block per settlement transaction, a second apart (or all in this second near midnight: the day must hold them).
    const head = Number(await chain.client.getBlockNumber());
    const secondsLeft = Math.floor((startOfNextDay(platform) - Date.now()) / 1000) - 5;
    const interval = secondsLeft > transactions ? 1 : 0;
    await chain.client.request({ method: 'anvil_mine', params: [`0x${transactions.toString(16)}`, `0x${interval.toString(16)}`] } as never);
    const now = Date.now();
    const txs = Array.from({ length: transactions }, (_, i) => ({
      id: randomUUID(), network, kind: 'settlement', reference: null, relayer: '0xbench', nonce: i, raw_tx: '0x', tx_hash: hex(32),
      from_address: null, to_address: null, contract_address: null, amount: null, status: 'confirmed' as const, block_number: head + 1 + i,
      block_timestamp: Math.floor(now / 1000), tx_index: 0, gas_used: 3_000_000, fee_wei: '3000000000000000', error: null, created_at: now, updated_at: now,
    }));
    for (let i = 0; i < txs.length; i += 500) await db.insertInto('chain_txs').values(txs.slice(i, i + 500)).execute();
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < options.payments; i += 500) {
        await trx.insertInto('payments').values(Array.from({ length: Math.min(500, options.payments - i) }, (_, j) => {
          const n = i + j;
          return {
            id: randomUUID(), tid: store.tid, tran_no: `B${n}`, status: 'approved' as const, user_uuid: randomUUID(), user_address: hex(20),
            settlement_address: store.settlementAddress, network, contract_address: token, token_symbol: 'VIXP', token_amount: '1000000000000000000',
            exchange_amount: '1000', exchange_currency: 'KRW', exchange_rate: '1000', exchange_date_index: '2026010100001',
            transfer_transaction_id: txs[Math.floor(n / perTransaction)]!.tx_hash, approval_no: String(n).padStart(16, '0'), approval_date: '20260101000000',
            refunded_amount: '0', failure_code: null, created_at: now, updated_at: now, run_by: null,
          };
        })).execute();
      }
    });
    const seedSeconds = Math.round((performance.now() - began) / 100) / 10;
    options.log(`  seeded ${options.payments} payments in ${transactions} transactions (${seedSeconds} s)`);

    const date = dateOf(now, platform.config.timeZone);
    let statementBytes = 0;
    const statement = await repeat(options.runs, async () => {
      const t0 = performance.now();
      const { rssGrowthMiB } = await rssGrowthDuring(async () => {
        let bytes = 0;
        for await (const chunk of batched(statementJson(await platform.statements.open(store.tid, date)))) bytes += Buffer.byteLength(chunk);
        statementBytes = bytes;
      });
      return { ms: performance.now() - t0, rssGrowthMiB };
    });
    const plain = await repeat(options.runs, async () => {
      const t0 = performance.now();
      const { rssGrowthMiB } = await rssGrowthDuring(() => db.selectFrom('payments as p').innerJoin('chain_txs as c', 'c.tx_hash', 'p.transfer_transaction_id')
        .selectAll('p').select(['c.block_number', 'c.tx_index']).where('p.tid', '=', store.tid).where('c.network', '=', network)
        .where('c.block_number', '>=', head + 1).where('c.block_number', '<=', head + transactions).orderBy('c.block_number').orderBy('c.tx_index').execute());
      return { ms: performance.now() - t0, rssGrowthMiB };
    });
    const statementMs = spread(statement.map((r) => r.ms), 0);
    const plainQueryMs = spread(plain.map((r) => r.ms), 0);
    return {
      payments: options.payments, transactions, seedSeconds, statementMs, statementBytes,
      statementRssGrowthMiB: spread(statement.map((r) => r.rssGrowthMiB)), plainQueryMs,
      plainQueryRssGrowthMiB: spread(plain.map((r) => r.rssGrowthMiB)), statementVsPlainQuery: ratio(statementMs, plainQueryMs),
    };
  } finally {
    await bench.stop();
  }
}

function startOfNextDay(platform: { config: { timeZone: string } }): number {
  const today = dateOf(Date.now(), platform.config.timeZone);
  let t = Date.now();
  while (dateOf(t, platform.config.timeZone) === today) t += 60_000;
  return t;
}
