import { DomainError } from '#shared/errors.ts';
import { formatDate, formatDateTime } from '../commerce/platform-dates.ts';
import { startOfDay } from '#shared/day-start.ts';

/** A day of the platform's time zone: `yyyy-mm-dd`, and the epoch ms it starts and the next day starts. */
export interface StatementDay {
  date: string;
  startMs: number;
  endMs: number;
}

const hourMs = 3_600_000;

/** `yyyy-mm-dd` → its bounds in `timeZone` (a day of a daylight-saving change lasts 23 or 25 hours). */
export function statementDay(date: string, timeZone: string): StatementDay {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const wanted = match ? `${match[1]}${match[2]}${match[3]}` : '';
  let at = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 12) : Number.NaN;
  // Noon UTC is that calendar day in every zone within ±12 h; a zone beyond is stepped towards it.
  for (let i = 0; i < 4 && Number.isFinite(at) && formatDate(at, timeZone) !== wanted; i++) at += formatDate(at, timeZone) < wanted ? 6 * hourMs : -6 * hourMs;
  if (!Number.isFinite(at) || formatDate(at, timeZone) !== wanted) {
    throw new DomainError('request.invalid', 'the date must be a calendar day as yyyy-mm-dd', { details: 'date' });
  }
  const startMs = startOfDay(at, timeZone);
  return { date, startMs, endMs: startOfDay(startMs + 30 * hourMs, timeZone) };
}

/** The day `epochMs` falls in, as `yyyy-mm-dd`. */
export function dateOf(epochMs: number, timeZone: string): string {
  const d = formatDate(epochMs, timeZone);
  return `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}`;
}

/** `yyyy-mm-dd HH:MM:SS` in `timeZone`: what a spreadsheet reads as a date and time. */
export function localDateTime(epochMs: number, timeZone: string): string {
  const t = formatDateTime(epochMs, timeZone);
  return `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)} ${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}`;
}

/**
 * An instant as ISO 8601 with `timeZone`'s offset there, to the millisecond:
 * `2026-11-28T00:00:00.000+09:00`. A reader sees the zone's wall clock and the instant both.
 */
export function zonedIsoTime(epochMs: number, timeZone: string): string {
  const t = formatDateTime(epochMs, timeZone);
  const wallMs = Date.UTC(Number(t.slice(0, 4)), Number(t.slice(4, 6)) - 1, Number(t.slice(6, 8)), Number(t.slice(8, 10)), Number(t.slice(10, 12)), Number(t.slice(12, 14)));
  const offsetMinutes = Math.round((wallMs - Math.floor(epochMs / 1000) * 1000) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  const ms = String(((epochMs % 1000) + 1000) % 1000).padStart(3, '0');
  return `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}.${ms}${offset}`;
}
