// The operator's day as a page: the day's totals first, then what settling cost per network (the fee
// section), then every transaction mined that day with the rest of it a click away
// (docs/statements.md, "The operator's day").
import { amount, element, figures, more, plural, section, table, transactionLink, verdict } from './view-kit.js';

const txKindLabels = {
  'pos-settlement': 'POS settlement', 'x402-settlement': 'x402 settlement', 'mixed-settlement': 'POS + x402 settlement',
  settlement: 'Settlement (no transfer)', deploy: 'Contract deploy', mint: 'Mint', 'cancel-authorization': 'Cancelled authorization',
  'wallet-deploy': 'Payer wallet deploy',
};
const txKind = (kind) => txKindLabels[kind] ?? kind;
const grouped = (value) => (value === null || value === undefined ? '–' : BigInt(value).toLocaleString('en-US'));

/**
 * What settling cost, per network, from the day's JSON `networks` (settlement-costs.ts). Every fee
 * field the page reads is read here, so a change of those fields changes this function alone.
 */
export function feeSection(networks) {
  const active = networks.filter((n) => n.transactions > 0);
  const other = (n) => Object.entries(n.otherTransactions).map(([kind, count]) => `${count} ${txKind(kind).toLowerCase()}`).join(', ') || 'none';
  return section('fees', 'Fees by network', table([
    { label: 'Network', cell: (n) => n.network },
    { label: 'Fees paid', cell: (n) => amount(n.feesPaid, n.currency), className: 'num' },
    { label: 'Of it, settlements', cell: (n) => amount(n.settlementFeesPaid, n.currency), className: 'num' },
    { label: 'Settlement transactions', cell: (n) => String(n.settlementTransactions), className: 'num' },
    { label: 'Transfers', cell: (n) => String(n.transfers), className: 'num' },
    { label: 'Gas per transfer', cell: (n) => grouped(n.averageGasPerTransfer), className: 'num' },
    { label: 'Other transactions', cell: other },
  ], active), active.length < networks.length
    ? element('p', `No transaction mined on ${networks.filter((n) => n.transactions === 0).map((n) => n.network).join(', ')}.`, 'hint') : undefined);
}

/** A fee part rounded for a person, the exact amount and its wei on hover (src/console/fee-parts.ts). */
function feePart(part, currency) {
  if (!part) return element('span', '–');
  const node = element('span', part.rounded, 'amount');
  node.dataset.amount = part.rounded;
  node.title = `${part.amount} ${currency} (${part.wei} wei)`;
  node.dataset.wei = part.wei;
  return node;
}

/**
 * What settling cost by part (execution, the L1 data fee of OP-stack networks, the operator fee) and
 * in all: for the day, per transfer and per settlement transaction. A part no network paid today has
 * no column, so a day without OP-stack fees keeps the table narrow.
 */
export function feeSplitSection(networks) {
  const active = networks.filter((n) => n.settlementTransactions > 0);
  if (active.length === 0) return undefined;
  const scopes = [['the day', 'settlementFees'], ['per transfer', 'settlementFeePerTransfer'], ['per settlement transaction', 'settlementFeePerTransaction']];
  const rows = active.flatMap((n) => scopes.map(([label, key]) => ({ network: n.network, currency: n.currency, label, fees: n[key] })));
  const paid = (part) => active.some((n) => n.settlementFees[part].wei !== '0');
  const columns = [
    { label: 'Network', cell: (r) => r.network, className: 'nowrap' },
    { label: 'For', cell: (r) => r.label, className: 'nowrap' },
    { label: 'Execution', cell: (r) => feePart(r.fees?.execution, r.currency), className: 'num' },
    paid('l1Data') ? { label: 'L1 data', cell: (r) => feePart(r.fees?.l1Data, r.currency), className: 'num' } : undefined,
    paid('operator') ? { label: 'Operator fee', cell: (r) => feePart(r.fees?.operator, r.currency), className: 'num' } : undefined,
    { label: 'Total', cell: (r) => feePart(r.fees?.total, r.currency), className: 'num' },
  ].filter(Boolean);
  return section('fee-split', 'What settling cost, by part', table(columns, rows));
}

function dayTotals(doc) {
  const sum = (key) => doc.networks.reduce((total, n) => total + n[key], 0);
  const transactions = sum('transactions');
  const active = doc.networks.filter((n) => n.transactions > 0).length;
  const headline = transactions === 0 ? 'Nothing mined this day' : `${plural(transactions, 'transaction')} mined on ${plural(active, 'network')}`;
  return [
    verdict(true, headline, `${plural(sum('transfers'), 'transfer')} settled in ${plural(sum('settlementTransactions'), 'settlement transaction')}.`),
    figures([
      ['Transactions', transactions.toLocaleString('en-US')],
      ['Transfers settled', sum('transfers').toLocaleString('en-US'), `${sum('posTransfers')} POS · ${sum('x402Transfers')} x402`],
      ['Gas used', doc.networks.reduce((total, n) => total + BigInt(n.gasUsed), 0n).toLocaleString('en-US')],
    ]),
  ];
}

const txColumns = [
  { label: 'Network', cell: (t) => t.network, className: 'nowrap' },
  { label: 'Kind', cell: (t) => txKind(t.kind), className: 'nowrap' },
  { label: 'Fee', cell: (t) => (t.fee === null ? '–' : amount(t.fee, t.currency)), className: 'num wide' },
  { label: 'Transfers', cell: (t) => String(t.transfers), className: 'num' },
  { label: 'Transaction', cell: (t) => transactionLink(t.network, t.txHash) },
  { label: 'Status', cell: (t) => element('span', t.status, t.status === 'reverted' || t.status === 'failed' ? 'no' : undefined) },
  {
    label: 'Details', className: 'more-cell',
    cell: (t) => more('more', [
      ['Transaction', element('span', t.txHash, 'mono wrap')], ['Block', t.blockNumber], ['Gas used', grouped(t.gasUsed)],
      ['Fee (wei)', t.feeWei], ['x402 transfers', t.x402Transfers], ['POS transfers', t.transfers - t.x402Transfers],
    ]),
  },
];

export function operatorDayPage(doc) {
  return [
    ...dayTotals(doc),
    feeSection(doc.networks),
    feeSplitSection(doc.networks),
    section('transactions', `Transactions (${doc.transactions.length})`, table(txColumns, doc.transactions, 'lines')),
    section('about', undefined, more('About this day', [
      ['Day', `${doc.firstInstant} to ${doc.lastInstant}`], ['Time zone', doc.timeZone], ['From (UTC)', doc.from], ['To (UTC)', doc.to],
    ])),
  ];
}

export const operatorDayTitle = (doc) => `Operator's day, ${doc.date}`;
