import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '../src/shared/logger.ts';
import { startPaymentServer } from '../src/main.ts';
import type { GrpcServer } from '../src/transports/grpc/grpc-server.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { common, newUser, paymentsClient } from './support/payment-calls.ts';
import { waitFor } from './support/wait-for.ts';

// A gRPC call's request id: the caller's x-request-id metadata (or a new one) is answered in the
// response metadata and is `reqId` on every log line of that call, as on HTTP.

const lines: Array<Record<string, any>> = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});

let t: TestPlatform;
let server: GrpcServer;
let client: grpc.Client & Record<string, any>;
let store: { tid: string; apiKey: string; settlementAddress: string };
before(async () => {
  t = await startTestPlatform({ logger: createLogger('info', sink) });
  server = await startPaymentServer(t.platform, t.platform, { port: 0, host: '127.0.0.1' });
  client = paymentsClient(server.port);
  store = await t.platform.payments.addStore({ tid: 'RQ-1', name: 'Request Id Shop' });
  await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '100' });
  await t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => {
  client?.close();
  await server?.stop(1000);
  await t?.stop();
});

function metadataWith(apiKey: string, requestId?: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${apiKey}`);
  if (requestId !== undefined) metadata.set('x-request-id', requestId);
  return metadata;
}

/** A unary IssueReward under `tranNo`; answers the response and the response's initial metadata. */
function issueReward(metadata: grpc.Metadata, tranNo: string, amount = '2000'): Promise<{ response: any; headers: grpc.Metadata }> {
  return new Promise((resolve, reject) => {
    let headers = new grpc.Metadata();
    const call = client.IssueReward(
      { common: common('issueReward', tranNo), content: { tid: store.tid, reward_reason: `receipt-${tranNo}`, exchange_amount: amount } }, metadata,
      (error: Error | null, response: any) => (error ? reject(error) : resolve({ response, headers })),
    );
    call.on('metadata', (m: grpc.Metadata) => { headers = m; });
  });
}

/** The outcome line (`issueReward approved` or `failed`) of the call made under `tranNo`, once it is written. */
const outcomeLine = (tranNo: string) => waitFor(
  () => lines.find((l) => l.msg?.startsWith('issueReward ') && l.tran_no === tranNo),
  { timeoutMs: 5000, message: `the outcome line of ${tranNo}` },
);
const newTranNo = () => `RQ${randomUUID().slice(0, 12)}`;

test('the caller\'s x-request-id comes back in the response metadata and is reqId on the call\'s log lines', async () => {
  const requestId = `pos-${randomUUID()}`;
  const tranNo = newTranNo();
  const { response, headers } = await issueReward(metadataWith(store.apiKey, requestId), tranNo);
  assert.equal(response.common.res_code, '00', JSON.stringify(response.common));
  assert.deepEqual(headers.get('x-request-id'), [requestId]);
  const line = await outcomeLine(tranNo);
  assert.equal(line.msg, 'issueReward approved');
  assert.equal(line.reqId, requestId);
  // The id is on this call's lines only: every line carrying it is about this tran_no.
  for (const l of lines.filter((x) => x.reqId === requestId)) if (l.tran_no !== undefined) assert.equal(l.tran_no, tranNo);
});

test('without one (or with a malformed one), a fresh UUID is made, answered and logged', async () => {
  for (const given of [undefined, 'has spaces and ; semicolons', 'x'.repeat(200)]) {
    const tranNo = newTranNo();
    const { response, headers } = await issueReward(metadataWith(store.apiKey, given), tranNo);
    assert.equal(response.common.res_code, '00');
    const [made] = headers.get('x-request-id');
    assert.match(String(made), /^[0-9a-f-]{36}$/, `made for ${given}`);
    assert.equal((await outcomeLine(tranNo)).reqId, made);
  }
});

test('a failed call\'s lines carry its id too, and each concurrent call keeps its own', async () => {
  const ids = [`a-${randomUUID()}`, `b-${randomUUID()}`, `c-${randomUUID()}`];
  const tranNos = ids.map(() => newTranNo());
  const results = await Promise.all(ids.map((id, i) => issueReward(metadataWith(store.apiKey, id), tranNos[i]!)));
  results.forEach((r, i) => assert.deepEqual(r.headers.get('x-request-id'), [ids[i]]));
  for (const [i, tranNo] of tranNos.entries()) assert.equal((await outcomeLine(tranNo)).reqId, ids[i]);

  // A bad amount: the call fails with its contract code; its outcome line carries its id.
  const failing = `bad-${randomUUID()}`;
  const tranNo = newTranNo();
  const bad = await issueReward(metadataWith(store.apiKey, failing), tranNo, '-1');
  assert.equal(bad.response.common.res_code, '04');
  const failedLine = await outcomeLine(tranNo);
  assert.equal(failedLine.msg, 'issueReward failed');
  assert.equal(failedLine.code, '04');
  assert.equal(failedLine.reqId, failing);
});

test('a stream (DoPayment) answers its request id in its initial metadata', async () => {
  const user = await newUser({ t });
  const requestId = `app-${randomUUID()}`;
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${user.token}`);
  metadata.set('x-request-id', requestId);
  const call: grpc.ClientDuplexStream<any, any> = client.DoPayment(metadata);
  const headers = await new Promise<grpc.Metadata>((resolve) => call.on('metadata', resolve));
  call.on('error', () => undefined);
  assert.deepEqual(headers.get('x-request-id'), [requestId]);
  call.cancel();
});
