import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { call } from './platform.ts';

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

export interface Wallet {
  address: string;
  secretKey: string;
  mnemonic?: string;
}

/** What an app does by hand: temp key, hashKey, the signed string, signData. */
export async function prepareTransfer(app: FastifyInstance, from: Wallet, to: string, amount: string, url = '/token', host?: string) {
  const tempKey: string = (await call(app, url, 'net_getTempKey', { address: from.address, keyType: 'transfer' }, host)).resultData.tempKey;
  const hashKey = sha256Hex(`${tempKey}|${from.secretKey}`);
  const data = sha256Hex(`${from.address}|${to}|${amount}|${tempKey}|${hashKey}`);
  const signed = await call(app, url, 'signData', { address: from.address, tempKey, hashKey, data }, host);
  return { fromAddress: from.address, toAddress: to, amount, tempKey, hashKey, signature: signed.resultData.signature as string, data };
}
