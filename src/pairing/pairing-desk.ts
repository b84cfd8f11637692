import type { SessionEvent, SessionSink, TransferCredentials } from './session-events.ts';

/** The app's DoPayment START_PAY, after its JWT was verified and its wallet looked up. */
export interface AppArrival {
  userUuid: string;
  userId: string;
  userAddress: string;
  sink: SessionSink;
}

/** What the transport holds for an app stream: it forwards TRANSFER and hang-ups. */
export interface AppConnection {
  submitTransfer(credentials: TransferCredentials): void;
  /** The app's stream ended or was cancelled. */
  hangUp(): void;
}

/** The app as the POS-side flow sees it once paired. */
export interface PairedApp {
  userId: string;
  userAddress: string;
  send(event: SessionEvent): void;
  /** Resolves with the app's TRANSFER; rejects with 01 on hang-up, with 03 after `timeoutMs`. */
  awaitTransfer(timeoutMs: number, signal: AbortSignal): Promise<TransferCredentials>;
}

/** Why a POS's attempt failed before it paired: the failure event the waiting app is told. */
export type PairingFailure = Omit<Extract<SessionEvent, { type: 'failed' }>, 'type'>;

/**
 * Pairs an app's DoPayment with a POS's StartPayment by `user_uuid`, whichever arrives first. An
 * app waits up to `appWaitMs` for a POS; a POS waits up to the window it asks for. Timeouts and
 * failure codes are in pairing-rules.ts, shared by both adapters:
 * `createPairingDesk` (in-process-pairing-desk.ts: both streams of a user_uuid on one instance) and
 * `createRedisPairingDesk` (redis-pairing-desk.ts: across instances).
 */
export interface PairingDesk {
  connectApp(arrival: AppArrival): AppConnection;
  takeApp(userUuid: string, windowMs: number, signal: AbortSignal): Promise<PairedApp>;
  /** Tells an app still waiting for this user_uuid that the POS's attempt failed, and lets it go. */
  failWaitingApp(userUuid: string, failure: PairingFailure): void;
  /**
   * Gives an app still waiting for this user_uuid the END_PAY of its payment that a POS retry found
   * approved already (its own session ended before it heard it), and lets it go.
   */
  approveWaitingApp(userUuid: string, event: Extract<SessionEvent, { type: 'end_pay' }>): void;
  /** This instance among those pairing through the same Redis (absent in-process: one instance). */
  readonly instanceId?: string;
  /**
   * Whether instance `instanceId` still beats (Redis desk). False only when it is gone at two checks
   * a heartbeat apart while this instance's own beats succeed; true when in doubt.
   */
  isInstanceAlive?(instanceId: string): Promise<boolean>;
}
