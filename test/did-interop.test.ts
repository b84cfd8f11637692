import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hexToBytes, type Hex } from 'viem';
import { sign } from 'viem/accounts';
import { createVerifiableCredentialJwt, createVerifiablePresentationJwt, normalizeCredential, verifyCredential } from 'did-jwt-vc';
import { Resolver } from 'did-resolver';
import { getResolver } from 'ethr-did-resolver';
import { startDidTestApp, type DidTestApp } from './support/did-app.ts';
import { createWalletRepository } from '../src/store/wallet-repository.ts';

// Interop both ways with tools that share nothing with our agent: did-jwt-vc with ethr-did-resolver
// pointed at our chain verifies what we issue, and we verify what did-jwt-vc issues.

let d: DidTestApp;
before(async () => { d = await startDidTestApp(); });
after(async () => { await d?.close(); });

/** An ES256K JWS signer (base64url r||s of SHA-256 of the signing input) from a raw private key. */
function es256kSigner(privateKey: Hex) {
  return async (data: string | Uint8Array) => {
    const hash = createHash('sha256').update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data).digest('hex');
    const { r, s } = await sign({ hash: `0x${hash}`, privateKey, to: 'object' });
    return Buffer.concat([hexToBytes(r, { size: 32 }), hexToBytes(s, { size: 32 })]).toString('base64url');
  };
}

function independentResolver() {
  const { ethereum } = d.t.platform.chains;
  const resolver = new Resolver(getResolver({
    networks: [{ name: 'mainnet', chainId: ethereum.chainId, rpcUrl: ethereum.url, registry: d.t.platform.contracts.ethereum.didRegistry }],
  }));
  // did-resolver 6 (ours) and 4 (did-jwt-vc's) differ only in how they type `@context`.
  return resolver as unknown as Parameters<typeof verifyCredential>[1];
}

async function walletKey(address: string): Promise<Hex> {
  const account = await createWalletRepository(d.t.platform.store.db).findAccount(address);
  return d.t.platform.vault.decrypt(account!.privateKeyEnc) as Hex;
}

test('a credential from create-vc verifies in an independent did-jwt-vc verifier on our chain', async () => {
  const user = await d.newUser('ivy');
  const holder = (await d.post('/v2/did/create-did', { alias: 'ivy', address: user.address, secretKey: user.secretKey })).body.did;
  const vc = (await d.post('/v2/did/create-vc', { holder, issuer: d.did.systemDids.issuer[0]!.did, userInfo: { name: 'Ivy' } }, { authorization: `Bearer ${user.token}` })).body;
  const result = await verifyCredential(vc.proof.jwt, independentResolver());
  assert.equal(result.verified, true);
  assert.equal(result.issuer, d.did.systemDids.issuer[0]!.did);
  assert.deepEqual(result.verifiableCredential.credentialSubject, { name: 'Ivy', sub: holder, id: holder });
  assert.equal(result.payload.sub, holder);
});

test('a credential made by did-jwt-vc with a wallet key verifies through verify-vc; a VP of it cannot log in', async () => {
  const user = await d.newUser('jack');
  const holder = (await d.post('/v2/did/create-did', { alias: 'jack', address: user.address, secretKey: user.secretKey })).body.did;
  const issuerDid = `did:ethr:${user.address}`;
  const jwt = await createVerifiableCredentialJwt(
    {
      '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiableCredential', 'Profile'],
      issuer: { id: issuerDid }, issuanceDate: new Date().toISOString(), credentialSubject: { id: holder, name: 'Jack' },
    },
    { did: issuerDid, signer: es256kSigner(await walletKey(user.address)), alg: 'ES256K' },
  );
  const vc = normalizeCredential(jwt);
  for (const body of [vc, jwt]) {
    const res = await d.post('/v2/did/verify-vc', body);
    assert.equal(res.status, 200);
    assert.equal(res.body.verified, true, JSON.stringify(res.body.error));
    assert.equal(res.body.issuer, issuerDid);
  }

  // Self-issued: a valid credential, but not from a system issuer, so not a login.
  const vp = (await d.post('/v2/did/create-vp', { holder, verifier: d.did.systemDids.verifier[0]!.did, credentials: [vc] })).body;
  assert.equal((await d.post('/v2/did/verify-vp', vp)).body.verified, true);
  const login = await d.post('/v2/auth/auth-user-with-vp', { vp });
  assert.equal(login.status, 401);
  assert.match(login.body.error.message, /not issued by this system/);
});

test('a VP made by did-jwt-vc for another verifier is refused at login', async () => {
  const user = await d.newUser('kate');
  const holder = (await d.post('/v2/did/create-did', { alias: 'kate', address: user.address, secretKey: user.secretKey })).body.did;
  const created = await d.post('/v2/did/create-vc', { holder, issuer: d.did.systemDids.issuer[0]!.did, userInfo: { name: 'Kate' } }, { authorization: `Bearer ${user.token}` });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const vc = created.body;
  const now = Math.floor(Date.now() / 1000);
  const jwt = await createVerifiablePresentationJwt(
    { '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiablePresentation'], holder, verifier: [holder], verifiableCredential: [vc.proof.jwt], nbf: now, exp: now + 300 } as any,
    { did: holder, signer: es256kSigner(await walletKey(user.address)), alg: 'ES256K' },
  );
  const login = await d.post('/v2/auth/auth-user-with-vp', { vp: jwt });
  assert.equal(login.status, 401);
  assert.match(login.body.error.message, /not a verifier of this system/);
});
