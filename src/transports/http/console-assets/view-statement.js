// A store's daily statement as a page: the verdict first (reconciled, or each discrepancy in words),
// the balances, the totals by kind, then the lines with the columns an operator reads first and the
// rest of each line a click away (docs/statements.md names every field).
import {
  amount, element, figures, more, plural, section, short, table, text, timeOfDay, transactionLink, verdict,
} from './view-kit.js';

export const kindLabels = {
  payment: 'Payment', refund: 'Refund', reward: 'Reward paid', reward_cancellation: 'Reward given back', x402: 'x402 payment', unexplained: 'Unexplained',
};
const kindLabel = (kind) => kindLabels[kind] ?? kind;

const zeroAddress = `0x${'0'.repeat(40)}`;
const shortText = (value) => (value && value.length > 14 ? `${value.slice(0, 6)}…${value.slice(-4)}` : value);

/** A discrepancy (statement.ts's three types) as a sentence, addresses shortened (the JSON has them whole). */
function discrepancyText(d, account) {
  if (d.type === 'line_without_log') return `${kindLabel(d.kind)} ${d.reference}: its transaction ${shortText(d.txHash)} carries no matching transfer.`;
  if (d.type === 'unexplained_transfer') {
    const moved = d.to === account
      ? (d.from === zeroAddress ? 'minted into the account' : `into the account from ${shortText(d.from)}`)
      : `out of the account to ${shortText(d.to)}`;
    return `${d.amount} ${d.token} ${moved}, that no record of the platform explains (transaction ${shortText(d.txHash)}, log ${d.logIndex}).`;
  }
  if (d.type === 'balance_mismatch') return `${d.token}: the closing balance on chain is ${d.actual}, the lines make it ${d.expected} (difference ${d.difference}).`;
  return JSON.stringify(d);
}

function statementVerdict(doc) {
  const running = doc.closed === false ? ' The day is still running: the lines so far, the balance at the latest block.' : '';
  if (doc.reconciled) {
    return verdict(true, 'Reconciled', `Every line matches its transfer on chain and the balances add up.${running}`);
  }
  const node = verdict(false, `Not reconciled: ${plural(doc.discrepancyCount, 'discrepancy', 'discrepancies')}`, running.trim() || undefined);
  const list = element('ul', undefined, 'discrepancies');
  for (const d of doc.discrepancies) list.appendChild(element('li', discrepancyText(d, doc.account)));
  if (doc.discrepancyCount > doc.discrepancies.length) list.appendChild(element('li', `… and ${doc.discrepancyCount - doc.discrepancies.length} more (the JSON lists the first ${doc.discrepancies.length})`));
  node.appendChild(list);
  return node;
}

function balances(doc) {
  return figures(doc.balances.flatMap((b) => [
    [`Opening ${b.token}`, amount(b.opening, b.token)],
    [`Net of the lines`, amount(b.net, b.token), b.unexplained !== '0' ? `unexplained ${b.unexplained}` : undefined],
    [`Closing ${b.token}`, amount(b.closing, b.token), doc.discrepancies.some((d) => d.type === 'balance_mismatch' && d.token === b.token) ? 'does not add up' : 'adds up'],
  ]));
}

const lineColumns = [
  { label: 'Time', cell: (l) => timeOfDay(l.localTime), className: 'nowrap' },
  { label: 'Kind', cell: (l) => kindLabel(l.kind), className: 'nowrap' },
  { label: 'Amount', cell: (l) => amount(l.amount, l.token), className: 'num wide' },
  { label: 'Counterparty', cell: (l) => short(l.counterparty) },
  { label: 'Transaction', cell: (l) => transactionLink(l.network, l.txHash) },
  { label: 'Matched', cell: (l) => element('span', l.reconciled ? '✓ on chain' : l.kind === 'unexplained' ? '✗ no record' : '✗ no transfer', l.reconciled ? 'yes' : 'no'), className: 'nowrap' },
  {
    label: 'Details', className: 'more-cell',
    cell: (l) => more(l.reference ? shortText(l.reference) : 'more', [
      ['Reference', l.reference], ['Approval no.', l.approvalNo],
      ['Currency amount', l.exchangeAmount === null ? null : `${l.exchangeAmount} ${l.exchangeCurrency ?? ''}`], ['Rate', l.exchangeRate],
      ['Counterparty', element('span', l.counterparty, 'mono wrap')], ['Token contract', element('span', l.tokenContract, 'mono wrap')],
      ['Transaction', element('span', l.txHash, 'mono wrap')], ['Block', l.blockNumber], ['Log', l.logIndex], ['Time (UTC)', l.time],
    ]),
  },
];

export function statementPage(doc) {
  const lines = doc.lines.map((line) => ({ ...line, network: doc.network }));
  const totals = table([
    { label: 'Kind', cell: (t) => kindLabel(t.kind) },
    { label: 'Lines', cell: (t) => String(t.count), className: 'num' },
    { label: 'Amount', cell: (t) => amount(t.amount, t.token), className: 'num' },
  ], [...doc.totals, ...doc.net.map((n) => ({ kind: 'Net', token: n.token, count: doc.totals.reduce((sum, t) => sum + t.count, 0), amount: n.amount }))], 'totals plain', 'No payment, refund or reward this day.');
  const about = more('About this statement', [
    ['Store', doc.tid], ['Settlement account', element('span', doc.account, 'mono wrap')], ['Network', doc.network],
    ['Day', `${doc.firstInstant} to ${doc.lastInstant}`], ['Time zone', doc.timeZone], ['Blocks', `${doc.firstBlock} to ${doc.lastBlock}`],
    ['Opening balances', doc.openingBalances.map((b) => `${b.balance} ${b.token}`).join(', ')],
  ]);
  return [
    statementVerdict(doc),
    section('balances', 'Balances', balances(doc)),
    section('totals', 'Totals', totals),
    section('lines', `Lines (${doc.lines.length})`, table(lineColumns, lines, 'lines')),
    section('about', undefined, about),
  ];
}

export const statementTitle = (doc) => `Statement of ${doc.tid}, ${doc.date}`;
/** The day as a person says it: `2026-11-26 in Asia/Seoul (UTC+09:00), 00:00 to 24:00 · ethereum`. */
export function daySubtitle(doc) {
  const offset = doc.firstInstant.slice(23);
  return `${doc.date} in ${doc.timeZone} (UTC${offset === 'Z' ? '' : offset}), 00:00 to 24:00${doc.closed === false ? ', the day is still running' : ''}${doc.network ? ` · ${text(doc.network)}` : ''}`;
}
