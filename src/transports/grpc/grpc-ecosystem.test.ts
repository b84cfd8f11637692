import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoFile } from 'grpc-health-check';
import { createLogger } from '#shared/logger.ts';
import { DomainError } from '#shared/errors.ts';
import type { GrpcDeps } from './grpc-deps.ts';
import { startGrpcServer, type GrpcServer } from './grpc-server.ts';
import { python, pythonGrpcMissing, skipWithout } from '../../../test/support/parts.ts';
import { callsOf, paymentsServiceCalls } from '../../../test/support/payments-service.ts';

// What grpcurl, Postman or buf do: a client that knows no .proto of ours, only the standard
// reflection and health protos (shipped by @grpc/reflection and grpc-health-check), learns the
// payment service from the server and calls it.

const reflectionProtoDir = path.join(path.dirname(createRequire(import.meta.url).resolve('@grpc/reflection')), '../proto');
const loaderOptions: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
type Client = grpc.Client & Record<string, any>;

function clientOf(file: string, includeDirs: string[], service: string, port: number): Client {
  let pkg: any = grpc.loadPackageDefinition(protoLoader.loadSync(file, { ...loaderOptions, includeDirs }));
  for (const name of service.split('.')) pkg = pkg[name];
  return new (pkg as grpc.ServiceClientConstructor)(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as Client;
}

/** Every domain call fails: these tests reach the handlers only to see a call answered. */
const refuse = () => { throw new DomainError('request.unauthorized', 'not in this test'); };
const deps = {
  payments: new Proxy({}, { get: () => refuse }), rewards: new Proxy({}, { get: () => refuse }),
  verifyAccessToken: async () => refuse(), findUserWallet: async () => undefined,
  clock: () => Date.now(), timeZone: 'Asia/Seoul', logger: createLogger('silent'),
} as unknown as GrpcDeps;

let server: GrpcServer;
let stopped = false;
before(async () => { server = await startGrpcServer(deps, { host: '127.0.0.1', port: 0, maxMessageBytes: 65536 }); });
after(async () => { if (!stopped) await server.stop(500); });

/** One request on a reflection stream (v1 or v1alpha), its one answer. */
async function reflect(client: Client, request: Record<string, unknown>): Promise<Record<string, any>> {
  const call = client.ServerReflectionInfo();
  const answer = new Promise<Record<string, any>>((resolve, reject) => {
    call.once('data', resolve);
    call.once('error', reject);
  });
  call.write(request);
  call.end();
  return answer;
}

/** A FileDescriptorSet (field 1, repeated FileDescriptorProto) of the given encoded files. */
function descriptorSet(files: Buffer[]): Buffer {
  const varint = (n: number) => { const out: number[] = []; for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80); out.push(n); return Buffer.from(out); };
  return Buffer.concat(files.flatMap((file) => [Buffer.from([0x0a]), varint(file.length), file]));
}

for (const version of ['v1', 'v1alpha'] as const) {
  test(`reflection ${version}: lists the payment and health services`, async () => {
    const client = clientOf(`grpc/reflection/${version}/reflection.proto`, [reflectionProtoDir], `grpc.reflection.${version}.ServerReflection`, server.port);
    try {
      const answer = await reflect(client, { list_services: '*' });
      const names = answer.list_services_response.service.map((s: { name: string }) => s.name).sort();
      assert.deepEqual(names, ['g00.payments.v2.PaymentsService', 'grpc.health.v1.Health']);
    } finally {
      client.close();
    }
  });
}

test('reflection v1: the file descriptor of PaymentsService describes its five calls, and a client built from it calls one', async () => {
  const reflection = clientOf('grpc/reflection/v1/reflection.proto', [reflectionProtoDir], 'grpc.reflection.v1.ServerReflection', server.port);
  let payments: Client | undefined;
  try {
    const answer = await reflect(reflection, { file_containing_symbol: 'g00.payments.v2.PaymentsService' });
    const files: Buffer[] = answer.file_descriptor_response.file_descriptor_proto;
    assert.ok(files.length >= 1);
    const definition = protoLoader.loadFileDescriptorSetFromBuffer(descriptorSet(files), loaderOptions) as Record<string, any>;
    const service = definition['g00.payments.v2.PaymentsService'];
    assert.deepEqual(callsOf(service), paymentsServiceCalls);
    // The message types come along, with docs/interfaces.md#grpc-payments's field names.
    const common = definition['g00.payments.v2.Common'].type.field.map((f: { name: string }) => f.name);
    assert.ok(common.includes('target_api') && common.includes('res_code'));
    assert.deepEqual(definition['g00.payments.v2.PayData'].type.field.map((f: { name: string }) => f.name), ['common', 'content']);

    // A call through the reflected descriptor alone: without credentials it is answered, with a refusal.
    payments = new (grpc.loadPackageDefinition(definition) as any).g00.payments.v2.PaymentsService(
      `127.0.0.1:${server.port}`, grpc.credentials.createInsecure(),
    ) as Client;
    const reply = await new Promise<any>((resolve, reject) => {
      payments!.CancelPayment({ common: { target_api: 'cancelPayment', tran_no: 'TR1' }, content: { tid: 'T-1' } },
        (error: grpc.ServiceError | null, answer: any) => (error ? reject(error) : resolve(answer)));
    });
    assert.equal(reply.common.target_api, 'cancelPayment');
    assert.equal(reply.common.tran_no, 'TR1');
    assert.notEqual(reply.common.res_code, '00');
    assert.match(reply.common.res_message, /authorization/i);
  } finally {
    reflection.close();
    payments?.close();
  }
});

