import type { z } from 'zod';
import type { NetworkName } from '#shared/networks.ts';

export interface RpcContext {
  /** The network the request's Host label selects; throws `network.unknown` for an unknown label. */
  network(): NetworkName;
  log: { error(details: object, message: string): void };
}

/**
 * A `resultData` already written as JSON (an immutable record answered many times, such as an old
 * block): the dispatcher puts the text in the response as it is instead of serializing it again.
 */
export class JsonText {
  readonly text: string;
  constructor(text: string) { this.text = text; }
}

export interface RpcSuccess {
  /** Serialized with `stringifyJson` (bigint as exact numbers), or answered as it is when JsonText. */
  resultData: unknown;
  /** Set by transaction-creating calls; answered beside the result fields as `TransactionID`. */
  transactionId?: string;
  resultCode?: string;
  resultMessage?: string;
}

export interface RpcMethod<P = unknown> {
  params: z.ZodType<P>;
  run(params: P, context: RpcContext): Promise<RpcSuccess>;
}

/** Keeps each method's params type tied to its schema. */
export function rpcMethod<P>(method: RpcMethod<P>): RpcMethod<unknown> {
  return method as RpcMethod<unknown>;
}

export type RpcMethods = Readonly<Record<string, RpcMethod<unknown>>>;
