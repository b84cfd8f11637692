import { setTimeout as sleep } from 'node:timers/promises';
import { Resolver } from 'did-resolver';
import { getResolver } from 'ethr-did-resolver';
import type { Address } from 'viem';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { verifyReceipt } from '../../src/receipts/verify-receipt.ts';
import { isNetworkName } from '../../src/shared/networks.ts';
import { dateOf } from '../../src/statements/statement-day.ts';
import { paymentStaleAfterMs } from '../../src/payments/settle-stale-payment.ts';
import { fleetWindows, type ChaosFleet } from './fleet.ts';
import type { OpRecord } from './workload.ts';

export interface Violation { op?: string; message: string }

const zeroAddress = '0x0000000000000000000000000000000000000000';

/**
 * The checker, from the chain: every token Transfer event since block 0, by (from, to). Each move
 * answered success is there exactly once with its amount; refused and not-tried ones never; an
 * indefinite one at most once, and its lookup says which and agrees with the chain (a lookup that
 * never decides is a violation, unless the move names the documented window it may stay pending
 * in). Then the webhooks each outcome owes, the receipts it owes (each verified as
 * `POST /console/api/receipts/verify` and `vixpay receipt verify` do), every store's statement of
 * each day of the run reconciled by its own verdict, and conservation (total supply = sum of
 * balances = minted).
 */
/**
 * Moves left pending within their documented window, by `from>to`, kept across a run's schedules:
 * until the window has passed (the fleet's payment window, `paymentStaleAfterMs` of its pairing and idle
 * windows, then a sweep, and 30 s to spare), the store's statement may show their transfer as unexplained; after it, the
 * sweep must have settled them and the statement reconciles again, or it is a violation.
 */
export type PendingMoves = Map<string, { label: string; notedAt: number }>;
const pendingWindowMs = paymentStaleAfterMs({ pairingWindowMs: fleetWindows.pairingSeconds * 1000, idleTimeoutMs: fleetWindows.idleSeconds * 1000 })
  + fleetWindows.sweepSeconds * 1000 + 30_000;

