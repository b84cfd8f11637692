import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as protoLoader from '@grpc/proto-loader';
import { paymentsProtoFile } from './proto.ts';
import { callsOf, paymentsServiceCalls } from '../../../test/support/payments-service.ts';

// docs/interfaces.md#grpc-payments's tables, field by field: number, name, type. The .proto must say exactly this.
const common = ['target_name', 'target_svc', 'target_package', 'target_api', 'source_svc', 'source_ver', 'source_addr', 'req_timestamp', 'language_code', 'rsp_timestamp', 'tran_no', 'res_code', 'res_message'];
const content: Array<[string, string]> = [
  ['state', 'TYPE_ENUM'], ['tran_no', 'TYPE_STRING'], ['user_uuid', 'TYPE_STRING'], ['token_id', 'TYPE_STRING'], ['user_address', 'TYPE_STRING'],
  ['expiration_time', 'TYPE_INT64'], ['settlement_address', 'TYPE_STRING'], ['store_name', 'TYPE_STRING'], ['token_amount', 'TYPE_STRING'],
  ['transfer_key', 'TYPE_STRING'], ['transfer_signature', 'TYPE_STRING'], ['transfer_comment', 'TYPE_STRING'], ['transfer_transaction_id', 'TYPE_STRING'],
  ['approval_no', 'TYPE_STRING'], ['approval_date', 'TYPE_STRING'], ['exchange_date_index', 'TYPE_STRING'], ['exchange_rate', 'TYPE_STRING'],
  ['exchange_amount', 'TYPE_STRING'], ['exchange_currency', 'TYPE_STRING'], ['reward_id', 'TYPE_STRING'], ['reward_date', 'TYPE_STRING'],
  ['reward_reason', 'TYPE_STRING'], ['tid', 'TYPE_STRING'], ['contract_address', 'TYPE_STRING'], ['token_symbol', 'TYPE_STRING'], ['hash_key', 'TYPE_STRING'],
];

interface FieldDescriptor { name: string; number: number; type: string; label: string; typeName: string }
const shape = (fields: FieldDescriptor[]) => fields.map((f) => [f.number, f.name, f.type, f.label]);

test('payments.proto is docs/interfaces.md#grpc-payments field for field', () => {
  const definition = protoLoader.loadSync(paymentsProtoFile, { keepCase: true }) as Record<string, any>;
  assert.deepEqual(shape(definition['g00.payments.v2.Common'].type.field), common.map((name, i) => [i + 1, name, 'TYPE_STRING', 'LABEL_OPTIONAL']));
  const payData = definition['g00.payments.v2.PayData'].type;
  assert.deepEqual(shape(payData.field), [[1, 'common', 'TYPE_MESSAGE', 'LABEL_OPTIONAL'], [2, 'content', 'TYPE_MESSAGE', 'LABEL_OPTIONAL']]);
  assert.deepEqual(payData.field.map((f: FieldDescriptor) => f.typeName), ['Common', 'Content']);
  const nested = payData.nestedType.find((t: { name: string }) => t.name === 'Content');
  assert.deepEqual(shape(nested.field), content.map(([name, type], i) => [i + 1, name, type, 'LABEL_OPTIONAL']));
  assert.equal(nested.field[0].typeName, 'State');
  assert.deepEqual(definition['g00.payments.v2.State'].type.value.map((v: { name: string; number: number }) => [v.name, v.number]), [
    ['START_PAY', 0], ['REQUEST_TRANSFER', 1], ['TRANSFER', 2], ['END_PAY', 3], ['START_REWARD', 4], ['END_REWARD', 5],
  ]);
  const service = definition['g00.payments.v2.PaymentsService'];
  assert.deepEqual(callsOf(service), paymentsServiceCalls);
});
