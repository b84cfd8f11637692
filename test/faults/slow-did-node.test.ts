import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { createVerifiablePresentationJwt, normalizePresentation } from 'did-jwt-vc';
import { sha256, stringToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import type { AnvilProcess } from '../../src/chain/anvil-process.ts';
import { addUser } from '../../src/identity/add-user.ts';
import { startExternalNode } from '../support/external-node.ts';
import { startDelayingProxy, type DelayingProxy } from '../support/delaying-proxy.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

// The payment network's node (RPC_URL_ETHEREUM, where the DID registry is) stops answering: a VP
// login and a credential's verification, which resolve did:ethr on it, answer "unavailable" by the
// chain call deadline (CHAIN_CALL_TIMEOUT_SECONDS, 2 s here), not minutes later (ethers' own 300 s)
// nor as a refused presentation. A password login, which never asks the node, answers as usual, and a
// DID that does not resolve on any node of ours is still refused.
const deadlineMs = 2_000;
// What the answer may take past the deadline: the verification's own work on a loaded CI machine.
const marginMs = 2_500;
let node: AnvilProcess;
let proxy: DelayingProxy;
let t: TestPlatform;
const password = 'slow did node password';

before(async () => {
  let relayerKey: string;
  ({ node, relayerKey } = await startExternalNode());
  proxy = await startDelayingProxy(node.url);
  t = await startTestPlatform({
    env: { RPC_URL_ETHEREUM: proxy.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, CHAIN_CALL_TIMEOUT_SECONDS: String(deadlineMs / 1000) },
  });
});
after(async () => {
  await proxy?.close();
  await t?.stop();
  await node?.stop();
});

const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
  const response = await t.app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } });
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined };
};

/** The request's answer and how long it took, or `undefined` if it had none by `withinMs`. */
async function timed<T>(request: Promise<T>, withinMs: number): Promise<{ answer: T | undefined; ms: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), withinMs); });
  const answer = await Promise.race([request, late]).finally(() => clearTimeout(timer));
  return { answer, ms: Math.round(performance.now() - started) };
}

test('a node that does not answer: VP login and verify-vc answer 503 chain.unavailable by the chain call deadline; a password login answers as usual', async () => {
  // Everything the user needs, made while the node is quick: a wallet, its DID, a credential, a VP.
  const user = await addUser({ users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() }, { id: 'dora', password, name: 'Dora' });
  const token = (await post('/v2/auth/auth-user', { id: 'dora', password })).body.token as string;
  const holder = (await post('/v2/did/create-did', { alias: 'dora', address: user.address, secretKey: user.secretKey })).body.did as string;
  const issuer = t.platform.did.systemDids.issuer[0]!.did;
  const verifier = t.platform.did.systemDids.verifier[0]!.did;
  const vc = (await post('/v2/did/create-vc', { holder, issuer, userInfo: { name: 'Dora' } }, { authorization: `Bearer ${token}` })).body;
  const vpAnswer = await post('/v2/did/create-vp', { holder, verifier, credentials: [vc] });
  assert.equal(vpAnswer.status, 200, JSON.stringify(vpAnswer.body));
  const vp = vpAnswer.body;
  // A presentation by a DID of a network the platform has no node for: it never resolves here.
  const strangerKey = generatePrivateKey();
  const stranger = `did:ethr:sepolia:${privateKeyToAccount(strangerKey).address}`;
  const strangerSigner = async (data: string | Uint8Array) => {
    const signature = await sign({ hash: sha256(typeof data === 'string' ? stringToBytes(data) : data), privateKey: strangerKey, to: 'bytes' });
    return Buffer.from(signature.subarray(0, 64)).toString('base64url');
  };
  const strangerVp = normalizePresentation(await createVerifiablePresentationJwt(
    { '@context': ['https://www.w3.org/2018/credentials/v1'], type: ['VerifiablePresentation'], holder: stranger, verifier: [verifier], verifiableCredential: [vc.proof.jwt] },
    { did: stranger, signer: strangerSigner, alg: 'ES256K' },
    { exp: Math.floor(Date.now() / 1000) + 600 },
  ));

  proxy.delayMs = 60_000;
  const login = timed(post('/v2/auth/auth-user-with-vp', { vp }), deadlineMs + marginMs);
  const verified = timed(post('/v2/did/verify-vc', vc), deadlineMs + marginMs);
  const password1 = await timed(post('/v2/auth/auth-user', { id: 'dora', password }), deadlineMs);
  const refused = await timed(post('/v2/auth/auth-user-with-vp', { vp: strangerVp }), deadlineMs);
  const [vpLogin, verifyVc] = await Promise.all([login, verified]);
  console.log(`with the node not answering: VP login ${vpLogin.answer ? `${vpLogin.answer.status} in ${vpLogin.ms} ms` : `no answer in ${vpLogin.ms} ms`}, `
    + `verify-vc ${verifyVc.answer ? `${verifyVc.answer.status} in ${verifyVc.ms} ms` : `no answer in ${verifyVc.ms} ms`}, `
    + `password login ${password1.answer?.status} in ${password1.ms} ms, foreign DID's VP ${refused.answer?.status} in ${refused.ms} ms`);

  assert.equal(password1.answer?.status, 200, 'the password login answers while the node does not');
  assert.deepEqual([refused.answer?.status, refused.answer?.body.error.code], [401, 'did.presentation_refused'], 'a DID no node of ours resolves is refused');
  assert.ok(vpLogin.answer, `the VP login answers within the deadline and a margin (${deadlineMs + marginMs} ms)`);
  assert.deepEqual([vpLogin.answer.status, vpLogin.answer.body.error?.code], [503, 'chain.unavailable'], JSON.stringify(vpLogin.answer.body));
  assert.ok(vpLogin.ms >= deadlineMs - 100, `it waited for the deadline (${vpLogin.ms} ms)`);
  assert.ok(verifyVc.answer, `verify-vc answers within the deadline and a margin (${deadlineMs + marginMs} ms)`);
  assert.deepEqual([verifyVc.answer.status, verifyVc.answer.body.error?.code], [503, 'chain.unavailable'], JSON.stringify(verifyVc.answer.body));

  // The node answers again: the same VP logs in (it was not spent on the failed attempt).
  proxy.delayMs = 0;
  const again = await post('/v2/auth/auth-user-with-vp', { vp });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.userId, 'dora');
});