// The same from another language: Python's grpc with stubs of the two standard protos only.
const pythonClient = new URL('../../../test/interop/python_reflection_client.py', import.meta.url).pathname;

test('a Python client lists the services by reflection, reads the five calls and sees health SERVING', { skip: skipWithout('python-grpc', pythonGrpcMissing()) }, async () => {
  const stubs = mkdtempSync(path.join(tmpdir(), 'vixpay-pyreflect-'));
  try {
    const reflectionDir = path.join(reflectionProtoDir, 'grpc/reflection/v1alpha');
    const healthDir = path.dirname(healthProtoFile);
    execFileSync(python, ['-m', 'grpc_tools.protoc', `-I${reflectionDir}`, `-I${healthDir}`, `--python_out=${stubs}`, `--grpc_python_out=${stubs}`,
      path.join(reflectionDir, 'reflection.proto'), healthProtoFile]);
    // Not execFileSync: the server answers from this process's event loop.
    const { stdout } = await promisify(execFile)(python, [pythonClient, stubs, `127.0.0.1:${server.port}`], { encoding: 'utf8', timeout: 30_000 });
    const seen = JSON.parse(stdout);
    assert.deepEqual(seen, {
      services: ['g00.payments.v2.PaymentsService', 'grpc.health.v1.Health'],
      methods: [['StartPayment', true, true], ['DoPayment', true, true], ['CancelPayment', false, false], ['IssueReward', false, false], ['CancelReward', false, false]],
      health: { '': 'SERVING', 'g00.payments.v2.PaymentsService': 'SERVING' },
    });
  } finally {
    rmSync(stubs, { recursive: true, force: true });
  }
});

// buf curl (Go, like grpcurl) checks descriptors more strictly than the Node and Python libraries.
const buf = new URL('../../../node_modules/.bin/buf', import.meta.url).pathname;

test('buf curl lists every method by reflection and calls health', async () => {
  const curl = (...args: string[]) => promisify(execFile)(buf, ['curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...args], { encoding: 'utf8', timeout: 60_000 });
  const { stdout: methods } = await curl('--list-methods', `http://127.0.0.1:${server.port}`);
  assert.deepEqual(methods.trim().split('\n'), [
    ...['CancelPayment', 'CancelReward', 'DoPayment', 'IssueReward', 'StartPayment'].map((m) => `g00.payments.v2.PaymentsService/${m}`),
    ...['Check', 'List', 'Watch'].map((m) => `grpc.health.v1.Health/${m}`),
  ]);
  const { stdout: health } = await curl('-d', '{"service":"g00.payments.v2.PaymentsService"}', `http://127.0.0.1:${server.port}/grpc.health.v1.Health/Check`);
  assert.deepEqual(JSON.parse(health), { status: 'SERVING' });
});

test('health: SERVING for "" and for PaymentsService while running, NOT_FOUND for another name, NOT_SERVING once stopping', async () => {
  const health = clientOf(path.basename(healthProtoFile), [path.dirname(healthProtoFile)], 'grpc.health.v1.Health', server.port);
  const check = (service: string) => new Promise<{ status?: string; code?: grpc.status }>((resolve) => {
    health.Check({ service }, (error: grpc.ServiceError | null, reply: { status: string }) => resolve(error ? { code: error.code } : { status: reply.status }));
  });
  try {
    assert.deepEqual(await check(''), { status: 'SERVING' });
    assert.deepEqual(await check('g00.payments.v2.PaymentsService'), { status: 'SERVING' });
    assert.deepEqual(await check('no.such.Service'), { code: grpc.status.NOT_FOUND });

    // A Watch stream (what a load balancer keeps open) is told when the server begins to stop.
    const watch = health.Watch({ service: 'g00.payments.v2.PaymentsService' });
    const seen: string[] = [];
    const notServing = new Promise<void>((resolve) => {
      watch.on('data', (m: { status: string }) => { seen.push(m.status); if (m.status === 'NOT_SERVING') resolve(); });
    });
    watch.on('error', () => { /* cancelled when the server stops */ });
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
    stopped = true;
    const stopping = server.stop(300);
    await notServing;
    await stopping;
    assert.deepEqual(seen, ['SERVING', 'NOT_SERVING']);
  } finally {
    health.close();
  }
});
