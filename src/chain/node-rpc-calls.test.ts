import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rpcMethodsOf } from './node-rpc-calls.ts';

test('a JSON-RPC body counts one call, a batch each of its calls, a name that is no method as other', () => {
  assert.deepEqual(rpcMethodsOf('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}'), ['eth_blockNumber']);
  assert.deepEqual(rpcMethodsOf(JSON.stringify([
    { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x00', 'latest'] },
    { jsonrpc: '2.0', id: 2, method: 'eth_getTransactionReceipt', params: ['0x01'] },
    { jsonrpc: '2.0', id: 3, method: 'eth_getBalance', params: ['0x02', 'latest'] },
  ])), ['eth_getBalance', 'eth_getTransactionReceipt', 'eth_getBalance']);
  assert.deepEqual(rpcMethodsOf('{"method":"https://node.example/key/0xabc"}'), ['other']);
  assert.deepEqual(rpcMethodsOf('not json'), []);
  assert.deepEqual(rpcMethodsOf(undefined), []);
});