export async function checkRecords(fleet: ChaosFleet, records: OpRecord[], since: number, pending: PendingMoves = new Map()): Promise<{ violations: Violation[]; notes: string[] }> {
  const { operator } = fleet;
  const chain = operator.chains.ethereum;
  const vixp = operator.contracts.ethereum.vixpToken;
  const violations: Violation[] = [];
  const notes: string[] = [];
  for (const record of records) {
    if ((record as OpRecord & { hung?: string }).hung) violations.push({ op: record.label, message: `no answer: ${(record as OpRecord & { hung?: string }).hung}` });
  }
  // Lookups, all at once, each asked again every second for up to 20 s until it decides.
  await Promise.all(records.flatMap((record) => record.moves).filter((move) => move.look && move.outcome !== 'refused').map(async (move) => {
    for (let attempt = 0; attempt < 20 && !move.lookup; attempt++) {
      move.lookup = await move.look!().catch(() => undefined);
      if (!move.lookup) await sleep(1000);
    }
  }));
  const logs = await chain.client.getContractEvents({ address: vixp, abi: vixpTokenAbi, eventName: 'Transfer', fromBlock: 0n });
  const transfers = new Map<string, bigint[]>();
  for (const log of logs) {
    const key = `${log.args.from}>${log.args.to}`.toLowerCase();
    transfers.set(key, [...(transfers.get(key) ?? []), log.args.value ?? 0n]);
  }
  for (const record of records) {
    for (const move of record.moves) {
      const moved = transfers.get(`${move.from}>${move.to}`.toLowerCase()) ?? [];
      const say = (message: string) => violations.push({ op: record.label, message: `${move.what} answered ${move.outcome} (${move.answer})${move.lookup ? `, lookup ${move.lookup.said}` : ''}: ${message}` });
      const wrongAmount = moved.filter((value) => value !== move.amount);
      if (wrongAmount.length > 0) say(`moved ${wrongAmount.join(', ')} instead of ${move.amount}`);
      if (move.outcome === 'success' && moved.length !== 1) say(`on chain ${moved.length} times, not exactly once`);
      if ((move.outcome === 'refused' || move.outcome === 'not-tried') && moved.length !== 0) say(`on chain ${moved.length} times, though refused`);
      if (move.outcome === 'indefinite' && moved.length > 1) say(`on chain ${moved.length} times`);
      if (move.lookup && move.lookup.moved !== (moved.length === 1)) say(`the lookup says ${move.lookup.moved ? 'moved' : 'not moved'}, the chain has it ${moved.length} times`);
      if (move.outcome === 'indefinite' && move.look && !move.lookup) {
        if (move.mayStayPending) {
          notes.push(`${record.label}: ${move.what} indefinite, its lookup still pending (on chain ${moved.length} times): ${move.mayStayPending}`);
          const key = `${move.from}>${move.to}`.toLowerCase();
          if (!pending.has(key)) pending.set(key, { label: record.label, notedAt: Date.now() });
        }
        else say(`its lookup never said whether it moved (on chain ${moved.length} times)`);
      }
      if (move.what === 'rest pay' && move.outcome === 'success' && move.lookup && !move.lookup.moved) say('answered 200, replayed as not paid');
    }
  }
  const lookups = records.flatMap((r) => r.moves).filter((m) => m.lookup).length;
  const indefinite = records.flatMap((r) => r.moves).filter((m) => m.outcome === 'indefinite').length;
  violations.push(...await checkWebhooks(fleet, records));
  const receipts = await checkReceipts(fleet, records);
  violations.push(...receipts.violations);
  for (const [key, { notedAt }] of pending) if (Date.now() - notedAt > pendingWindowMs) pending.delete(key);
  const statements = await checkStatements(fleet, since, pending);
  violations.push(...statements.violations);
  notes.push(...statements.notes);
  notes.push(`checked: ${indefinite} indefinite answers, ${lookups} lookups decided, ${receipts.verified} receipts verified, ${statements.reconciled} statements reconciled`);

  const holders = new Set<string>();
  let minted = 0n;
  for (const log of logs) {
    if (log.args.to) holders.add(log.args.to);
    if (log.args.from === zeroAddress) minted += log.args.value ?? 0n;
  }
  holders.delete(zeroAddress);
  let sum = 0n;
  for (const holder of holders) sum += await chain.client.readContract({ address: vixp, abi: vixpTokenAbi, functionName: 'balanceOf', args: [holder as Address] });
  const totalSupply = await chain.client.readContract({ address: vixp, abi: vixpTokenAbi, functionName: 'totalSupply' });
  if (sum !== totalSupply) violations.push({ message: `the sum of balances ${sum} is not the total supply ${totalSupply}` });
  if (totalSupply !== minted) violations.push({ message: `the total supply ${totalSupply} is not what was minted ${minted}` });
  return { violations, notes };
}

/** Every outcome's webhook delivered to the receiver at least once (delivery retries for a while: waits up to 60 s for them). */
async function checkWebhooks(fleet: ChaosFleet, records: OpRecord[]): Promise<Violation[]> {
  const owed = records.flatMap((record) => record.webhooks.map((hook) => ({ record, hook })));
  const deadline = Date.now() + 60_000;
  const delivered = (hook: OpRecord['webhooks'][number]) => fleet.receiver.received.some((r) => r.event.type === hook.type && String(r.event.data[hook.field]).toLowerCase() === hook.value.toLowerCase());
  while (owed.some(({ hook }) => !delivered(hook)) && Date.now() < deadline) await sleep(500);
  return owed.filter(({ hook }) => !delivered(hook)).map(({ record, hook }) => ({ op: record.label, message: `webhook ${hook.type} ${hook.field}=${hook.value} never delivered` }));
}

