// The transfer key scheme as an app runs it over HTTP: net_getTempKey, hashKey, signData, transfer.
import { createHash } from 'node:crypto';

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

export interface Sender {
  address: string;
  secretKey: string;
}

let nextId = 1;
/** One JSON-RPC call over HTTP; throws on a protocol error or a result code other than 200. */
export async function rpcCall(baseUrl: string, path: string, method: string, params: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  const body = (await response.json()) as any;
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.msg ?? body.error.message}`);
  if (body.result?.resultCode !== undefined && String(body.result.resultCode) !== '200') {
    throw new Error(`${method}: resultCode ${body.result.resultCode} ${body.result.resultMsg ?? ''}`);
  }
  return body.result;
}

/** The temp key, hashKey and signature of one transfer (the app's part before it asks to transfer). */
export async function signTransfer(baseUrl: string, from: Sender, to: string, amount: string) {
  const tempKey: string = (await rpcCall(baseUrl, '/token', 'net_getTempKey', { address: from.address, keyType: 'transfer' })).resultData.tempKey;
  const hashKey = sha256Hex(`${tempKey}|${from.secretKey}`);
  const data = sha256Hex(`${from.address}|${to}|${amount}|${tempKey}|${hashKey}`);
  const signed = await rpcCall(baseUrl, '/token', 'signData', { address: from.address, tempKey, hashKey, data });
  return { tempKey, hashKey, signature: signed.resultData.signature as string };
}

/** The whole scheme; answers the latency of the transfer call alone beside the whole. */
export async function specTransfer(baseUrl: string, from: Sender, to: string, amount: string): Promise<{ transferMs: number }> {
  const { tempKey, hashKey, signature } = await signTransfer(baseUrl, from, to, amount);
  const begin = performance.now();
  await rpcCall(baseUrl, '/token', 'transfer', { fromAddress: from.address, toAddress: to, amount, tempKey, hashKey, signature });
  return { transferMs: performance.now() - begin };
}
