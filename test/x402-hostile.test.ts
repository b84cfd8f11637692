/**
 * The x402 facilitator under hostile input (issue 27): every number exact, every answer true, no gas
 * paid for nothing. One platform for the whole file; authorizations are signed here (EIP-712
 * `TransferWithAuthorization`) so that each field can be what an attacker chooses.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { toHex, type Address, type Hex } from 'viem';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Writable } from 'node:stream';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { fundedPayer, vixpBalanceOf } from './support/x402-resource.ts';
import { addFacilitatorKey } from '../src/x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../src/store/facilitator-key-repository.ts';
import { createX402Facilitator } from '../src/x402/facilitator.ts';
import { createAuthorizationRepository } from '../src/store/authorization-repository.ts';
import { createX402SettlementRepository } from '../src/store/x402-settlement-repository.ts';
import { createSettlementTokenRepository } from '../src/store/settlement-token-repository.ts';
import { createLogger } from '../src/shared/logger.ts';
import type { NetworkName } from '../src/shared/networks.ts';
import { waitFor } from './support/wait-for.ts';
import { authorizationKey } from '../src/chain/mined-receipt.ts';

let t: TestPlatform;
let facilitatorUrl: string;
let apiKey: string;
let keyId: string;
const payee = privateKeyToAccount(generatePrivateKey()).address;

const x402Network = (network: NetworkName) => `eip155:${t.platform.chains[network].chainId}`;
const vixpOf = (network: NetworkName) => t.platform.contracts[network].vixpToken;
const balance = (address: Address, network: NetworkName = 'ethereum') => vixpBalanceOf(t.platform, address, network);
const chainTxCount = async () => Number((await t.platform.store.db.selectFrom('chain_txs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const settlementRows = (nonce: string) => t.platform.store.db.selectFrom('x402_settlements').selectAll().where('nonce', '=', nonce).execute();
const newNonce = (): Hex => toHex(randomBytes(32));
const inAnHour = () => String(Math.floor(Date.now() / 1000) + 3600);

const funded = (amount = '10', network: NetworkName = 'ethereum') => fundedPayer(t.platform, amount, network);

interface Signed {
  network?: NetworkName;
  to?: Address;
  /** Base units, as signed. */
  value: bigint;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
}

/**
 * A `{ x402Version, paymentPayload, paymentRequirements }` body whose authorization `account` signed
 * with `signed`; the requirements (and `accepted`) ask for what was signed unless `requirements` says otherwise.
 */
async function payment(account: PrivateKeyAccount, signed: Signed, requirements: Record<string, unknown> = {}, accepted: Record<string, unknown> = {}) {
  const network = signed.network ?? 'ethereum';
  const message = {
    from: account.address, to: signed.to ?? payee, value: signed.value, validAfter: signed.validAfter ?? 0n,
    validBefore: signed.validBefore ?? BigInt(inAnHour()), nonce: signed.nonce ?? newNonce(),
  };
  const signature = await account.signTypedData({
    domain: { name: 'VIXP', version: '1', chainId: t.platform.chains[network].chainId, verifyingContract: vixpOf(network) },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization', message,
  });
  const paymentRequirements = {
    scheme: 'exact', network: x402Network(network), asset: vixpOf(network), amount: signed.value.toString(), payTo: message.to,
    maxTimeoutSeconds: 120, extra: { name: 'VIXP', version: '1' }, ...requirements,
  };
  const authorization = {
    from: message.from, to: message.to, value: message.value.toString(), validAfter: message.validAfter.toString(),
    validBefore: message.validBefore.toString(), nonce: message.nonce,
  };
  return {
    x402Version: 2,
    paymentPayload: {
      x402Version: 2, accepted: { ...paymentRequirements, ...accepted }, payload: { authorization, signature },
      resource: { url: 'http://example.test/weather', description: '', mimeType: '' },
    },
    paymentRequirements,
    nonce: message.nonce,
  };
}

const isJsonObject = (text: string) => {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
};

