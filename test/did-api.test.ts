import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startDidTestApp, type DidTestApp } from './support/did-app.ts';
import { composeDid } from '../src/compose/platform.ts';
import { createDidService } from '../src/did/did-service.ts';
import { createDidRepository } from '../src/store/did-repository.ts';
import { createWalletRepository } from '../src/store/wallet-repository.ts';

let d: DidTestApp;
before(async () => { d = await startDidTestApp(); });
after(async () => { await d?.close(); });

const issuer = () => d.did.systemDids.issuer[0]!.did;
const verifier = () => d.did.systemDids.verifier[0]!.did;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Flips one character of the JWT's payload part. */
function tamperJwt(jwt: string): string {
  const [header, payload, signature] = jwt.split('.');
  const at = Math.floor(payload!.length / 2);
  const swapped = payload![at] === 'A' ? 'B' : 'A';
  return [header, payload!.slice(0, at) + swapped + payload!.slice(at + 1), signature].join('.');
}

describe('system DIDs', () => {
  test('one issuer and one verifier, listed as {alias, did}; a second start reuses them', async () => {
    const issuers = await d.get('/v2/did/issuers');
    const verifiers = await d.get('/v2/did/verifiers');
    assert.equal(issuers.status, 200);
    assert.deepEqual(issuers.body, [{ alias: 'vixpay-issuer', did: issuer() }]);
    assert.deepEqual(verifiers.body, [{ alias: 'vixpay-verifier', did: verifier() }]);
    assert.match(issuer(), /^did:ethr:0x[0-9a-fA-F]{40}$/);
    const p = d.t.platform;
    const again = await composeDid(p.store, p.vault, createWalletRepository(p.store.db), p.clock, {
      rpcUrl: p.chains.ethereum.url, chainId: p.chains.ethereum.chainId, registry: p.contracts.ethereum.didRegistry,
    });
    assert.deepEqual(again.systemDids, d.did.systemDids);
  });

  test('did:ethr resolves on our own chain with our registry', async () => {
    const result = await d.did.agent.resolveDid({ didUrl: issuer() });
    assert.equal(result.didDocument?.id, issuer());
    const [method] = result.didDocument!.verificationMethod!;
    assert.equal(method!.blockchainAccountId, `eip155:${d.t.platform.chains.ethereum.chainId}:${issuer().slice(9)}`);
    const { chainId } = d.t.platform.chains.ethereum;
    const byChainId = await d.did.agent.resolveDid({ didUrl: `did:ethr:0x${chainId.toString(16)}:${issuer().slice(9)}` });
    assert.equal(byChainId.didDocument?.verificationMethod?.[0]?.blockchainAccountId, method!.blockchainAccountId);
    const elsewhere = await d.did.agent.resolveDid({ didUrl: `did:ethr:sepolia:${issuer().slice(9)}` });
    assert.equal(elsewhere.didResolutionMetadata.error, 'unknownNetwork', 'no other network is configured');
  });
});

