import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { loadPaymentsService } from '../src/transports/grpc/proto.ts';
import { deterministicBytes } from './support/deterministic-bytes.ts';
import { openSession, startPaymentTest, unary, type PaymentTest } from './support/payments.ts';

// item 7 of issue 19: raw bytes that are not a PayData got INTERNAL "Error deserializing request"
// (23 of 60 random messages). A request the server cannot decode is the caller's error:
// INVALID_ARGUMENT, on every call of the service, and the server keeps serving.
let p: PaymentTest;
let store: { tid: string; apiKey: string };
before(async () => {
  p = await startPaymentTest();
  store = await p.t.platform.payments.addStore({ tid: 'T-RAW', name: 'Raw Bytes Cafe' });
});
after(async () => { await p?.stop(); });

/** The service's calls with the request sent as given bytes (identity serializer), the answer kept raw. */
function rawClient(port: number): grpc.Client & Record<string, any> {
  const raw = Object.fromEntries(Object.entries(loadPaymentsService().service).map(([name, method]) => [name, {
    ...method, requestSerialize: (bytes: Buffer) => bytes, responseDeserialize: (bytes: Buffer) => bytes,
  }]));
  const RawClient = grpc.makeGenericClientConstructor(raw as grpc.ServiceDefinition, "PaymentsService");
  return new RawClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
}

function sendRaw(client: Record<string, any>, method: string, streaming: boolean, bytes: Buffer): Promise<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${store.apiKey}`);
  return new Promise((resolve) => {
    if (streaming) {
      const call = client[method](metadata) as grpc.ClientDuplexStream<Buffer, Buffer>;
      call.on('data', () => undefined);
      call.on('error', () => undefined);
      call.on('status', resolve);
      call.write(bytes);
      call.end();
    } else {
      const call = client[method](bytes, metadata, () => undefined) as grpc.ClientUnaryCall;
      call.on('status', resolve);
    }
  });
}

test('raw bytes that are not a PayData answer INVALID_ARGUMENT on every call, never INTERNAL; the server keeps serving', async () => {
  const client = rawClient(p.server.port);
  const methods = Object.entries(loadPaymentsService().service).map(([name, method]) => [name, method.requestStream] as const);
  assert.equal(methods.length, 5);
  const codes = new Map<string, number>();
  let undecodable = 0;
  try {
    for (let i = 0; i < 60; i++) {
      const bytes = Buffer.from(deterministicBytes(1 + (i * 37) % 300, `raw-grpc-${i}`));
      const [method, streaming] = methods[i % methods.length]!;
      const status = await sendRaw(client, method, streaming, bytes);
      codes.set(grpc.status[status.code]!, (codes.get(grpc.status[status.code]!) ?? 0) + 1);
      assert.notEqual(status.code, grpc.status.INTERNAL, `${method} with ${bytes.length} random bytes: ${status.details}`);
      if (status.code === grpc.status.INVALID_ARGUMENT) {
        undecodable += 1;
        assert.match(status.details, /not a valid g00\.payments\.v2\.PayData/);
      }
    }
    // Bytes that are no protobuf at all (a field number 0), on each call: always undecodable.
    for (const [method, streaming] of methods) {
      const status = await sendRaw(client, method, streaming, Buffer.from([0x00, 0x01, 0xff]));
      assert.equal(status.code, grpc.status.INVALID_ARGUMENT, `${method}: ${grpc.status[status.code]} ${status.details}`);
    }
    // More undecodable streams than GRPC_MAX_STREAMS_PER_CLIENT (20): each ends, none keeps a slot.
    for (let i = 0; i < 25; i++) {
      assert.equal((await sendRaw(client, 'StartPayment', true, Buffer.from([0x00]))).code, grpc.status.INVALID_ARGUMENT);
    }
  } finally {
    client.close();
  }
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  pos.send({ state: 'START_PAY', tid: store.tid });
  const refusal = await pos.next();
  assert.notEqual(refusal.common.res_code, '00', 'the store\'s next stream is answered (not RESOURCE_EXHAUSTED)');
  pos.call.end();
  assert.ok(undecodable >= 10, `most random bytes are no PayData (${JSON.stringify(Object.fromEntries(codes))})`);
  const answer = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: 'after-raw', exchange_amount: '1000' });
  assert.ok(answer.common.res_code, 'a well-formed call is still answered');
});