/** Every receipt an outcome owes is served (at least as many as its outcomes) and verifies against the chain and the issuer's DID. */
async function checkReceipts(fleet: ChaosFleet, records: OpRecord[]): Promise<{ violations: Violation[]; verified: number }> {
  const { operator } = fleet;
  const { ethereum } = operator.chains;
  const deps = {
    resolver: new Resolver(getResolver({ networks: [{ name: 'mainnet', chainId: ethereum.chainId, rpcUrl: ethereum.url, registry: operator.contracts.ethereum.didRegistry }] })) as never,
    systemIssuers: operator.did.systemDids.issuer.map((d) => d.did),
    chainOf: (name: string) => (isNetworkName(name) ? operator.chains[name] : undefined),
  };
  const violations: Violation[] = [];
  let verified = 0;
  for (const record of records) {
    if (!record.receipts) continue;
    const { what, count, fetch } = record.receipts;
    let receipts: unknown[] = [];
    // A receipt the sweep issues (one that failed at settlement) comes within seconds: asked again for up to 20 s.
    for (let attempt = 0; attempt < 20; attempt++) {
      receipts = await fetch().catch(() => []);
      if (receipts.length >= count) break;
      await sleep(1000);
    }
    if (receipts.length < count) violations.push({ op: record.label, message: `${what}: ${receipts.length} receipt(s) served, ${count} owed` });
    for (const receipt of receipts) {
      const verification = await verifyReceipt(deps, receipt);
      if (verification.verified) verified++;
      else violations.push({ op: record.label, message: `${what}'s receipt does not verify: ${JSON.stringify(verification.checks).slice(0, 400)}` });
    }
  }
  return { violations, verified };
}

/**
 * Every store's statement of each day the run touched (GET /v1/stores/{tid}/statements/{date}),
 * by the statement's own verdict: reconciled, but for the mints the fleet made into the store's
 * account before the run (unexplained transfers from the zero address: an operator's mint is one).
 */
async function checkStatements(fleet: ChaosFleet, since: number, pending: PendingMoves): Promise<{ violations: Violation[]; notes: string[]; reconciled: number }> {
  const timeZone = 'Asia/Seoul';
  const dates = [...new Set([dateOf(since, timeZone), dateOf(Date.now(), timeZone)])];
  const at = fleet.instances.find((i) => i.state === 'up') ?? fleet.instances[0]!;
  const violations: Violation[] = [];
  const notes: string[] = [];
  let reconciled = 0;
  for (const store of fleet.stores) {
    for (const date of dates) {
      const response = await fetch(`${at.endpoint.baseUrl}/v1/stores/${store.tid}/statements/${date}?format=json`, {
        headers: { authorization: `Bearer ${store.apiKey}` }, signal: AbortSignal.timeout(60_000),
      }).catch((error: unknown) => ({ ok: false, status: 0, json: async () => ({ error: (error as Error).message }) }));
      const body = await response.json() as { reconciled?: boolean; discrepancies?: Array<Record<string, unknown>>; lines?: unknown[] };
      if (!response.ok) {
        violations.push({ op: `statement ${store.tid} ${date}`, message: `answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}` });
        continue;
      }
      const left = (body.discrepancies ?? []).filter((d) => {
        if (d.type !== 'unexplained_transfer') return true;
        if (String(d.from).toLowerCase() === zeroAddress) return false;
        const held = pending.get(`${String(d.from)}>${String(d.to)}`.toLowerCase());
        if (held) notes.push(`statement ${store.tid} ${date}: ${held.label}'s transfer ${String(d.txHash)} is unexplained while the payment is pending within its window`);
        return !held;
      });
      if (!body.reconciled && left.length > 0) {
        violations.push({ op: `statement ${store.tid} ${date}`, message: `not reconciled (${body.lines?.length ?? 0} lines): ${JSON.stringify(left).slice(0, 600)}` });
      } else {
        reconciled++;
      }
    }
  }
  return { violations, notes, reconciled };
}