describe('create-did', () => {
  test('the DID is did:ethr:<wallet address> with the wallet key; no secret in the answer or the store', async () => {
    const user = await d.newUser('carol');
    const res = await d.post('/v2/did/create-did', { alias: 'carol', address: user.address, secretKey: user.secretKey });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const record = res.body;
    assert.equal(record.did, `did:ethr:${user.address}`);
    assert.equal(record.provider, 'did:ethr');
    assert.equal(record.alias, 'carol');
    assert.deepEqual(record.services, []);
    assert.equal(record.keys.length, 1);
    const [key] = record.keys;
    assert.equal(key.kid, record.controllerKeyId);
    assert.deepEqual({ ...key, publicKeyHex: 'x', kid: 'x', meta: { ...key.meta, algorithms: [] } },
      { kid: 'x', kms: 'local', type: 'Secp256k1', publicKeyHex: 'x', privateKeyHex: '', meta: { algorithms: [], secretKey: '' } });
    assert.ok(key.meta.algorithms.includes('ES256K'));
    assert.ok(!JSON.stringify(record).includes(user.secretKey));

    const again = await d.post('/v2/did/create-did', { alias: 'other alias', address: user.address.toLowerCase(), secretKey: user.secretKey });
    assert.deepEqual(again.body, record, 'idempotent per address');

    const rows = await d.t.platform.store.db.selectFrom('did_private_keys').selectAll().execute();
    for (const row of rows) assert.match(row.private_key_enc, /^v1:/);
    const account = await createWalletRepository(d.t.platform.store.db).findAccount(user.address);
    const privateKey = d.t.platform.vault.decrypt(account!.privateKeyEnc).slice(2);
    assert.ok(!JSON.stringify(await d.t.platform.store.db.selectFrom('did_keys').selectAll().execute()).includes(privateKey));
  });

  test('a wrong secretKey and an unknown address get the same 401; a bad body 400', async () => {
    const user = await d.newUser('dave');
    const wrong = await d.post('/v2/did/create-did', { alias: 'x', address: user.address, secretKey: '0'.repeat(64) });
    const unknown = await d.post('/v2/did/create-did', { alias: 'x', address: '0x000000000000000000000000000000000000dEaD', secretKey: user.secretKey });
    assert.equal(wrong.status, 401);
    assert.deepEqual(unknown.body, wrong.body);
    assert.equal(wrong.body.error.code, 'did.secret_key_invalid');
    const bad = await d.post('/v2/did/create-did', { alias: 'x', address: 'nope', secretKey: 'y' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'request.invalid');
  });
});

describe('credentials and presentations', () => {
  let user: Awaited<ReturnType<DidTestApp['newUser']>>;
  let holder: string;
  let vc: any;
  before(async () => {
    user = await d.newUser('erin');
    holder = (await d.post('/v2/did/create-did', { alias: 'erin', address: user.address, secretKey: user.secretKey })).body.did;
    const res = await d.post('/v2/did/create-vc', { holder, issuer: issuer(), userInfo: { name: 'Erin', age: 30, member: true } }, bearer(user.token));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    vc = res.body;
  });

  test('create-vc answers a JwtProof2020 Profile credential for the holder', () => {
    assert.deepEqual(vc.type, ['VerifiableCredential', 'Profile']);
    assert.deepEqual(vc['@context'], ['https://www.w3.org/2018/credentials/v1']);
    assert.deepEqual(vc.issuer, { id: issuer() });
    // docs/interfaces.md#did-vc-and-vp: the user info keys, `sub` and `id`, both the holder DID (also the JWT's `sub` claim).
    assert.deepEqual(vc.credentialSubject, { name: 'Erin', age: 30, member: true, sub: holder, id: holder });
    assert.equal(JSON.parse(Buffer.from(vc.proof.jwt.split('.')[1], 'base64url').toString()).sub, holder);
    assert.match(vc.issuanceDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(vc.proof.type, 'JwtProof2020');
    assert.equal(vc.proof.jwt.split('.').length, 3);
  });

  test('create-vc: `sub` and `id` in userInfo are replaced by the holder DID', async () => {
    const res = await d.post('/v2/did/create-vc', { holder, issuer: issuer(), userInfo: { name: 'Erin', sub: 'did:ethr:0x0000000000000000000000000000000000000001', id: 'x' } }, bearer(user.token));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.credentialSubject, { name: 'Erin', sub: holder, id: holder });
    assert.equal((await d.post('/v2/did/verify-vc', res.body)).body.verified, true);
  });

  test('create-vc refuses: no JWT, a foreign issuer, another holder, bad userInfo', async () => {
    const body = { holder, issuer: issuer(), userInfo: { name: 'Erin' } };
    assert.equal((await d.post('/v2/did/create-vc', body)).status, 401);
    assert.equal((await d.post('/v2/did/create-vc', body, bearer('not.a.jwt'))).status, 401);
    const foreign = await d.post('/v2/did/create-vc', { ...body, issuer: verifier() }, bearer(user.token));
    assert.deepEqual([foreign.status, foreign.body.error.code], [400, 'did.not_system_issuer']);
    const other = await d.newUser('frank');
    const stolen = await d.post('/v2/did/create-vc', body, bearer(other.token));
    assert.deepEqual([stolen.status, stolen.body.error.code], [403, 'did.holder_not_caller']);
    for (const userInfo of [{}, null, 'x', [1], { nested: { a: 1 } }, { __proto__x: 1 }, { s: 'x'.repeat(1025) }, Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]))]) {
      const res = await d.post('/v2/did/create-vc', { ...body, userInfo }, bearer(user.token));
      assert.deepEqual([res.status, res.body.error.code], [400, 'request.invalid'], JSON.stringify(userInfo).slice(0, 40));
    }
  });

  test('verify-vc: true for the credential, false with a reason for any change, never a 500', async () => {
    const ok = await d.post('/v2/did/verify-vc', vc);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.verified, true);
    assert.equal(ok.body.issuer, issuer());
    assert.equal(ok.body.jwt, vc.proof.jwt);
    assert.deepEqual(ok.body.verifiableCredential, vc);
    assert.equal(ok.body.signer.blockchainAccountId.split(':').at(-1), issuer().slice(9));
    assert.equal(ok.body.didResolutionResult.didResolutionMetadata.contentType, 'application/did+ld+json');
    assert.equal((await d.post('/v2/did/verify-vc', vc.proof.jwt)).body.verified, true, 'the bare JWT verifies too');

    const changedSubject = { ...vc, credentialSubject: { ...vc.credentialSubject, name: 'Erim' } };
    const changedJwt = { ...vc, proof: { ...vc.proof, jwt: tamperJwt(vc.proof.jwt) } };
    const jwt: string = vc.proof.jwt;
    const changedSignature = { ...vc, proof: { ...vc.proof, jwt: `${jwt.slice(0, -3)}${jwt.at(-3) === 'A' ? 'B' : 'A'}${jwt.slice(-2)}` } };
    for (const [name, body] of Object.entries({ changedSubject, changedJwt, changedSignature, noProof: { ...vc, proof: undefined }, garbage: { hello: 1 }, number: 42 })) {
      const res = await d.post('/v2/did/verify-vc', body);
      assert.equal(res.status, 200, name);
      assert.equal(res.body.verified, false, name);
      assert.ok(res.body.error.message.length > 0 && res.body.error.errorCode.length > 0, name);
    }
  });

  test('create-vp and verify-vp; a changed presentation is false', async () => {
    const res = await d.post('/v2/did/create-vp', { holder, verifier: verifier(), credentials: [vc] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const vp = res.body;
    assert.deepEqual(vp.type, ['VerifiablePresentation']);
    assert.deepEqual(vp.verifier, [verifier()]);
    assert.equal(vp.holder, holder);
    assert.equal(vp.proof.type, 'JwtProof2020');
    assert.deepEqual(vp.verifiableCredential, [vc]);
    assert.equal(Date.parse(vp.expirationDate) - Date.parse(vp.issuanceDate), 600_000);

    const ok = await d.post('/v2/did/verify-vp', vp);
    assert.equal(ok.body.verified, true, JSON.stringify(ok.body.error));
    assert.deepEqual(ok.body.verifiablePresentation, vp);
    const changed = await d.post('/v2/did/verify-vp', { ...vp, holder: verifier() });
    assert.deepEqual([changed.status, changed.body.verified], [200, false]);
    const changedCredential = { ...vp, verifiableCredential: [{ ...vc, credentialSubject: { ...vc.credentialSubject, age: 31 } }] };
    assert.equal((await d.post('/v2/did/verify-vp', changedCredential)).body.verified, false);
    assert.equal((await d.post('/v2/did/verify-vp', { ...vp, proof: { ...vp.proof, jwt: tamperJwt(vp.proof.jwt) } })).body.verified, false);
  });

  test('create-vp refuses a foreign verifier, a holder we hold no key for, credentials of another holder', async () => {
    const foreign = await d.post('/v2/did/create-vp', { holder, verifier: issuer(), credentials: [vc] });
    assert.deepEqual([foreign.status, foreign.body.error.code], [400, 'did.not_system_verifier']);
    const stranger = await d.post('/v2/did/create-vp', { holder: 'did:ethr:0x000000000000000000000000000000000000dEaD', verifier: verifier(), credentials: [vc] });
    assert.deepEqual([stranger.status, stranger.body.error.code], [400, 'did.key_not_held']);
    const other = await d.newUser('gina');
    const otherHolder = (await d.post('/v2/did/create-did', { alias: 'gina', address: other.address, secretKey: other.secretKey })).body.did;
    const mixed = await d.post('/v2/did/create-vp', { holder: otherHolder, verifier: verifier(), credentials: [vc] });
    assert.deepEqual([mixed.status, mixed.body.error.code], [400, 'request.invalid']);
    assert.equal((await d.post('/v2/did/create-vp', { holder, verifier: verifier(), credentials: [] })).status, 400);
  });

  test('VP login: the holder logs in once; a replay, an expired VP and a foreign verifier are refused', async () => {
    const vp = (await d.post('/v2/did/create-vp', { holder, verifier: verifier(), credentials: [vc] })).body;
    const login = await d.post('/v2/auth/auth-user-with-vp', { vp });
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.deepEqual({ ...login.body, token: 't' }, { token: 't', userId: 'erin', name: user.name, telNo: null, email: null });
    assert.deepEqual(await d.t.platform.identity.jwt.verifyAccessToken(login.body.token), { userId: 'erin' });

    const replay = await d.post('/v2/auth/auth-user-with-vp', { vp });
    assert.deepEqual([replay.status, replay.body.error.code], [401, 'did.presentation_refused']);
    assert.match(replay.body.error.message, /already used/);

    const p = d.t.platform;
    const past = createDidService({
      agent: d.did.agent, repository: createDidRepository(p.store.db), wallets: createWalletRepository(p.store.db), vault: p.vault,
      clock: () => Date.now() - 3600_000,
    });
    const expired = await past.createPresentation({ holder, verifier: verifier(), credentials: [vc] });
    const refused = await d.post('/v2/auth/auth-user-with-vp', { vp: expired });
    assert.equal(refused.status, 401);
    assert.match(refused.body.error.message, /expired/);

    const unaddressed = await d.post('/v2/auth/auth-user-with-vp', { vp: { ...vp, proof: { type: 'JwtProof2020', jwt: 'x.y.z' } } });
    assert.equal(unaddressed.status, 401);
  });

  test('website login: the VP completes the site request, which then reads the user once', async () => {
    const site = await d.post('/v2/auth/auth-user-by-app', { requestId: 'https://shop.example/?', waitTime: 60 });
    assert.equal(site.status, 200);
    const vp = (await d.post('/v2/did/create-vp', { holder, verifier: verifier(), credentials: [vc] })).body;
    const unknown = await d.post('/v2/auth/auth-user-with-vp', { vp, requestId: 'A'.repeat(43) });
    assert.equal(unknown.status, 400, 'an unknown request is refused before the VP is spent');
    const app = await d.post('/v2/auth/auth-user-with-vp', { vp, requestId: site.body.requestId });
    assert.equal(app.status, 200, JSON.stringify(app.body));
    const result = await d.post('/v2/auth/auth-user-result-by-app', { requestId: site.body.requestId });
    assert.equal(result.status, 200);
    assert.equal(result.body.userId, 'erin');
  });
});
