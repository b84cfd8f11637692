import { DomainError } from '#shared/errors.ts';
import type { SessionEvent, TransferCredentials } from './session-events.ts';

/**
 * What every pairing desk does alike, whatever carries its messages: the failures it answers with
 * (01, 03, 11), which events end an app's stream, the bounded waits of a POS (for the app, for its
 * TRANSFER) and the hand-off of the app's TRANSFER to the POS that waits for it.
 */

/** 01: the app (or the POS) left before the TRANSFER. */
export const canceled = () => new DomainError('payment.canceled_by_user', 'the payment was canceled before the transfer');

/** 03 to an app no POS came for within its wait. */
export const appWaitExpired = () => new DomainError('payment.expired', 'no POS started a payment for this user_uuid in time');

/** 03 to a POS whose app did not come within the pairing window. */
export const pairingWindowExpired = () => new DomainError('payment.expired', 'the app did not connect within the pairing window');

/** 03 to a POS whose app sent no TRANSFER in time. */
export const transferExpired = () => new DomainError('payment.expired', 'no TRANSFER from the app within the time allowed');

/**
 * 10 to an app that sent its TRANSFER to a POS's instance that then died (Redis desk): whether the
 * transfer ran is not known on this instance; the POS's retry of the tran_no settles the payment.
 */
export const posInstanceLost = () => new DomainError('internal', 'the instance handling the POS stopped after the TRANSFER; the payment\'s outcome is settled when the POS retries the tran_no');

/** 11 to an app whose user_uuid another DoPayment holds. */
export const userUuidInUse = () => new DomainError('request.invalid', 'this user_uuid is already in use by another DoPayment', { details: 'user_uuid' });

/** 11 to a POS whose app another POS already paired with. */
export const userUuidInPayment = () => new DomainError('request.invalid', 'this user_uuid is already in a payment', { details: 'user_uuid' });

/** 11 to a second POS waiting for the same absent app. */
export const posAlreadyWaiting = () => new DomainError('request.invalid', 'another POS is already waiting for this user_uuid', { details: 'user_uuid' });

/** 11 to an app that sends TRANSFER before it was asked. */
export const transferBeforeRequest = () => new DomainError('request.invalid', 'TRANSFER before REQUEST_TRANSFER', { details: 'state' });

/** END_PAY, END_REWARD and failures end the app's stream and free its user_uuid. */
export const endsStream = (event: SessionEvent) => event.type === 'end_pay' || event.type === 'end_reward' || event.type === 'failed';

export interface Settle<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

export interface WaitHooks {
  /** Runs once when the wait ends, however it ends. */
  stop?(): void;
  /**
   * The wait timed out or was aborted; `fail` ends it with that. Holding `fail` back lets a step in
   * flight finish first (and settle the wait itself).
   */
  interrupted?(fail: () => void): void;
}

/**
 * Waits until `begin` settles, at most `timeoutMs` (then `expiry()`: 03) and while `signal` is live
 * (then 01; at once when it is already aborted). `begin` gets the settlement and returns its hooks.
 *
 * @example
 * waitWithin(windowMs, signal, pairingWindowExpired, (settle) => {
 *   waiting.set(userUuid, settle.resolve);
 *   return { stop: () => waiting.delete(userUuid) };
 * });
 */
export function waitWithin<T>(timeoutMs: number, signal: AbortSignal, expiry: () => DomainError, begin: (settle: Settle<T>) => WaitHooks): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(canceled());
    let ended = false;
    let hooks: WaitHooks = {};
    const end = (finish: () => void) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      hooks.stop?.();
      finish();
    };
    const settle: Settle<T> = { resolve: (value) => end(() => resolve(value)), reject: (error) => end(() => reject(error)) };
    const interrupt = (error: DomainError) => {
      const fail = () => settle.reject(error);
      if (hooks.interrupted) hooks.interrupted(fail);
      else fail();
    };
    const timer = setTimeout(() => interrupt(expiry()), timeoutMs);
    const onAbort = () => interrupt(canceled());
    signal.addEventListener('abort', onAbort, { once: true });
    hooks = begin(settle);
    if (ended) hooks.stop?.();
  });
}

/**
 * The app's TRANSFER on its way to the POS's flow: the first TRANSFER counts, one given before a
 * hang-up is kept, and a hang-up without one ends the POS's wait with 01.
 */
export interface TransferHandoff {
  readonly hungUp: boolean;
  submit(credentials: TransferCredentials): void;
  hangUp(): void;
  /** `PairedApp.awaitTransfer`: the TRANSFER, or 01 on hang-up or abort, 03 after `timeoutMs`. */
  await(timeoutMs: number, signal: AbortSignal): Promise<TransferCredentials>;
}

export function createTransferHandoff(): TransferHandoff {
  let transfer: TransferCredentials | undefined;
  let hungUp = false;
  let waiter: Settle<TransferCredentials> | undefined;
  return {
    get hungUp() { return hungUp; },
    submit(credentials) {
      if (transfer) return;
      transfer = credentials;
      waiter?.resolve(credentials);
    },
    hangUp() {
      if (hungUp) return;
      hungUp = true;
      if (!transfer) waiter?.reject(canceled());
    },
    await(timeoutMs, signal) {
      if (transfer) return Promise.resolve(transfer);
      if (hungUp) return Promise.reject(canceled());
      return waitWithin(timeoutMs, signal, transferExpired, (settle) => {
        waiter = settle;
        return { stop: () => { waiter = undefined; } };
      });
    },
  };
}
