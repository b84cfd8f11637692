import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createTestClient, getAddress, http, type Address, type Hex, type LocalAccount } from 'viem';
import { foundry } from 'viem/chains';
import { vixpName } from '../chain/platform-contracts.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';
import type { Store } from '../store/db.ts';
import { createLogger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import { devAccount, type ChainParts } from '../../test/support/chain-parts.ts';
import { startX402Chain, type X402Chain } from '../../test/support/x402-chain.ts';
import { addFacilitatorKey } from './facilitator-keys.ts';
import { createX402Facilitator, type X402Facilitator } from './facilitator.ts';
import type { X402Deps, X402Outcome } from './x402-deps.ts';
import { resendAfterMs } from './settle-payment.ts';

// POST /x402/settle as the facilitator answers it (docs/x402.md "Settle"), on a real anvil with the
// VIXP token and the settlement contract deployed, the platform's relayer (journal, batches, receipts)
// and the real repositories on a real SQLite store: what the resource server is answered, and what
// the money shows (the payee's and payer's balances, the transaction on chain, the settlement row).

const payTo = getAddress(devAccount(3).address);
const x402Network = `eip155:${foundry.id}`;
const network: NetworkName = 'ethereum';
const nowS = () => Math.floor(Date.now() / 1000);

let chain: X402Chain;
let parts: ChainParts;
let store: Store;
let token: Address;
let deps: X402Deps;
let facilitator: X402Facilitator;
let keyId: string;
/** The platform's clock: Date.now, or standing still at `frozenAt` (nothing ages, so nothing is resent). */
let frozenAt: number | undefined;
/** What the metrics were told: one outcome per settlement that ended. */
const outcomes: Array<[NetworkName, X402Outcome]> = [];

const client = () => parts.chains[network].client;
const balanceOf = (address: Address) => chain.balanceOf(address);
const send = (functionName: 'transfer' | 'transferWithAuthorization', args: readonly unknown[]) => chain.send(functionName, args);
const payer = (balance?: bigint) => chain.payer(balance);
const testClient = () => createTestClient({ mode: 'anvil', transport: http(parts.anvil.url) });

before(async () => {
  chain = await startX402Chain({ logger: createLogger('silent'), clock: () => frozenAt ?? Date.now(), onOutcome: (n, outcome) => outcomes.push([n, outcome]) });
  ({ parts, store, token, deps } = chain);
  facilitator = createX402Facilitator(deps);
  keyId = (await addFacilitatorKey({ keys: deps.keys, clock: Date.now }, { name: 'weather API' })).id;
});
after(async () => { await chain?.close(); });

interface Terms { value?: bigint; to?: Address; validAfter?: bigint; validBefore?: bigint; nonce?: Hex }

/** An authorization `from` signs, and the settle body a resource server posts for it (`requirements` changed as given). */
async function payment(from: LocalAccount, terms: Terms = {}, requirements: Record<string, unknown> = {}) {
  const authorization = {
    from: from.address, to: terms.to ?? payTo, value: terms.value ?? 1000n, validAfter: terms.validAfter ?? 0n,
    validBefore: terms.validBefore ?? BigInt(nowS() + 600), nonce: terms.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = await from.signTypedData!({
    domain: { name: vixpName, version: '1', chainId: foundry.id, verifyingContract: token },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message: authorization,
  });
  const accepted = {
    scheme: 'exact', network: x402Network, asset: token, amount: String(authorization.value), payTo: authorization.to, maxTimeoutSeconds: 60,
    extra: { name: vixpName, version: '1' }, ...requirements,
  };
  const text = Object.fromEntries(Object.entries(authorization).map(([k, v]) => [k, typeof v === 'bigint' ? String(v) : v]));
  return {
    authorization, signature, id: authorizationKey(network, token, from.address, authorization.nonce),
    body: { x402Version: 2, paymentPayload: { x402Version: 2, accepted, payload: { authorization: text, signature } }, paymentRequirements: accepted },
  };
}

const settle = (body: unknown, waitMs = 30_000) => facilitator.settle(body, { keyId, waitMs });
const settlementOf = (id: string) => deps.settlements.find(id);
const pendingMessage = 'sent, not mined yet: POST /settle again or GET /x402/settlements/{payer}/{nonce}';
/** A pending answer for a payment nothing was sent for yet (never "sent"). */
const unsentMessage = 'accepted, not sent yet: POST /settle again or GET /x402/settlements/{payer}/{nonce}';
const heldMessage = (validAfter: bigint) => `accepted, not sent yet: held until its validAfter (${validAfter}) has passed: POST /settle again or GET /x402/settlements/{payer}/{nonce}`;

describe('settlePayment', () => {
  test('a payment seen first is verified, accepted and settled: the payee gets the exact amount, the answer names the mined transaction; again, the same answer and nothing moves', async () => {
    const from = await payer();
    const { body, id } = await payment(from, { value: 1234n });
    const [payeeBefore, outcomesBefore] = [await balanceOf(payTo), outcomes.length];
    // The platform's clock standing still: the settlement never ages into a resend, the settle that accepts it sends it.
    frozenAt = Date.now();
    const answer = await settle(body, 10_000).finally(() => { frozenAt = undefined; });
    assert.equal(answer.pending, false);
    const transaction = answer.response.transaction as Hex;
    assert.deepEqual(answer.response, { success: true, payer: from.address, transaction, network: x402Network, amount: '1234' });
    assert.equal((await client().getTransactionReceipt({ hash: transaction })).status, 'success');
    assert.equal(await balanceOf(payTo), payeeBefore + 1234n);
    assert.equal(await balanceOf(from.address), 10_000n - 1234n);
    const record = await settlementOf(id);
    assert.deepEqual([record?.status, record?.txHash, record?.amount, record?.keyId], ['settled', transaction, '1234', keyId]);
    assert.deepEqual(outcomes.slice(outcomesBefore), [[network, 'settled']]);

    const again = await settle(body);
    assert.deepEqual(again, answer);
    assert.equal(await balanceOf(payTo), payeeBefore + 1234n, 'settled once');
    assert.equal(await balanceOf(from.address), 10_000n - 1234n);
  });

  test('a malformed request is refused with the parser\'s reason, the network it names and its payer; nothing is recorded', async () => {
    const unnamed = await settle('nonsense');
    assert.equal(unnamed.pending, false);
    const { errorMessage, ...refusal } = unnamed.response;
    assert.deepEqual(refusal, { success: false, errorReason: 'invalid_payload', transaction: '', network: '' });
    assert.ok(errorMessage);
    assert.equal('payer' in unnamed.response, false, 'no payer named, none answered');
    assert.deepEqual([(await settle(null)).response.errorReason, (await settle(null)).response.network], ['invalid_payload', '']);

    const from = await payer(0n);
    const { body, id } = await payment(from);
    const old = await settle({ ...body, x402Version: 1 });
    assert.deepEqual([old.response.success, old.response.errorReason, old.response.network, old.response.transaction], [false, 'invalid_x402_version', x402Network, '']);
    assert.equal(await settlementOf(id), undefined);
  });

  test('a network not ours, or an accepted copy naming another, is refused invalid_network with the network asked; nothing is recorded', async () => {
    const from = await payer();
    const { body, id } = await payment(from, {}, { network: 'eip155:1' });
    const answer = await settle(body);
    assert.deepEqual(answer, {
      pending: false,
      response: { success: false, errorReason: 'invalid_network', errorMessage: 'network eip155:1 is not settled here (GET /x402/supported)', transaction: '', network: 'eip155:1', payer: from.address },
    });
    const apart = await payment(from);
    const accepted = { ...apart.body, paymentPayload: { ...apart.body.paymentPayload, accepted: { ...apart.body.paymentPayload.accepted, network: 'eip155:1' } } };
    const refused = await settle(accepted);
    assert.deepEqual([refused.response.errorReason, refused.response.network, refused.response.payer], ['invalid_network', x402Network, from.address]);
    assert.equal(await settlementOf(id), undefined);
    assert.equal(await settlementOf(apart.id), undefined);
    assert.equal(await balanceOf(from.address), 10_000n);
  });

  test('a payment verify refuses is answered its reason and message, with its payer; nothing is accepted, nothing moves', async () => {
    const from = await payer();
    const zero = await payment(from, { value: 0n });
    assert.deepEqual((await settle(zero.body)).response, {
      success: false, errorReason: 'invalid_exact_evm_authorization_value', errorMessage: 'the amount must be above 0', transaction: '', network: x402Network, payer: from.address,
    });
    // Not due yet, to another payTo than required: the reason is verify's, which gives no message.
    const elsewhere = await payment(from, { validAfter: BigInt(nowS() + 120) }, { payTo: getAddress(devAccount(4).address) });
    assert.deepEqual((await settle(elsewhere.body)).response, {
      success: false, errorReason: 'invalid_exact_evm_recipient_mismatch', errorMessage: 'verification failed', transaction: '', network: x402Network, payer: from.address,
    });
    assert.equal(await settlementOf(zero.id), undefined);
    assert.equal(await settlementOf(elsewhere.id), undefined);
    assert.equal(await balanceOf(from.address), 10_000n);
  });

  test('the accepted authorization presented with other requirements is refused with the matching reason, never answered its transaction', async () => {
    const from = await payer();
    const { body, id } = await payment(from, { value: 500n });
    assert.equal((await settle(body)).response.success, true);
    const payeeAfter = await balanceOf(payTo);
    const other = getAddress(devAccount(4).address);
    const withRequirements = (change: Record<string, unknown>) => ({ ...body, paymentRequirements: { ...body.paymentRequirements, ...change } });
    assert.deepEqual((await settle(withRequirements({ payTo: other }))).response, {
      success: false, errorReason: 'invalid_exact_evm_recipient_mismatch', errorMessage: 'this authorization pays another payTo', transaction: '', network: x402Network, payer: from.address,
    });
    assert.deepEqual((await settle(withRequirements({ amount: '499' }))).response, {
      success: false, errorReason: 'invalid_exact_evm_payload_authorization_value_mismatch', errorMessage: 'this authorization pays another amount or asset', transaction: '', network: x402Network, payer: from.address,
    });
    assert.equal((await settlementOf(id))?.status, 'settled');
    assert.equal(await balanceOf(payTo), payeeAfter, 'nothing moved again');
  });

  test('a payment not mined within the wait is answered pending with the transaction it was sent in; asked again once mined, that transaction', async () => {
    const from = await payer();
    const { body, id } = await payment(from, { value: 700n });
    const payeeBefore = await balanceOf(payTo);
    await testClient().setAutomine(false);
    let pending;
    try {
      // Waits until the batch is sent (journaled with its hash) and not mined.
      for (;;) {
        pending = await settle(body, 300);
        if (pending.response.transaction !== '') break;
      }
      assert.equal(pending.pending, true);
      assert.equal((await client().getTransaction({ hash: pending.response.transaction as Hex })).blockNumber, null, 'sent, not mined');
      assert.equal((await settlementOf(id))?.status, 'accepted');
      await testClient().mine({ blocks: 1 });
    } finally {
      await testClient().setAutomine(true);
    }
    const transaction = pending.response.transaction as Hex;
    assert.deepEqual(pending.response, { success: false, errorReason: 'settlement_pending', errorMessage: pendingMessage, payer: from.address, transaction, network: x402Network });
    const settled = await settle(body);
    assert.deepEqual(settled, { pending: false, response: { success: true, payer: from.address, transaction, network: x402Network, amount: '700' } });
    assert.equal(await balanceOf(payTo), payeeBefore + 700n);
  });

  test('a payment held until its validAfter is answered pending without a transaction; the payer emptying his balance meanwhile fails it: insufficient_funds, nothing sent', async () => {
    const from = await payer(900n);
    const validAfter = BigInt(nowS() + 3);
    const { body, id } = await payment(from, { value: 900n, validAfter });
    const held = await settle(body, 200);
    assert.deepEqual(held, {
      pending: true, response: { success: false, errorReason: 'settlement_pending', errorMessage: heldMessage(validAfter), payer: from.address, transaction: '', network: x402Network },
    });
    // The payer moves his tokens away (another authorization of his, sent by anyone) before it is due.
    const away = await payment(from, { value: 900n, to: getAddress(devAccount(5).address) });
    const a = away.authorization;
    await send('transferWithAuthorization', [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, away.signature]);
    const failed = await settle(body, 30_000);
    assert.deepEqual(failed, {
      pending: false, response: { success: false, errorReason: 'insufficient_funds', errorMessage: 'the settlement failed', transaction: '', network: x402Network, payer: from.address },
    });
    assert.equal((await settlementOf(id))?.status, 'failed');
    assert.equal(await balanceOf(from.address), 0n);
  });

  test('a payment held at acceptance is sent by the settle waiting on it as soon as it is due (before it is 5 s old on the platform\'s clock), in a block after validAfter', async () => {
    const from = await payer();
    const validAfter = BigInt(nowS() + 1);
    const { body, id } = await payment(from, { value: 600n, validAfter });
    const held = await settle(body, 100);
    assert.equal(held.response.errorMessage, heldMessage(validAfter));
    assert.equal(await deps.authorizations.find(id), undefined, 'held: nothing reserved');
    const dueMs = Number(validAfter + 1n) * 1000;
    while (Date.now() <= dueMs) await new Promise((resolve) => setTimeout(resolve, 50));
    const payeeBefore = await balanceOf(payTo);
    // The platform's clock stands at the due second: the settlement is under 5 s old, so only being due sends it.
    frozenAt = dueMs;
    try {
      const sent = await settle(body, 20_000);
      assert.equal(sent.response.success, true, JSON.stringify(sent));
      const receipt = await client().getTransactionReceipt({ hash: sent.response.transaction as Hex });
      assert.ok((await client().getBlock({ blockNumber: receipt.blockNumber })).timestamp > validAfter);
      assert.equal(await balanceOf(payTo), payeeBefore + 600n);
    } finally {
      frozenAt = undefined;
    }
  });

  test('rows an earlier version accepted and this one would refuse are failed by the sweep, nothing sent: a validAfter past 2^53 (beyond the hold), a validBefore already passed', async () => {
    const from = await payer();
    const beyond = await payment(from, { value: 100n, validAfter: 2n ** 53n, validBefore: 2n ** 53n + 600n });
    const expired = await payment(from, { value: 100n, validBefore: BigInt(nowS() - 1) });
    const old = Date.now() - 60_000;
    for (const p of [beyond, expired]) {
      const a = p.authorization;
      assert.equal(await deps.settlements.accept({
        id: p.id, nonce: a.nonce, network, payer: from.address, payTo, asset: token, amount: String(a.value),
        validBefore: String(a.validBefore), validAfter: String(a.validAfter), signature: p.signature, keyId, createdAt: old, updatedAt: old,
      }), true);
    }
    const sent = await client().getTransactionCount({ address: devAccount(2).address });
    await facilitator.sweep();
    assert.deepEqual([(await settlementOf(beyond.id))?.status, (await settlementOf(beyond.id))?.errorReason], ['failed', 'invalid_exact_evm_payload_authorization_valid_after']);
    assert.deepEqual([(await settlementOf(expired.id))?.status, (await settlementOf(expired.id))?.errorReason], ['failed', 'invalid_exact_evm_payload_authorization_valid_before']);
    assert.equal(await deps.authorizations.find(beyond.id), undefined);
    assert.equal(await deps.authorizations.find(expired.id), undefined);
    assert.equal(await client().getTransactionCount({ address: devAccount(2).address }), sent, 'no transaction: no gas');
    const answered = await settle(beyond.body, 100);
    assert.deepEqual([answered.pending, answered.response.errorReason], [false, 'invalid_exact_evm_payload_authorization_valid_after']);
  });

  test('a settlement accepted and never sent (its instance crashed) is sent by the next settle of it once 5 s old on the platform\'s clock; younger, it is left to the instance carrying it', async () => {
    const from = await payer();
    const crashed = await payment(from, { value: 300n });
    const recent = await payment(from, { value: 400n });
    const now = Date.now();
    const accept = (p: typeof crashed, at: number) => deps.settlements.accept({
      id: p.id, nonce: p.authorization.nonce, network, payer: from.address, payTo, asset: token, amount: String(p.authorization.value),
      validBefore: String(p.authorization.validBefore), validAfter: '0', signature: p.signature, keyId, createdAt: at, updatedAt: at,
    });
    assert.equal(await accept(crashed, now - resendAfterMs), true);
    assert.equal(await accept(recent, now - resendAfterMs + 1), true);
    const payeeBefore = await balanceOf(payTo);
    frozenAt = now;
    try {
      const left = await settle(recent.body, 300);
      assert.deepEqual(left, {
        pending: true, response: { success: false, errorReason: 'settlement_pending', errorMessage: unsentMessage, payer: from.address, transaction: '', network: x402Network },
      });
      assert.equal(await deps.authorizations.find(recent.id), undefined, 'nothing reserved or sent for it');

      const sent = await settle(crashed.body, 10_000);
      const transaction = sent.response.transaction as Hex;
      assert.deepEqual(sent, { pending: false, response: { success: true, payer: from.address, transaction, network: x402Network, amount: '300' } });
      assert.equal((await client().getTransactionReceipt({ hash: transaction })).status, 'success');
      assert.equal(await balanceOf(payTo), payeeBefore + 300n);
    } finally {
      frozenAt = undefined;
    }
  });

  describe('a settlement accepted before, whose authorization the relayer holds (as its recovery leaves it after a crash)', () => {
    /** The payment accepted, and its authorization row as the relayer writes it: `status`, in transaction `txHash`. */
    async function acceptedWith(p: Awaited<ReturnType<typeof payment>>, status: 'submitted' | 'used' | 'expired', txHash: Hex | null) {
      const now = Date.now();
      const { authorization: a } = p;
      await deps.settlements.accept({
        id: p.id, nonce: a.nonce, network, payer: a.from, payTo, asset: token, amount: String(a.value),
        validBefore: String(a.validBefore), validAfter: '0', signature: p.signature, keyId, createdAt: now, updatedAt: now,
      });
      await store.db.insertInto('authorizations').values({
        nonce: p.id, chain_nonce: a.nonce, network, reference: `x402:${p.id}`, contract_address: token, from_address: a.from, to_address: payTo,
        value: String(a.value), valid_before: Number(a.validBefore), from_block: 0, status, tx_hash: txHash, cancel_tx_hash: null, created_at: now, updated_at: now,
      }).execute();
    }
    /** Executes `p`'s authorization on chain (as the relayer's batch did): its transaction. */
    const execute = (p: Awaited<ReturnType<typeof payment>>) => {
      const a = p.authorization;
      return send('transferWithAuthorization', [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, p.signature]);
    };

    test('used on chain: answered settled with its transaction at once, even with no time to wait', async () => {
      const from = await payer();
      const p = await payment(from, { value: 250n });
      const transaction = await execute(p);
      await acceptedWith(p, 'used', transaction);
      const outcomesBefore = outcomes.length;
      assert.deepEqual(await settle(p.body, 0), { pending: false, response: { success: true, payer: from.address, transaction, network: x402Network, amount: '250' } });
      assert.deepEqual([(await settlementOf(p.id))?.status, (await settlementOf(p.id))?.txHash], ['settled', transaction]);
      assert.deepEqual(outcomes.slice(outcomesBefore), [[network, 'settled']]);
      assert.equal(await balanceOf(from.address), 10_000n - 250n, 'moved once, by its own transaction');
    });

    test('expired unexecuted: answered failed valid_before at once, nothing moved', async () => {
      const from = await payer();
      const p = await payment(from, { value: 250n });
      await acceptedWith(p, 'expired', null);
      assert.deepEqual(await settle(p.body, 0), {
        pending: false,
        response: { success: false, errorReason: 'invalid_exact_evm_payload_authorization_valid_before', errorMessage: 'the settlement failed', transaction: '', network: x402Network, payer: from.address },
      });
      assert.equal(await balanceOf(from.address), 10_000n);
    });

    test('in flight (another instance sent it): answered settled once its transaction is mined, within the wait', async () => {
      const from = await payer();
      const p = await payment(from, { value: 260n });
      await acceptedWith(p, 'submitted', null);
      const answer = settle(p.body, 20_000);
      // The other instance's batch is mined and recorded meanwhile.
      const transaction = await execute(p);
      await store.db.updateTable('authorizations').set({ status: 'used', tx_hash: transaction, updated_at: Date.now() }).where('nonce', '=', p.id).execute();
      assert.deepEqual(await answer, { pending: false, response: { success: true, payer: from.address, transaction, network: x402Network, amount: '260' } });
      assert.equal(await balanceOf(from.address), 10_000n - 260n);
    });
  });
});
