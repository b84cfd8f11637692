/** docs/interfaces.md#grpc-payments's five calls of g00.payments.v2.PaymentsService: path, client streaming, server streaming. */
export const paymentsServiceCalls = [
  ['StartPayment', '/g00.payments.v2.PaymentsService/StartPayment', true, true],
  ['DoPayment', '/g00.payments.v2.PaymentsService/DoPayment', true, true],
  ['CancelPayment', '/g00.payments.v2.PaymentsService/CancelPayment', false, false],
  ['IssueReward', '/g00.payments.v2.PaymentsService/IssueReward', false, false],
  ['CancelReward', '/g00.payments.v2.PaymentsService/CancelReward', false, false],
] as const;

/** The calls of a service definition as @grpc/proto-loader loads it, in the shape of `paymentsServiceCalls`. */
export function callsOf(service: Record<string, { path: string; requestStream: boolean; responseStream: boolean }>) {
  return Object.entries(service).map(([name, m]) => [name, m.path, m.requestStream, m.responseStream]);
}
