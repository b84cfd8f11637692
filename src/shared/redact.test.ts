import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RpcRequestError, TransactionRejectedRpcError } from 'viem';
import { errorSummary } from './redact.ts';

const signed = `0x02f8${'ab'.repeat(120)}`;

test("a node's refusal is summarized with the node's own words and without the signed bytes it quotes", () => {
  const refused = new TransactionRejectedRpcError(new RpcRequestError({
    body: { method: 'eth_sendRawTransaction', params: [signed] }, url: 'http://127.0.0.1:8545',
    error: { code: -32003, message: `nonce too high: tx nonce 7, next nonce 5 (${signed})` },
  }));
  assert.equal(errorSummary(refused), 'TransactionRejectedRpcError: Transaction creation failed. (nonce too high: tx nonce 7, next nonce 5 ([hex redacted]))');
});

test('an error without a node message is its name and first line; one whose details repeat the message is said once', () => {
  assert.equal(errorSummary(new Error(`no receipt\nfor ${signed}`)), 'Error: no receipt');
  const timeout = Object.assign(new Error('The request took too long to respond.'), { shortMessage: 'The request took too long to respond.', details: 'The request timed out.' });
  assert.equal(errorSummary(timeout), 'Error: The request took too long to respond. (The request timed out.)');
  const same = Object.assign(new Error('execution reverted'), { details: 'execution reverted' });
  assert.equal(errorSummary(same), 'Error: execution reverted');
  assert.equal(errorSummary(`plain ${signed}`), 'plain [hex redacted]');
});
