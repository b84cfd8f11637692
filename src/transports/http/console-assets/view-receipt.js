// A receipt as a page: whether it is valid (the console's verify: signature on our DID registry, a
// system issuer, the transfer on chain, docs/receipts.md) and what it proves in a sentence, then its
// facts, its credential a click away. And a transaction as the chain has it.
import { amount, element, facts, more, section, short, table, transactionLink, verdict } from './view-kit.js';

const kindLabels = { payment: 'Payment', cancellation: 'Refund', reward_claim: 'Reward claim', x402: 'x402 payment' };

/** `20261123163109` (yyyyMMddHHmmss in TIME_ZONE) → `2026-11-23 16:31:09`. */
const approvalTime = (d) => (d && d.length === 14 ? `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)} ${d.slice(8, 10)}:${d.slice(10, 12)}:${d.slice(12)}` : d);

/** What the receipt states, in words. */
function proves(subject) {
  // Addresses shortened in the sentence; whole under "The credential".
  const s = { ...subject, from: short(subject.from).textContent, to: short(subject.to).textContent };
  const sum = `${s.amount} ${s.token}`;
  if (s.kind === 'payment') return `${s.from} paid ${sum} to store ${s.tid} (tran_no ${s.tranNo}, approval ${s.approvalNo}).`;
  if (s.kind === 'cancellation') return `Store ${s.tid} refunded ${sum} to ${s.to} (tran_no ${s.tranNo}, of the payment approved as ${s.paymentApprovalNo}).`;
  if (s.kind === 'reward_claim') return `Store ${s.tid} paid reward ${s.rewardId} of ${sum} to ${s.to}.`;
  return `${s.from} paid ${sum} to ${s.to} (x402, nonce ${s.nonce}).`;
}

async function verification(receipt) {
  const response = await fetch('/console/api/receipts/verify', {
    method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(receipt),
  });
  const body = await response.json();
  if (!response.ok) return { verified: false, checks: [{ check: 'verify', ok: false, detail: body.error?.message ?? String(response.status) }] };
  return body;
}

async function receiptCard(receipt, index) {
  const s = receipt.credentialSubject;
  const checked = await verification(receipt);
  const failed = checked.checks.find((c) => !c.ok);
  const node = section(`receipt-${index}`, `${kindLabels[s.kind] ?? s.kind} receipt`);
  node.classList.add('receipt');
  node.appendChild(verdict(checked.verified, checked.verified ? 'Valid receipt' : `Not valid: ${failed?.check}`,
    checked.verified ? `It proves: ${proves(s)} Signed by the platform's issuer; the transaction is mined and carries this transfer.` : failed?.detail));
  // The checks a click away, open when one failed.
  const passed = checked.checks.filter((c) => c.ok).length;
  const how = element('details', undefined, 'more');
  how.open = !checked.verified;
  how.appendChild(element('summary', `How it was checked: ${passed} of ${checked.checks.length} checks passed`));
  const checks = element('ul', undefined, 'checks');
  for (const c of checked.checks) checks.appendChild(element('li', `${c.ok ? '✓' : '✗'} ${c.check}: ${c.detail}`, c.ok ? 'yes' : 'no'));
  how.appendChild(checks);
  node.appendChild(how);
  node.appendChild(facts([
    ['Amount', amount(s.amount, s.token)],
    ['Store', s.tid || '–'],
    [s.rewardId ? 'Reward' : s.nonce ? 'Nonce' : 'tran_no', element('span', s.rewardId ?? s.nonce ?? s.tranNo, 'mono wrap')],
    ['Approval no.', s.approvalNo ?? '–'],
    ['When', approvalTime(s.approvalDate)],
    ['From', short(s.from)],
    ['To', short(s.to)],
    ['Transaction', transactionLink(s.network, s.transactionId)],
    ['Currency amount', s.exchangeAmount ? `${s.exchangeAmount} ${s.exchangeCurrency}` : '–'],
  ]));
  const credential = more('The credential', [
    ['Issuer', element('span', receipt.issuer?.id, 'mono wrap')], ['Issued', receipt.issuanceDate], ['Subject', element('span', s.id, 'mono wrap')],
    ['Network', `${s.network} (chain ${s.chainId})`], ['Token contract', element('span', s.tokenContract, 'mono wrap')],
    ['From', element('span', s.from, 'mono wrap')], ['To', element('span', s.to, 'mono wrap')],
    ['Transaction', element('span', s.transactionId, 'mono wrap')], ['Proof', receipt.proof?.type],
  ]);
  credential.appendChild(element('pre', receipt.proof?.jwt, 'jwt'));
  node.appendChild(credential);
  return node;
}

export async function receiptPage(doc) {
  if (doc.receipts.length === 0) return [verdict(false, 'No receipt', 'This record has no receipt yet.')];
  return Promise.all(doc.receipts.map(receiptCard));
}

export const receiptSubtitle = (doc) => (doc.receipts.length > 1
  ? `${doc.receipts.length} receipts: the payment's and its refunds', each checked on chain` : 'Checked on chain as it is shown');
export const receiptTitle = (doc) => `Receipt${doc.receipts.length > 1 ? 's' : ''} of ${doc.tid} ${doc.tranNo ?? doc.rewardId}`;

export function transactionPage(doc) {
  const ok = doc.status === 'success';
  return [
    verdict(ok, ok ? `Succeeded in block ${doc.blockNumber}` : `Reverted in block ${doc.blockNumber}`, `${doc.transfers.length} token transfer${doc.transfers.length === 1 ? '' : 's'}, ${BigInt(doc.gasUsed).toLocaleString('en-US')} gas.`),
    section('transfers', 'Token transfers', table([
      { label: 'Amount', cell: (t) => element('span', t.amount, 'amount'), className: 'num' },
      { label: 'From', cell: (t) => short(t.from) },
      { label: 'To', cell: (t) => short(t.to) },
      { label: 'Token', cell: (t) => short(t.token) },
    ], doc.transfers, 'lines')),
    section('about', undefined, facts([
      ['Hash', element('span', doc.hash, 'mono wrap')], ['Network', `${doc.network} (chain ${doc.chainId})`],
      ['From', element('span', doc.from, 'mono wrap')], ['To', element('span', doc.to, 'mono wrap')],
    ])),
  ];
}