async function facilitator(path: string, body?: unknown, raw?: string) {
  const response = await fetch(`${facilitatorUrl}${path}`, {
    method: body === undefined && raw === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    ...((body !== undefined || raw !== undefined) && { body: raw ?? JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  let parsed: any;
  try { parsed = JSON.parse(text); } catch { parsed = text; }
  return { status: response.status, body: parsed };
}

before(async () => {
  t = await startTestPlatform();
  facilitatorUrl = `${await t.app.listen({ port: 0, host: '127.0.0.1' })}/x402`;
  const key = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(t.platform.store.db), clock: Date.now }, { name: 'hostile', ratePerSecond: 100_000 });
  apiKey = key.key;
  keyId = key.id;
});
after(async () => {
  await t?.stop();
});

describe('x402 facilitator under hostile input', () => {
  test('a validBefore above 2^53 (or 2^64) settles with the signed value: exact in the store, no reverted transaction, its status answered', async () => {
    for (const validBefore of [2n ** 53n + 1n, 99999999999999999999n, 2n ** 256n - 1n]) {
      const payer = await funded('1');
      const body = await payment(payer, { value: 1000n, validBefore });
      const before = await balance(payee);
      const verified = await facilitator('/verify', body);
      assert.deepEqual([verified.status, verified.body.isValid], [200, true], `verify ${validBefore}`);
      const settled = await facilitator('/settle', body);
      assert.deepEqual([settled.status, settled.body.success, settled.body.errorReason], [200, true, undefined], `settle ${validBefore}: ${JSON.stringify(settled.body)}`);
      assert.equal(await balance(payee), before + 1000n);
      const [row] = await settlementRows(body.nonce);
      assert.equal(String(row?.valid_before), validBefore.toString(), 'stored as signed');
      const status = await facilitator(`/settlements/${payer.address}/${body.nonce}`);
      assert.deepEqual([status.status, status.body.status, status.body.transaction], [200, 'settled', settled.body.transaction]);
    }
  });

  test('paymentRequirements.amount in any spelling but the canonical one is refused at verify and settle, and never settles later', async () => {
    const payer = await funded('1');
    const txs = await chainTxCount();
    for (const amount of ['01000', ' 1000', '1000 ', '0x3e8', '+1000', '\n1000']) {
      const body = await payment(payer, { value: 1000n }, { amount });
      const verified = await facilitator('/verify', body);
      assert.deepEqual([verified.status, verified.body.isValid, verified.body.invalidReason], [200, false, 'invalid_payment_requirements'], JSON.stringify(amount));
      const settled = await facilitator('/settle', body);
      assert.deepEqual([settled.status, settled.body.success, settled.body.errorReason, settled.body.transaction],
        [200, false, 'invalid_payment_requirements', ''], JSON.stringify(amount));
      assert.deepEqual(await settlementRows(body.nonce), [], 'nothing accepted: nothing can execute later');
      assert.equal((await facilitator(`/settlements/${payer.address}/${body.nonce}`)).status, 404);
    }
    assert.equal(await chainTxCount(), txs);
    assert.equal(await balance(payer.address), 10n ** 18n);
  });

  test('malformed amounts and addresses answer 200 with the reason, never 500', async () => {
    const payer = await funded('1');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ amount: '1e3' }, 'invalid_payment_requirements'], [{ amount: '1000.0' }, 'invalid_payment_requirements'],
      [{ amount: '\' OR 1=1--' }, 'invalid_payment_requirements'], [{ amount: (2n ** 256n).toString() }, 'invalid_payment_requirements'],
      [{ payTo: 'not-an-address' }, 'invalid_payment_requirements'], [{ asset: '0x1234' }, 'invalid_payment_requirements'],
      [{ asset: 'not-an-address' }, 'invalid_payment_requirements'],
    ];
    for (const [requirements, reason] of cases) {
      const body = await payment(payer, { value: 1000n }, requirements);
      const verified = await facilitator('/verify', body);
      assert.deepEqual([verified.status, verified.body.isValid, verified.body.invalidReason], [200, false, reason], JSON.stringify(requirements));
      const settled = await facilitator('/settle', body);
      assert.deepEqual([settled.status, settled.body.success, settled.body.errorReason], [200, false, reason], JSON.stringify(requirements));
    }
    // The authorization's own numbers: the same canonical form, refused as invalid_payload.
    const body = await payment(payer, { value: 1000n });
    for (const value of ['01000', '1e3', '0x3e8', ' 1000']) {
      const spelled = structuredClone(body);
      spelled.paymentPayload.payload.authorization.value = value;
      const verified = await facilitator('/verify', spelled);
      assert.deepEqual([verified.status, verified.body.isValid, verified.body.invalidReason], [200, false, 'invalid_payload'], value);
    }
  });

  test('an authorization settled on one network, presented for another (or with accepted.network apart): refused, not answered its transaction', async () => {
    const payer = await funded('1');
    const body = await payment(payer, { value: 1000n });
    const settled = await facilitator('/settle', body);
    assert.equal(settled.body.success, true, JSON.stringify(settled.body));
    // Verify refuses it from now on: its nonce is used.
    const reverified = await facilitator('/verify', body);
    assert.deepEqual([reverified.body.isValid, reverified.body.invalidReason], [false, 'invalid_exact_evm_nonce_already_used']);
    const elsewhere = [
      { ...body, paymentRequirements: { ...body.paymentRequirements, network: x402Network('optimism') } },
      { ...body, paymentRequirements: { ...body.paymentRequirements, network: 'eip155:1' } },
      { ...body, paymentPayload: { ...body.paymentPayload, accepted: { ...body.paymentPayload.accepted, network: x402Network('optimism') } } },
    ];
    for (const replay of elsewhere) {
      const answer = await facilitator('/settle', replay);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.success, false, JSON.stringify(answer.body));
      assert.equal(answer.body.transaction, '');
      assert.equal((await facilitator('/verify', replay)).body.isValid, false);
    }
  });

  test('a nonce is the authorizer\'s: another payer, or the same payer on another network, may use it', async () => {
    const [a, b] = [await funded('1'), await funded('1')];
    const first = await payment(a, { value: 1000n });
    assert.equal((await facilitator('/settle', first)).body.success, true);
    // The same authorization again: refused at verify, its nonce is used.
    const again = await facilitator('/verify', first);
    assert.deepEqual([again.body.isValid, again.body.invalidReason], [false, 'invalid_exact_evm_nonce_already_used']);
    const before = await balance(payee);
    const sameNonce = await payment(b, { value: 1000n, nonce: first.nonce });
    assert.equal((await facilitator('/verify', sameNonce)).body.isValid, true);
    const byB = await facilitator('/settle', sameNonce);
    assert.deepEqual([byB.body.success, byB.body.payer], [true, b.address], JSON.stringify(byB.body));
    assert.equal(await balance(payee), before + 1000n);
    await t.platform.wallet.mint('optimism', { to: a.address, amount: '1' });
    const onOptimism = await payment(a, { value: 1000n, nonce: first.nonce, network: 'optimism' });
    const byAElsewhere = await facilitator('/settle', onOptimism);
    assert.equal(byAElsewhere.body.success, true, JSON.stringify(byAElsewhere.body));
    assert.equal(await balance(payee, 'optimism'), 1000n);
    // Each is looked up as its own.
    assert.equal((await facilitator(`/settlements/${b.address}/${first.nonce}`)).body.transaction, byB.body.transaction);
  });

  test('a validAfter in the past settles as signed (the batch carries it); a window never open, or a validBefore a batch cannot carry, is refused at verify and settle', async () => {
    const payer = await funded('1');
    const body = await payment(payer, { value: 1000n, validAfter: 1n });
    const settled = await facilitator('/settle', body);
    assert.deepEqual([settled.body.success, settled.body.errorReason], [true, undefined], JSON.stringify(settled.body));
    const row = await t.platform.store.db.selectFrom('x402_settlements').select('valid_after').where('payer', '=', payer.address).executeTakeFirstOrThrow();
    assert.equal(row.valid_after, '1');
    const refusals: [Partial<Parameters<typeof payment>[1]>, string][] = [
      [{ validAfter: BigInt(inAnHour()), validBefore: BigInt(inAnHour()) }, 'invalid_exact_evm_payload_authorization_valid_after'],
      [{ validBefore: 2n ** 200n }, 'invalid_exact_evm_payload_authorization_valid_before'],
    ];
    for (const [signed, reason] of refusals) {
      const refused = await payment(await funded('1'), { value: 1000n, ...signed });
      const verified = await facilitator('/verify', refused);
      assert.deepEqual([verified.body.isValid, verified.body.invalidReason], [false, reason]);
      const answered = await facilitator('/settle', refused);
      assert.deepEqual([answered.body.success, answered.body.errorReason, answered.body.transaction], [false, reason, '']);
    }
  });

  test('a zero amount is refused at verify and settle: no transaction for nothing', async () => {
    const broke = privateKeyToAccount(generatePrivateKey());
    const txs = await chainTxCount();
    const body = await payment(broke, { value: 0n });
    const verified = await facilitator('/verify', body);
    assert.deepEqual([verified.status, verified.body.isValid, verified.body.invalidReason], [200, false, 'invalid_exact_evm_authorization_value']);
    const settled = await facilitator('/settle', body);
    assert.deepEqual([settled.body.success, settled.body.errorReason, settled.body.transaction], [false, 'invalid_exact_evm_authorization_value', '']);
    assert.equal(await chainTxCount(), txs);
  });

  test('the sweep survives any stored row: bad rows are failed or skipped, the good one behind them is settled', async () => {
    const logged: string[] = [];
    const logger = createLogger('warn', new Writable({ write: (line: Buffer, _encoding, done) => { logged.push(line.toString()); done(); } }));
    const { store } = t.platform;
    const settlements = createX402SettlementRepository(store.db);
    const sweeper = createX402Facilitator({
      chains: t.platform.chains, contracts: t.platform.contracts, relayer: t.platform.relayer, clock: Date.now, logger,
      authorizations: createAuthorizationRepository(store.db, store.dialect === 'sqlite' ? 'process' : 'row'),
      settlements, keys: createFacilitatorKeyRepository(store.db), settlementTokens: createSettlementTokenRepository(store.db),
    });
    const row = (nonce: string, fields: Record<string, string>) => ({
      id: `${fields.network ?? 'ethereum'}:x:y:${nonce}`, nonce, network: 'ethereum', payer: privateKeyToAccount(generatePrivateKey()).address, pay_to: payee, asset: vixpOf('ethereum'), amount: '1', valid_before: inAnHour(),
      signature: `0x${'11'.repeat(65)}`, key_id: keyId, status: 'accepted', tx_hash: null, error_reason: null, created_at: 1, updated_at: 1, ...fields,
    });
    const bad = [
      row(newNonce(), { valid_before: 'soon' }), row(newNonce(), { amount: '1e3' }), row(newNonce(), { network: 'atlantis' }),
      row(newNonce(), { payer: 'garbage' }), row(newNonce(), { valid_before: '99999999999999999999999999999' }), row('not-a-nonce', {}),
    ];
    for (const r of bad) await store.db.insertInto('x402_settlements').values(r as never).execute();
    // A good one accepted behind them and never carried (as after a crash).
    const payer = await funded('1');
    const good = await payment(payer, { value: 1000n });
    const authorization = good.paymentPayload.payload.authorization;
    const goodId = authorizationKey('ethereum', vixpOf('ethereum'), payer.address, good.nonce);
    await settlements.accept({
      id: goodId, nonce: good.nonce, network: 'ethereum', payer: payer.address, payTo: payee, asset: vixpOf('ethereum'), amount: '1000',
      validBefore: authorization.validBefore, signature: good.paymentPayload.payload.signature, keyId, createdAt: 2, updatedAt: 2,
    });
    const before = await balance(payee);
    await sweeper.sweep(0);
    await waitFor(async () => (await settlementRows(good.nonce)).find((r) => r.id === goodId)?.status === 'settled', { timeoutMs: 30_000, message: 'the good row behind the bad ones is settled' });
    assert.equal(await balance(payee), before + 1000n);
    assert.ok(logged.length > 0, 'each bad row is logged');
    // Run again: still no throw, and the bad rows no longer block anything.
    await sweeper.sweep(0);
    await sql`delete from x402_settlements where status = 'accepted' and created_at = 1`.execute(store.db);
  });

  test('a seeded fuzz of /x402/verify and /x402/settle: several hundred payloads, no 500, no hang, the platform alive', async () => {
    const broke = privateKeyToAccount(generatePrivateKey());
    const base = await payment(broke, { value: 1000n });
    const paths = [
      ['x402Version'], ['paymentPayload'], ['paymentRequirements'], ['paymentPayload', 'x402Version'], ['paymentPayload', 'accepted'],
      ['paymentPayload', 'payload'], ['paymentPayload', 'payload', 'signature'], ['paymentPayload', 'payload', 'authorization'],
      ...['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'].map((f) => ['paymentPayload', 'payload', 'authorization', f]),
      ...['scheme', 'network', 'asset', 'amount', 'payTo', 'maxTimeoutSeconds', 'extra'].map((f) => ['paymentRequirements', f]),
      ...['network', 'amount', 'asset'].map((f) => ['paymentPayload', 'accepted', f]),
    ];
    const hostileValue = fc.oneof(
      fc.string({ maxLength: 80 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(-1),
      fc.bigInt({ min: -(2n ** 300n), max: 2n ** 300n }).map(String), fc.bigInt({ min: 0n, max: 2n ** 260n }).map((v) => `0x${v.toString(16)}`),
      fc.constantFrom('1e3', '1000.0', ' 1000', '01000', '0x3e8', '+1000', '\' OR 1=1--', '__proto__', 'eip155:1', 'eip155:31338', '0x', 'x'.repeat(50_000)),
      fc.constantFrom(2 ** 53 + 2, 1e308, Number.MAX_SAFE_INTEGER + 2),
      fc.jsonValue({ maxDepth: 4 }),
      fc.integer({ min: 1, max: 500 }).map((depth) => JSON.parse('['.repeat(depth) + ']'.repeat(depth))),
    );
    const mutated = fc.tuple(fc.array(fc.tuple(fc.constantFrom(...paths), hostileValue), { minLength: 1, maxLength: 3 })).map(([edits]) => {
      const body = structuredClone(base) as any;
      delete body.nonce;
      for (const [path, value] of edits) {
        let node = body;
        for (const key of path.slice(0, -1)) node = node[key] = node[key] !== null && typeof node[key] === 'object' ? node[key] : {};
        node[path.at(-1)!] = value;
      }
      return JSON.stringify(body);
    });
    const raw = fc.oneof(fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)), fc.string({ maxLength: 200 }));
    const bodies = fc.sample(fc.oneof({ arbitrary: mutated, weight: 4 }, { arbitrary: raw, weight: 1 }), { seed: 27, numRuns: 300 });
    const txs = await chainTxCount();
    const statuses = new Map<number, number>();
    for (const body of bodies) {
      for (const path of ['/verify', '/settle']) {
        const answer = await facilitator(path, undefined, body);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        assert.ok([200, 400, 413].includes(answer.status), `${path} answered ${answer.status} to ${body.slice(0, 300)}: ${JSON.stringify(answer.body).slice(0, 300)}`);
        // 400 only for a body that is not a JSON object; every JSON object is answered 200 with a reason.
        if (answer.status === 400) assert.ok(!isJsonObject(body), `${path} answered 400 to a JSON object: ${body.slice(0, 300)}`);
        if (answer.status === 200 && path === '/verify') assert.equal(answer.body.isValid, false);
        if (answer.status === 200 && path === '/settle') assert.equal(answer.body.success, false);
      }
    }
    console.log(`fuzz: ${bodies.length * 2} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.equal(await chainTxCount(), txs, 'no transaction for a payer who holds nothing');
    // Alive and still paying.
    assert.equal((await facilitator('/supported')).status, 200);
    const payer = await funded('1');
    assert.equal((await facilitator('/settle', await payment(payer, { value: 1000n }))).body.success, true);
  });
});
