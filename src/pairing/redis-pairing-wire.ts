import { DomainError, type DomainErrorCode } from '#shared/errors.ts';
import type { SessionEvent, TransferCredentials } from './session-events.ts';

/**
 * What the Redis pairing desk keeps in Redis and sends between instances (see
 * redis-pairing-scripts.ts for the keys). Short field names: every pairing writes them.
 */

/** A POS session: its instance and its id there. */
export interface PosRef { i: string; id: string }

/** The app key's value: state, app session id, its instance, user id, user address, when it arrived (epoch ms), and its POS once paired. */
export interface AppValue { s: 'waiting' | 'paired' | 'departed'; id: string; i: string; u: string; a: string; t?: number; p?: PosRef }

interface WireError { code: DomainErrorCode; message: string; details?: string }
type WireEvent = Exclude<SessionEvent, { type: 'failed' }> | (Omit<Extract<SessionEvent, { type: 'failed' }>, 'error'> & { error: WireError });

/** To the app's instance: an event for its app stream (`pos` tells the app who paired it). */
export interface AppMessage { k: 'event'; app: string; pos?: PosRef; event: WireEvent }

/** To the POS's instance: the app arrived, sent its TRANSFER, or hung up. */
export type PosMessage =
  | { k: 'arrived'; pos: string }
  | { k: 'transfer'; pos: string; c: TransferCredentials }
  | { k: 'hangup'; pos: string };

export type Message = AppMessage | PosMessage;

export const toWire = (event: SessionEvent): WireEvent => (event.type === 'failed'
  ? { ...event, error: { code: event.error.code, message: event.error.message, ...(event.error.details !== undefined && { details: event.error.details }) } }
  : event);

export const fromWire = (event: WireEvent): SessionEvent => (event.type === 'failed'
  ? { ...event, error: new DomainError(event.error.code, event.error.message, event.error.details !== undefined ? { details: event.error.details } : {}) }
  : event);

/**
 * How long pairing keys live: a waiting app's key a little beyond its wait (its instance's timer
 * removes it first), a paired one beyond any payment (released when the payment ends).
 */
export function keyLifetimes(appWaitMs: number): { waitingMs: number; pairedMs: number } {
  return { waitingMs: appWaitMs + 10_000, pairedMs: 2 * appWaitMs + 5 * 60_000 };
}
