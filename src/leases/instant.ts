/**
 * Epoch milliseconds of an RFC 3339 date-time, with a fast path for the one form Baton writes
 * (core formatRfc3339: `YYYY-MM-DDTHH:MM:SS.sssZ`) — plain digit arithmetic, no Date parsing. Any
 * other spelling (offsets, other precisions, leap seconds, lower-case t/z) goes to the full core
 * parser, which also throws time_invalid. test/leases/instant.test.ts checks both paths agree.
 * Why: every lease carries two instants and the bench budget per lease is a few microseconds.
 */
import { parseRfc3339 } from '../core/time.js';

const SEPARATORS: ReadonlyArray<[number, number]> = [
  [4, 0x2d], // -
  [7, 0x2d], // -
  [10, 0x54], // T
  [13, 0x3a], // :
  [16, 0x3a], // :
  [19, 0x2e], // .
  [23, 0x5a], // Z
];

function digits(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

function canonicalMs(text: string): number | undefined {
  if (text.length !== 24) return undefined;
  for (const [at, code] of SEPARATORS) if (text.charCodeAt(at) !== code) return undefined;
  const [y, mo, d] = [digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2)];
  const [h, mi, s, ms] = [digits(text, 11, 2), digits(text, 14, 2), digits(text, 17, 2), digits(text, 20, 3)];
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0) return undefined;
  return daysFromCivil(y, mo, d) * 86_400_000 + ((h * 60 + mi) * 60 + s) * 1000 + ms;
}

export function instantMs(text: string): number {
  return canonicalMs(text) ?? parseRfc3339(text);
}
