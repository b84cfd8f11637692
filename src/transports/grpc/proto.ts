import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** proto/g00/payments/v2/payments.proto: the one contract; loaded at run time, no generated code. */
export const paymentsProtoFile = fileURLToPath(new URL('../../../proto/g00/payments/v2/payments.proto', import.meta.url));

/** How the server (and our simulators and tests) load it: field names as in the .proto. */
export const protoLoaderOptions: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

export const stateNames = ['START_PAY', 'REQUEST_TRANSFER', 'TRANSFER', 'END_PAY', 'START_REWARD', 'END_REWARD'] as const;
export type StateName = (typeof stateNames)[number];

/** `Common` as loaded (every field a string; res_* and rsp_timestamp set only on responses). */
export interface CommonMessage {
  target_name: string;
  target_svc: string;
  target_package: string;
  target_api: string;
  source_svc: string;
  source_ver: string;
  source_addr: string;
  req_timestamp: string;
  language_code: string;
  rsp_timestamp: string;
  tran_no: string;
  res_code: string;
  res_message: string;
}

/** `PayData.Content` as loaded: the enum by name, int64 as a decimal string. */
export interface ContentMessage {
  state: StateName;
  tran_no: string;
  user_uuid: string;
  token_id: string;
  user_address: string;
  expiration_time: string;
  settlement_address: string;
  store_name: string;
  token_amount: string;
  transfer_key: string;
  transfer_signature: string;
  transfer_comment: string;
  transfer_transaction_id: string;
  approval_no: string;
  approval_date: string;
  exchange_date_index: string;
  exchange_rate: string;
  exchange_amount: string;
  exchange_currency: string;
  reward_id: string;
  reward_date: string;
  reward_reason: string;
  tid: string;
  contract_address: string;
  token_symbol: string;
  hash_key: string;
}

export interface PayDataMessage {
  common: CommonMessage | null;
  content: ContentMessage | null;
}

/** What we write: any subset of the fields (the rest go out as proto3 defaults). */
export interface PayDataReply {
  common: Partial<CommonMessage>;
  content: Partial<ContentMessage>;
}

export function loadPaymentsPackage(): grpc.GrpcObject {
  const definition = protoLoader.loadSync(paymentsProtoFile, protoLoaderOptions);
  return grpc.loadPackageDefinition(definition);
}

/** The service definition of `g00.payments.v2.PaymentsService` and its client constructor. */
export function loadPaymentsService(): grpc.ServiceClientConstructor {
  const pkg = loadPaymentsPackage() as unknown as { g00: { payments: { v2: { PaymentsService: grpc.ServiceClientConstructor } } } };
  return pkg.g00.payments.v2.PaymentsService;
}
