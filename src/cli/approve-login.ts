import { DomainError } from '#shared/errors.ts';

export interface ApproveLoginParameters {
  /** The platform, e.g. http://localhost:8080 */
  server: string;
  /** The value read from the website's QR code. */
  requestId: string;
  id: string;
  password: string;
  /** The user's wallet (from `vixpay user add`): the DID's key is the wallet's key. */
  address: string;
  secretKey: string;
}

/**
 * What the user's app does to answer a website login, over the public HTTP APIs only:
 * log in, make the holder DID, get a credential from a system issuer, present it to a system
 * verifier, and send the presentation with the website's requestId.
 */
export async function approveWebsiteLogin(params: ApproveLoginParameters): Promise<{ userId: string; name: string }> {
  const call = async (method: 'GET' | 'POST', path: string, body?: object, token?: string) => {
    const response = await fetch(new URL(path, params.server), {
      method,
      headers: { ...(body && { 'content-type': 'application/json' }), ...(token && { authorization: `Bearer ${token}` }) },
      ...(body && { body: JSON.stringify(body) }),
    });
    const json = await response.json().catch(() => undefined) as any;
    if (!response.ok) throw new DomainError('request.invalid', `${path}: ${response.status} ${json?.error?.message ?? ''}`.trim());
    return json;
  };
  const session = await call('POST', '/v2/auth/auth-user', { id: params.id, password: params.password });
  const did = await call('POST', '/v2/did/create-did', { alias: params.id, address: params.address, secretKey: params.secretKey });
  const [issuer] = await call('GET', '/v2/did/issuers');
  const [verifier] = await call('GET', '/v2/did/verifiers');
  const credential = await call('POST', '/v2/did/create-vc', {
    holder: did.did, issuer: issuer.did, userInfo: { userId: session.userId, name: session.name },
  }, session.token);
  const presentation = await call('POST', '/v2/did/create-vp', { holder: did.did, verifier: verifier.did, credentials: [credential] });
  const login = await call('POST', '/v2/auth/auth-user-with-vp', { vp: presentation, requestId: params.requestId });
  return { userId: login.userId, name: login.name };
}
