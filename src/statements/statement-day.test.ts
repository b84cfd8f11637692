import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DomainError } from '#shared/errors.ts';
import { dateOf, statementDay } from './statement-day.ts';

// A statement's date comes from outside (GET /v1/statements/{date}, the console, `vixpay statement`):
// any string is a calendar day of the platform's zone, with its exact bounds, or refused with
// request.invalid.
const seed = 29;
const zones = fc.constantFrom('Asia/Seoul', 'UTC', 'America/New_York', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/St_Johns');
const hourMs = 3_600_000;
const instants = fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(9998, 11, 31) });

test('the day of any instant holds it, lasts 23 to 25 hours, and ends where the next day starts', () => {
  fc.assert(fc.property(instants, zones, (at, zone) => {
    const day = statementDay(dateOf(at, zone), zone);
    const next = statementDay(dateOf(day.endMs, zone), zone);
    return day.startMs <= at && at < day.endMs && day.endMs - day.startMs >= 23 * hourMs && day.endMs - day.startMs <= 25 * hourMs
      && dateOf(day.startMs, zone) === day.date && dateOf(day.endMs - 1, zone) === day.date && next.startMs === day.endMs;
  }), { seed, numRuns: 800 });
});

test('any other string is refused with request.invalid, never a TypeError or a nearby day', () => {
  const strings = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.stringMatching(/^[0-9-]{0,12}$/),
    fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }))
      .map(([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
  );
  fc.assert(fc.property(strings, zones, (input, zone) => {
    try {
      const day = statementDay(input, zone);
      // Taken: it is exactly the day it names.
      return day.date === input && dateOf(day.startMs, zone) === input;
    } catch (error) {
      return error instanceof DomainError && error.code === 'request.invalid';
    }
  }), { seed, numRuns: 3000 });
  for (const bad of ['2026-02-30', '2026-13-01', '2026-00-10', '2026-1-01', ' 2026-01-01', '2026-01-01T00:00', '20260101', '']) {
    assert.throws(() => statementDay(bad, 'Asia/Seoul'), { code: 'request.invalid' }, bad);
  }
});
