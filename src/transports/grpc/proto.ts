import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../../gen/proto/payments.ts';
import type {
  PayData, PayData__Output, _g00_payments_v2_PayData_Content, _g00_payments_v2_PayData_Content__Output,
} from '../../gen/proto/g00/payments/v2/PayData.ts';
import type { Common__Output } from '../../gen/proto/g00/payments/v2/Common.ts';
import type { State__Output } from '../../gen/proto/g00/payments/v2/State.ts';

/** proto/g00/payments/v2/payments.proto: the one contract, loaded at run time; its types are generated into src/gen/proto/. */
export const paymentsProtoFile = fileURLToPath(new URL('../../../proto/g00/payments/v2/payments.proto', import.meta.url));

/**
 * How the server (and our simulators and tests) load it: field names as in the .proto, enums by
 * name, int64 as decimal strings, every field present. scripts/generate-proto.ts generates the
 * types with these same options, so they describe exactly what the loader hands the handlers.
 */
export const protoLoaderOptions: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

// Shorter names for the generated types the transport uses. The server reads the loader's
// output types (every field set) and writes the permissive input types (any subset of fields,
// the rest go out as proto3 defaults).
export type { PayData, PayData__Output };
export type { PaymentsServiceHandlers } from '../../gen/proto/g00/payments/v2/PaymentsService.ts';
export type Content = _g00_payments_v2_PayData_Content;
export type Content__Output = _g00_payments_v2_PayData_Content__Output;
export type CommonField = keyof Common__Output;
export type StateName = State__Output;

/** The loaded package, typed by the generated `ProtoGrpcType`. */
export function loadPaymentsPackage(): ProtoGrpcType {
  const definition = protoLoader.loadSync(paymentsProtoFile, protoLoaderOptions);
  return grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
}

/** The service definition of `g00.payments.v2.PaymentsService` and its client constructor. */
export function loadPaymentsService(): ProtoGrpcType['g00']['payments']['v2']['PaymentsService'] {
  return loadPaymentsPackage().g00.payments.v2.PaymentsService;
}
