/**
 * Strict RFC 3339 timestamps (§5.6), checked against the JSON-Schema-Test-Suite `format` cases.
 * Accepted: `T`/`t` and `Z`/`z` (RFC 3339 §5.6 note), fractions of any length, `-00:00`, and a
 * leap second only where the time converted to UTC is 23:59:60 (the §5.7 reading the suite uses;
 * whether a leap second really happened that day is not checked). Refused: anything ISO 8601
 * allows beyond that (ordinal dates, `,` decimals, missing offset minutes, non-ASCII digits,
 * trailing text), days the month does not have.
 */
import { BatonError } from './errors.js';

const DATE = '([0-9]{4})-([0-9]{2})-([0-9]{2})';
const TIME = '([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})';
const DATE_RE = new RegExp(`^${DATE}$`);
const TIME_RE = new RegExp(`^${TIME}$`);
const DATE_TIME_RE = new RegExp(`^${DATE}[Tt]${TIME}$`);

interface Parts {
  year: number;
  month: number;
  day: number;
}

interface TimeParts {
  hour: number;
  minute: number;
  second: number;
  fraction: string;
  offsetMinutes: number;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function checkDate(y: string, m: string, d: string): Parts | undefined {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  return { year, month, day };
}

function checkTime(
  h: string,
  mi: string,
  s: string,
  frac: string | undefined,
  off: string,
): TimeParts | undefined {
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (off !== 'Z' && off !== 'z') {
    const oh = Number(off.slice(1, 3));
    const om = Number(off.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (off.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  if (second === 60) {
    // A leap second exists only at 23:59:60 UTC.
    const utcMinutes = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
    if (utcMinutes !== 23 * 60 + 59) return undefined;
  }
  return { hour, minute, second, fraction: frac ?? '', offsetMinutes };
}

export function isRfc3339FullDate(text: string): boolean {
  const m = DATE_RE.exec(text);
  return m !== null && checkDate(m[1]!, m[2]!, m[3]!) !== undefined;
}

export function isRfc3339FullTime(text: string): boolean {
  const m = TIME_RE.exec(text);
  return m !== null && checkTime(m[1]!, m[2]!, m[3]!, m[4], m[5]!) !== undefined;
}

export function isRfc3339DateTime(text: string): boolean {
  return tryParse(text) !== undefined;
}

function tryParse(text: string): number | undefined {
  const m = DATE_TIME_RE.exec(text);
  if (m === null) return undefined;
  const date = checkDate(m[1]!, m[2]!, m[3]!);
  const time = checkTime(m[4]!, m[5]!, m[6]!, m[7], m[8]!);
  if (date === undefined || time === undefined) return undefined;
  const millis = Number(time.fraction.padEnd(3, '0').slice(0, 3));
  // A leap second maps to the last millisecond of :59, so instants stay ordered.
  const [second, ms] = time.second === 60 ? [59, 999] : [time.second, millis];
  const utc = Date.UTC(date.year, date.month - 1, date.day, time.hour, time.minute, second, ms);
  // Date.UTC maps years 0-99 to 1900-1999; set the full year explicitly.
  const fixed = new Date(utc);
  fixed.setUTCFullYear(date.year);
  return fixed.getTime() - time.offsetMinutes * 60_000;
}

/**
 * Epoch milliseconds of an RFC 3339 date-time (fractions beyond milliseconds are truncated). A
 * refusal (`time_invalid`) names `path` — the query parameter or JSON member the text came from,
 * as `$.from` or `$.expires_at` — and never the text itself (docs/api.md: a refusal names the
 * place and the rule, never the value).
 */
export function parseRfc3339(text: string, path?: string): number {
  const ms = typeof text === 'string' ? tryParse(text) : undefined;
  if (ms === undefined) {
    if (path === undefined) throw new BatonError('time_invalid', 'not an RFC 3339 date-time');
    throw new BatonError('time_invalid', `${path}: not an RFC 3339 date-time`, { path });
  }
  return ms;
}

/** The first and last instants RFC 3339 can write: its `date-fullyear` has exactly four digits. */
export const MIN_RFC3339_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
export const MAX_RFC3339_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * UTC, `Z`, millisecond precision: `2026-11-29T18:49:44.000Z`. An instant outside years 0000–9999
 * is refused (`time_invalid`): `toISOString` would write it with an expanded year
 * (`+010000-01-01T…`) that `parseRfc3339` — and every other RFC 3339 reader — refuses, so a value
 * written here could never be read back.
 */
export function formatRfc3339(ms: number): string {
  if (!Number.isFinite(ms)) throw new BatonError('time_invalid', 'not a finite instant');
  if (ms < MIN_RFC3339_MS || ms > MAX_RFC3339_MS)
    throw new BatonError('time_invalid', 'instant outside the years RFC 3339 can write (0000-9999)');
  return new Date(ms).toISOString();
}
