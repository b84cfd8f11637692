import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import { sha256Hex } from '#shared/hash.ts';
import type { WebsiteLoginRecord, WebsiteLoginRepository } from '../store/website-login-repository.ts';

/** docs/interfaces.md#authentication-api-errors, word for word: the site's script may compare them. */
export const neverRequestedMessage = 'Never requested or timeout';
export const waitForAppMessage = 'Wait for response from user app';

export const websiteLoginLimits = {
  /** `waitTime` is seconds (docs/interfaces.md#open-points); whole seconds 1..600, 120 when the site sends none. */
  minWaitSeconds: 1,
  maxWaitSeconds: 600,
  defaultWaitSeconds: 120,
  siteMaxLength: 2048,
} as const;

export interface WebsiteLoginServiceDeps {
  repository: WebsiteLoginRepository;
  clock?: Clock;
  randomBytes?: (size: number) => Buffer;
  /**
   * A result is readable once, by the site that asked (docs/interfaces.md#website-login): result and cancel must come from
   * the IP address that started the request, since the requestId itself is shown to anyone who sees
   * the QR code. Default true; turn off for sites whose servers leave through several addresses.
   */
  bindToRequesterIp?: boolean;
  /** A completed login stays readable at least this long, even past its waitTime; default 60 s. */
  resultReadableSeconds?: number;
  /** Expired rows are deleted this long after expiry (opportunistically, on new requests); default 1 h. */
  retentionMs?: number;
}

export interface StartWebsiteLoginParameters {
  /** The site's own `requestId` (generally its URL followed by `?`). */
  site: string;
  waitTime?: number | undefined;
  requesterIp: string;
}

export interface StartWebsiteLoginReturnType {
  /** 32 random bytes, base64url: the value the site shows as a QR code and polls with. */
  requestId: string;
  waitTime: number;
  expiresAt: number;
}

export interface PendingWebsiteLogin {
  site: string;
  expiresAt: number;
}

export interface WebsiteLoginService {
  start(params: StartWebsiteLoginParameters): Promise<StartWebsiteLoginReturnType>;
  /**
   * The pending request behind a requestId read from a QR code, e.g. so the app can name the site
   * before the user agrees. Throws `auth.login_request_unknown` unless it is pending and unexpired.
   */
  describe(requestId: string): Promise<PendingWebsiteLogin>;
  /**
   * For `auth-user-with-vp` with a requestId: the user proved by the VP answers the site's request.
   * Throws `auth.login_request_unknown` when the request is unknown, expired, cancelled or already
   * completed.
   */
  complete(requestId: string, userId: string): Promise<void>;
  /**
   * The user who answered, exactly once. Throws `auth.login_request_pending` while the app has not
   * answered, `auth.login_request_unknown` when unknown, expired, cancelled, already read, or asked
   * from another IP than the requester's (see bindToRequesterIp).
   */
  takeResult(requestId: string, caller: { requesterIp: string }): Promise<{ userId: string }>;
  /** Cancels a request that was not read yet; does nothing (no error) otherwise. */
  cancel(requestId: string, caller: { requesterIp: string }): Promise<void>;
  /** Deletes the requests expired longer ago than the retention (the scheduled sweep); answers how many. */
  sweepExpired(): Promise<number>;
}

const requestIdPattern = /^[A-Za-z0-9_-]{43}$/;

export function createWebsiteLoginService(deps: WebsiteLoginServiceDeps): WebsiteLoginService {
  const { repository } = deps;
  const clock = deps.clock ?? systemClock;
  const random = deps.randomBytes ?? cryptoRandomBytes;
  const bindToRequesterIp = deps.bindToRequesterIp ?? true;
  const resultReadableMs = (deps.resultReadableSeconds ?? 60) * 1000;
  const retentionMs = deps.retentionMs ?? 3_600_000;

  const unknown = (why: string) => new DomainError('auth.login_request_unknown', neverRequestedMessage, { details: why });

  /** The live record behind a requestId, or an `unknown` error saying (in details) why not. */
  const live = async (requestId: string, now: number, requesterIp?: string): Promise<WebsiteLoginRecord> => {
    if (!requestIdPattern.test(requestId)) throw unknown('malformed requestId');
    const record = await repository.find(sha256Hex(requestId));
    if (!record) throw unknown('no such request');
    if (requesterIp !== undefined && bindToRequesterIp && record.requesterIp !== requesterIp) throw unknown('asked from another address');
    if (record.cancelledAt !== null) throw unknown('cancelled');
    if (record.consumedAt !== null) throw unknown('already read');
    if (record.expiresAt <= now) throw unknown('expired');
    return record;
  };

  return {
    async start({ site, waitTime = websiteLoginLimits.defaultWaitSeconds, requesterIp }) {
      const { minWaitSeconds, maxWaitSeconds, siteMaxLength } = websiteLoginLimits;
      if (!Number.isInteger(waitTime) || waitTime < minWaitSeconds || waitTime > maxWaitSeconds) {
        throw new DomainError('request.invalid', `waitTime: whole seconds from ${minWaitSeconds} to ${maxWaitSeconds}`, { details: 'waitTime' });
      }
      if (site.length === 0 || site.length > siteMaxLength) {
        throw new DomainError('request.invalid', `requestId: 1 to ${siteMaxLength} characters`, { details: 'requestId' });
      }
      const now = clock();
      await repository.deleteExpired(now - retentionMs);
      const requestId = random(32).toString('base64url');
      const expiresAt = now + waitTime * 1000;
      await repository.insert({
        requestIdHash: sha256Hex(requestId), site, requesterIp, expiresAt,
        userId: null, completedAt: null, consumedAt: null, cancelledAt: null, createdAt: now,
      });
      return { requestId, waitTime, expiresAt };
    },

    async describe(requestId) {
      const record = await live(requestId, clock());
      if (record.completedAt !== null) throw unknown('already answered');
      return { site: record.site, expiresAt: record.expiresAt };
    },

    async complete(requestId, userId) {
      const now = clock();
      const record = await live(requestId, now);
      if (record.completedAt !== null) throw unknown('already answered');
      const readableUntil = Math.max(record.expiresAt, now + resultReadableMs);
      if (!(await repository.complete(record.requestIdHash, userId, now, readableUntil))) throw unknown('answered or cancelled meanwhile');
    },

    async takeResult(requestId, { requesterIp }) {
      const now = clock();
      const record = await live(requestId, now, requesterIp);
      if (record.completedAt === null || record.userId === null) {
        throw new DomainError('auth.login_request_pending', waitForAppMessage);
      }
      if (!(await repository.consume(record.requestIdHash, now))) throw unknown('read or cancelled meanwhile');
      return { userId: record.userId };
    },

    async cancel(requestId, { requesterIp }) {
      if (!requestIdPattern.test(requestId)) return;
      const hash = sha256Hex(requestId);
      const record = await repository.find(hash);
      if (!record || (bindToRequesterIp && record.requesterIp !== requesterIp)) return;
      await repository.cancel(hash, clock());
    },

    sweepExpired: () => repository.deleteExpired(clock() - retentionMs),
  };
}
