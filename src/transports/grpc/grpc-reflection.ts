import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { protoPath as healthProtoFile } from 'grpc-health-check';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import type { IDescriptorProto, IFileDescriptorProto } from 'protobufjs/ext/descriptor/index.js';
import { paymentsProtoFile, protoLoaderOptions } from './proto.ts';

/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`), so grpcurl, Postman and buf can list
 * `g00.payments.v2.PaymentsService` and `grpc.health.v1.Health` and call them without our `.proto`.
 * The descriptors it serves are built from the same file the server loads; @grpc/reflection names
 * each file after its package (`g00_payments_v2.proto`), not after its path.
 */
export function addReflectionService(server: grpc.Server): void {
  const definition = protoLoader.loadSync([paymentsProtoFile, healthProtoFile], protoLoaderOptions);
  for (const entry of Object.values(definition)) {
    if ('fileDescriptorProtos' in entry && Array.isArray(entry.fileDescriptorProtos)) entry.fileDescriptorProtos = entry.fileDescriptorProtos.map(withMapEntryNames);
  }
  new ReflectionService(definition).addToServer(server);
}

/**
 * protobufjs names a map field's entry message after the field (`Statuses`), where protoc names it
 * `<Field>Entry` (`StatusesEntry`). Go's descriptor checks refuse the former, so without this buf curl
 * and grpcurl cannot read `grpc.health.v1` (its `List` answers a map). Wire format is unchanged.
 */
function withMapEntryNames(encoded: Buffer): Buffer {
  const file = descriptor.FileDescriptorProto.toObject(descriptor.FileDescriptorProto.decode(encoded)) as IFileDescriptorProto;
  const rename = (message: IDescriptorProto): void => {
    for (const nested of message.nestedType ?? []) {
      rename(nested);
      if (!nested.options?.mapEntry || !nested.name || nested.name.endsWith('Entry')) continue;
      const entryName = `${nested.name}Entry`;
      for (const field of message.field ?? []) if (field.typeName === nested.name) field.typeName = entryName;
      nested.name = entryName;
    }
  };
  (file.messageType ?? []).forEach(rename);
  return Buffer.from(descriptor.FileDescriptorProto.encode(descriptor.FileDescriptorProto.fromObject(file)).finish());
}
