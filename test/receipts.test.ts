import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { verifyCredential } from 'did-jwt-vc';
import { Resolver } from 'did-resolver';
import { getResolver } from 'ethr-did-resolver';
import { issueCredential } from '../src/did/jwt-credentials.ts';
import { signingIdentityOf } from '../src/receipts/receipt-issuer.ts';
import { verifyReceipt } from '../src/receipts/verify-receipt.ts';
import { isNetworkName } from '../src/shared/networks.ts';
import { newUser, startPaymentTest, type PaymentTest } from './support/payments.ts';
import { assertSameShape } from './support/doc-examples.ts';
import {
  approvedPayment, cancelPayment, claimReward, failedPayment, issueReward, type TestStore,
} from './support/scripted-payments.ts';

const run = promisify(execFile);

let p: PaymentTest;
let store: TestStore;
let otherStore: TestStore;
before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' });
  store = await p.t.platform.payments.addStore({ tid: 'RC-1001', name: 'Receipt Books' });
  otherStore = await p.t.platform.payments.addStore({ tid: 'RC-2002', name: 'Other Shop' });
  await p.t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '1000' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

async function get(url: string, authorization?: string) {
  const response = await p.t.app.inject({ method: 'GET', url, headers: authorization ? { authorization: `Bearer ${authorization}` } : {} });
  return { status: response.statusCode, body: response.json() };
}

/** did-jwt-vc with ethr-did-resolver on our chain's registry: shares nothing with the platform's agent. */
function independentResolver() {
  const { ethereum } = p.t.platform.chains;
  return new Resolver(getResolver({
    networks: [{ name: 'mainnet', chainId: ethereum.chainId, rpcUrl: ethereum.url, registry: p.t.platform.contracts.ethereum.didRegistry }],
  })) as unknown as Parameters<typeof verifyCredential>[1];
}

