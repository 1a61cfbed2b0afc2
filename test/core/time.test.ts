import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { vectorsDir } from '../support/paths.js';
import {
  formatRfc3339,
  isRfc3339DateTime,
  isRfc3339FullDate,
  isRfc3339FullTime,
  parseRfc3339,
} from '../../src/core/time.js';
import { BatonError } from '../../src/core/errors.js';

interface Group {
  tests: { description: string; data: unknown; valid: boolean }[];
}

function stringCases(file: string): { description: string; data: string; valid: boolean }[] {
  const groups = JSON.parse(
    readFileSync(join(vectorsDir, 'rfc3339-json-schema-format', file), 'utf8'),
  ) as Group[];
  // Non-string data is ignored by JSON Schema `format` (valid: true); a timestamp validator skips it.
  return groups.flatMap((g) =>
    g.tests.flatMap((c) => (typeof c.data === 'string' ? [{ ...c, data: c.data }] : [])),
  );
}

const suites = [
  { file: 'date-time.json', check: isRfc3339DateTime, expected: { total: 27, valid: 8 } },
  { file: 'date.json', check: isRfc3339FullDate, expected: { total: 75, valid: 17 } },
  { file: 'time.json', check: isRfc3339FullTime, expected: { total: 41, valid: 13 } },
];

for (const suite of suites) {
  test(`RFC 3339 vectors: ${suite.file}`, (t) => {
    const cases = stringCases(suite.file);
    assert.equal(cases.length, suite.expected.total, 'string case count as listed in SOURCE.md');
    assert.equal(cases.filter((c) => c.valid).length, suite.expected.valid);
    for (const c of cases) {
      assert.equal(suite.check(c.data), c.valid, `${c.description}: ${JSON.stringify(c.data)}`);
    }
    t.diagnostic(`checked ${cases.length} ${suite.file} cases`);
  });
}

test('parseRfc3339 agrees with the validator on every date-time vector and throws a typed error', () => {
  for (const c of stringCases('date-time.json')) {
    if (c.valid) assert.equal(typeof parseRfc3339(c.data), 'number');
    else
      assert.throws(
        () => parseRfc3339(c.data),
        (e) => e instanceof BatonError && e.code === 'time_invalid',
      );
  }
});

test('parseRfc3339 converts offsets, fractions and leap seconds to epoch milliseconds', () => {
  assert.equal(parseRfc3339('1970-01-01T00:00:00Z'), 0);
  assert.equal(parseRfc3339('1970-01-01T01:00:00+01:00'), 0);
  assert.equal(parseRfc3339('1969-12-31t19:00:00.123456-05:00'), 123);
  assert.equal(parseRfc3339('1998-12-31T23:59:60Z'), Date.UTC(1998, 11, 31, 23, 59, 59, 999));
  assert.equal(parseRfc3339('0001-01-01T00:00:00Z'), Date.UTC(2001, 0, 1) - 2000 * 365.2425 * 864e5);
  assert.equal(formatRfc3339(parseRfc3339('2026-11-29T18:49:44.5Z')), '2026-11-29T18:49:44.500Z');
  assert.throws(() => formatRfc3339(Number.NaN), BatonError);
});
