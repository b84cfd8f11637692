import * as grpc from '@grpc/grpc-js';

/**
 * A request whose bytes are not the call's message type is the caller's error: INVALID_ARGUMENT.
 * grpc-js answers INTERNAL ("Error deserializing request") when a service's `requestDeserialize`
 * throws, whatever it throws; so the service's deserializers answer a marker instead of throwing
 * (`decodingService`), and `undecodableRequestInterceptor` answers the marker with
 * INVALID_ARGUMENT before any handler sees it.
 */
const undecodable = Symbol('undecodable request');

interface UndecodableRequest {
  readonly [undecodable]: string;
}

const isUndecodable = (message: unknown): message is UndecodableRequest =>
  typeof message === 'object' && message !== null && undecodable in message;

/** `service` with each call's request deserializer answering the marker instead of throwing. */
export function decodingService<S extends grpc.ServiceDefinition>(service: S): S {
  return Object.fromEntries(Object.entries(service).map(([name, method]) => {
    const { requestDeserialize, requestType } = method as typeof method & { requestType?: { type?: { name?: string } } };
    // `/g00.payments.v2.PaymentsService/IssueReward` with a PayData request: g00.payments.v2.PayData.
    const servicePackage = method.path.slice(1).split('/')[0]!.split('.').slice(0, -1).join('.');
    const typeName = requestType?.type?.name ? `${servicePackage}.${requestType.type.name}` : 'request message';
    return [name, {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return requestDeserialize(bytes);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          return { [undecodable]: `request is not a valid ${typeName}: ${reason}` } satisfies UndecodableRequest;
        }
      },
    }];
  })) as S;
}

/** Answers a request `decodingService` could not decode with INVALID_ARGUMENT; passes every other message on. */
export const undecodableRequestInterceptor: grpc.ServerInterceptor = (_method, call) => {
  const intercepting: grpc.ServerInterceptingCall = new grpc.ServerInterceptingCall(call, {
    start: (next) => next({
      onReceiveMessage: (message, pass) => {
        if (!isUndecodable(message)) {
          pass(message);
          return;
        }
        intercepting.sendStatus({ code: grpc.status.INVALID_ARGUMENT, details: message[undecodable], metadata: new grpc.Metadata() });
      },
    }),
  });
  return intercepting;
};