/** The JSON block after `<!-- receipts-example: NAME -->` in docs/receipts.md. */
function docExample(name: string): unknown {
  const doc = readFileSync('docs/receipts.md', 'utf8');
  const match = new RegExp(`<!-- receipts-example: ${name} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  assert.ok(match, `docs/receipts.md has the example ${name}`);
  return JSON.parse(match[1]!);
}
/** Members whose values the examples show as they always are. */
const fixedKeys = new Set(['kind', 'token', 'network', 'exchangeCurrency', 'chainId', 'verified', 'check', 'ok']);

const systemIssuer = () => p.t.platform.did.systemDids.issuer[0]!.did;
const verifyDeps = () => ({
  resolver: independentResolver(),
  systemIssuers: [systemIssuer()],
  chainOf: (network: string) => (isNetworkName(network) ? p.t.platform.chains[network] : undefined),
});

describe('receipts of payments', () => {
  test('a store reads its approval receipt: a VC of the system issuer, verified by did-jwt-vc alone on our chain and by verify-vc', async () => {
    const user = await newUser(p, '100');
    const { tranNo, end } = await approvedPayment(p, store, user, '12000');
    const res = await get(`/v1/receipts/${store.tid}/${tranNo}`, store.apiKey);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.tid, store.tid);
    assert.equal(res.body.tranNo, tranNo);
    assert.equal(res.body.receipts.length, 1);
    const [vc] = res.body.receipts;
    assert.deepEqual(vc.type, ['VerifiableCredential', 'VixpayReceipt']);
    assert.equal(vc.issuer.id, systemIssuer());

    const verified = await verifyCredential(vc.proof.jwt, independentResolver());
    assert.equal(verified.verified, true);
    assert.equal(verified.issuer, systemIssuer());
    const subject = verified.verifiableCredential.credentialSubject as Record<string, unknown>;
    assert.deepEqual(subject, {
      id: `did:ethr:${user.address}`, kind: 'payment', tid: store.tid, tranNo, amount: '12', token: 'VIXP',
      tokenContract: p.t.platform.contracts.ethereum.vixpToken, network: 'ethereum', chainId: p.t.platform.chains.ethereum.chainId,
      from: user.address, to: store.settlementAddress, transactionId: end.transfer_transaction_id,
      approvalNo: end.approval_no, approvalDate: end.approval_date, exchangeAmount: '12000', exchangeCurrency: 'KRW',
    });

    for (const body of [vc, vc.proof.jwt]) {
      const checked = await p.t.app.inject({ method: 'POST', url: '/v2/did/verify-vc', payload: typeof body === 'string' ? JSON.stringify(body) : body, headers: { 'content-type': 'application/json' } });
      assert.equal(checked.json().verified, true, checked.body);
    }
    // Kept once issued: a second read answers the same credential.
    assert.equal((await get(`/v1/receipts/${store.tid}/${tranNo}`, store.apiKey)).body.receipts[0].proof.jwt, vc.proof.jwt);
  });

  test('concurrent first reads of a receipt issue one receipt, and every reader gets it', async () => {
    const user = await newUser(p, '10');
    const { tranNo } = await approvedPayment(p, store, user, '3000');
    const reads = await Promise.all(Array.from({ length: 6 }, () => get(`/v1/receipts/${store.tid}/${tranNo}`, store.apiKey)));
    assert.deepEqual(reads.map((r) => r.status), Array(6).fill(200));
    assert.equal(new Set(reads.map((r) => r.body.receipts[0].proof.jwt)).size, 1);
    const rows = await p.t.platform.store.db.selectFrom('receipts').select('id').where('tid', '=', store.tid).where('reference', '=', tranNo).execute();
    assert.equal(rows.length, 1);
  });

  test('a refund adds a cancellation receipt; a reward claim has its own; a user lists their own receipts only', async () => {
    const user = await newUser(p, '50');
    const { tranNo, end } = await approvedPayment(p, store, user, '20000');
    const refund = await cancelPayment(p, store, user, end, '5');
    const receipts = (await get(`/v1/receipts/${store.tid}/${tranNo}`, store.apiKey)).body.receipts;
    assert.equal(receipts.length, 2);
    const cancellation = (await verifyCredential(receipts[1].proof.jwt, independentResolver())).verifiableCredential.credentialSubject as Record<string, unknown>;
    assert.equal(cancellation.kind, 'cancellation');
    assert.equal(cancellation.amount, '5');
    assert.equal(cancellation.from, store.settlementAddress);
    assert.equal(cancellation.to, user.address);
    assert.equal(cancellation.transactionId, refund.transfer_transaction_id);
    assert.equal(cancellation.approvalNo, refund.approval_no);
    assert.equal(cancellation.paymentApprovalNo, end.approval_no);

    const reward = await issueReward(p, store, '2500');
    await claimReward(p, user, reward);
    // The app's END_REWARD carries no transaction id: the claim's transfer is in the reward's record.
    const claim = { transfer_transaction_id: (await p.t.platform.store.db.selectFrom('rewards').select('claim_transaction_id').where('id', '=', reward.reward_id!).executeTakeFirstOrThrow()).claim_transaction_id };
    const rewardReceipt = await get(`/v1/receipts/${store.tid}/rewards/${reward.reward_id}`, store.apiKey);
    assert.equal(rewardReceipt.status, 200, JSON.stringify(rewardReceipt.body));
    const claimed = (await verifyCredential(rewardReceipt.body.receipts[0].proof.jwt, independentResolver())).verifiableCredential.credentialSubject as Record<string, unknown>;
    assert.equal(claimed.kind, 'reward_claim');
    assert.equal(claimed.rewardId, reward.reward_id);
    assert.equal(claimed.amount, '2.5');
    assert.equal(claimed.transactionId, claim.transfer_transaction_id);
    assert.match(String(claimed.approvalDate), /^\d{14}$/);

    const mine = await get('/v1/receipts', user.token);
    assert.equal(mine.status, 200);
    const kinds = mine.body.receipts.map((vc: any) => `${vc.credentialSubject.kind}:${vc.credentialSubject.transactionId}`).sort();
    assert.deepEqual(kinds, [
      `cancellation:${refund.transfer_transaction_id}`, `payment:${end.transfer_transaction_id}`, `reward_claim:${claim.transfer_transaction_id}`,
    ].sort());
    for (const vc of mine.body.receipts) assert.equal(vc.credentialSubject.id, `did:ethr:${user.address}`);
    const stranger = await newUser(p);
    assert.deepEqual((await get('/v1/receipts', stranger.token)).body, { receipts: [] });
  });

  test('a reward claim receipt is its store\'s only: another store asking under its own tid and API key gets 404', async () => {
    const user = await newUser(p);
    const reward = await issueReward(p, store, '1000');
    await claimReward(p, user, reward);
    const own = await get(`/v1/receipts/${store.tid}/rewards/${reward.reward_id}`, store.apiKey);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    const foreign = await get(`/v1/receipts/${otherStore.tid}/rewards/${reward.reward_id}`, otherStore.apiKey);
    assert.equal(foreign.status, 404, JSON.stringify(foreign.body));
    assert.equal(foreign.body.error.code, 'request.not_found');
    assert.equal((await get(`/v1/receipts/${store.tid}/rewards/${reward.reward_id}`, otherStore.apiKey)).status, 401, 'nor under the store\'s tid');
    const issued = await p.t.platform.store.db.selectFrom('receipts').select('tid').where('reference', '=', reward.reward_id!).execute();
    assert.deepEqual(issued.map((r) => r.tid), [store.tid], 'no receipt was issued to the other store');
  });

  test('refused: no or a wrong API key, another store\'s tid, a failed or unknown tran_no, a list without a JWT', async () => {
    const user = await newUser(p, '10');
    const { tranNo } = await approvedPayment(p, store, user, '1000');
    assert.equal((await get(`/v1/receipts/${store.tid}/${tranNo}`)).status, 401);
    assert.equal((await get(`/v1/receipts/${store.tid}/${tranNo}`, 'vxp_wrong')).status, 401);
    const foreign = await get(`/v1/receipts/${store.tid}/${tranNo}`, otherStore.apiKey);
    assert.equal(foreign.status, 401);
    assert.equal(foreign.body.error.code, 'request.unauthorized');
    assert.equal((await get(`/v1/receipts/${otherStore.tid}/${tranNo}`, otherStore.apiKey)).status, 404);
    const failed = await failedPayment(p, store, user, '1000');
    assert.equal(failed.resCode, '04');
    const notApproved = await get(`/v1/receipts/${store.tid}/${failed.tranNo}`, store.apiKey);
    assert.equal(notApproved.status, 404);
    assert.equal(notApproved.body.error.code, 'request.not_found');
    assert.equal((await get('/v1/receipts')).status, 401);
    assert.equal((await get('/v1/receipts?limit=0', user.token)).status, 400);
  });
});

describe('vixpay receipt verify', () => {
  test('a true receipt passes every check; one signed by the same issuer stating another transfer fails the chain check', async () => {
    const user = await newUser(p, '30');
    const { tranNo, end } = await approvedPayment(p, store, user, '7000');
    const [vc] = (await get(`/v1/receipts/${store.tid}/${tranNo}`, store.apiKey)).body.receipts;
    const good = await verifyReceipt(verifyDeps(), vc);
    assert.equal(good.verified, true, JSON.stringify(good.checks));
    assert.deepEqual(good.checks.map((c) => c.check), ['signature', 'issuer', 'network', 'transaction', 'transfer']);

    // Validly signed by the system issuer, but the transaction does not carry what it states.
    const issuer = await signingIdentityOf(p.t.platform.did.agent, systemIssuer());
    const forge = (changes: Record<string, unknown>) => issueCredential(p.t.platform.did.agent, {
      issuer, type: ['VerifiableCredential', 'VixpayReceipt'], issuedAt: new Date(), subject: { ...vc.credentialSubject, ...changes },
    });
    const inflated = await forge({ amount: '700' });
    assert.equal((await verifyCredential((inflated as any).proof.jwt, independentResolver())).verified, true, 'the signature alone is fine');
    const wrongAmount = await verifyReceipt(verifyDeps(), inflated);
    assert.equal(wrongAmount.verified, false);
    assert.deepEqual(wrongAmount.checks.at(-1)!.check, 'transfer');
    const minted = await p.t.platform.wallet.mint('ethereum', { to: user.address, amount: '7' });
    const otherTx = await verifyReceipt(verifyDeps(), await forge({ transactionId: minted.transactionId }));
    assert.equal(otherTx.verified, false);
    assert.equal(otherTx.checks.at(-1)!.check, 'transfer');
    const unmined = await verifyReceipt(verifyDeps(), await forge({ transactionId: `0x${'ab'.repeat(32)}` }));
    assert.equal(unmined.checks.at(-1)!.check, 'transaction');
    const wrongChain = await verifyReceipt(verifyDeps(), await forge({ chainId: 1 }));
    assert.equal(wrongChain.checks.at(-1)!.check, 'network');
    // Not the platform's issuer: a key of the user's wallet signs the same subject.
    const selfIssued = await verifyReceipt({ ...verifyDeps(), systemIssuers: [] }, vc);
    assert.equal(selfIssued.checks.at(-1)!.check, 'issuer');
    assert.equal(end.transfer_transaction_id, vc.credentialSubject.transactionId);

    // The CLI, as an operator or auditor runs it beside the platform.
    const goodFile = path.join(p.t.dataDir, 'receipt.json');
    const forgedFile = path.join(p.t.dataDir, 'forged.jwt');
    writeFileSync(goodFile, JSON.stringify(vc));
    writeFileSync(forgedFile, (inflated as any).proof.jwt);
    const cli = (file: string) => run(process.execPath, ['bin/vixpay.js', 'receipt', 'verify', file, '--json'], {
      env: { ...process.env, DATA_DIR: p.t.dataDir, LOG_LEVEL: 'silent', ...(p.t.config.databaseUrl && { DATABASE_URL: p.t.config.databaseUrl }) },
    });
    const passed = JSON.parse((await cli(goodFile)).stdout);
    assert.equal(passed.verified, true);
    assertSameShape(docExample('verify'), passed, fixedKeys);
    assert.equal(passed.subject.tranNo, tranNo);
    await assert.rejects(cli(forgedFile), (error: any) => {
      assert.equal(error.code, 1);
      assert.match(JSON.parse(error.stdout).error.message, /^request.invalid: receipt not verified: transfer: the transaction carries no transfer of 700 VIXP/);
      return true;
    });
  });
});

test('docs/receipts.md: the examples are what the endpoints answer', async () => {
  const user = await newUser(p, '100');
  const { tranNo, end } = await approvedPayment(p, store, user, '15000');
  await cancelPayment(p, store, user, end, '4');
  const reward = await issueReward(p, store, '3000');
  await claimReward(p, user, reward);
  const payment = await get(`/v1/receipts/${store.tid}/${tranNo}`, store.apiKey);
  assertSameShape(docExample('payment'), payment.body, fixedKeys);
  const claimed = await get(`/v1/receipts/${store.tid}/rewards/${reward.reward_id}`, store.apiKey);
  assertSameShape(docExample('reward'), claimed.body, fixedKeys);
  const mine = await get('/v1/receipts?limit=2', user.token);
  assertSameShape(docExample('mine'), mine.body, fixedKeys);
  const checked = await p.t.app.inject({ method: 'POST', url: '/v2/did/verify-vc', payload: payment.body.receipts[0], headers: { 'content-type': 'application/json' } });
  assert.equal(checked.json().verified, true);
});
