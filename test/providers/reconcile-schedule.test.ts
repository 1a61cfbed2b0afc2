/** The background reconciler's schedule (src/providers/reconcile-schedule.ts): pure, seeded. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  backoffDelayMs,
  MAX_RETRY_AFTER_MS,
  nextAskAt,
  parseRetryAfter,
  seededRandom,
} from '../../src/providers/index.js';

const policy = { initialMs: 1000, maxMs: 16_000 };

test('backoff doubles per unanswered ask, with equal jitter in [base/2, base], capped at max', () => {
  const random = seededRandom(42);
  for (let n = 1; n <= 8; n++) {
    const base = Math.min(1000 * 2 ** (n - 1), 16_000);
    const d = backoffDelayMs(n, policy, random);
    assert.ok(d >= base / 2 && d <= base, `attempt ${n}: ${d} within [${base / 2}, ${base}]`);
  }
  assert.equal(
    backoffDelayMs(3, policy, () => 0),
    2000,
  );
  assert.equal(
    backoffDelayMs(3, policy, () => 0.999999),
    4000,
  );
  assert.equal(
    backoffDelayMs(30, policy, () => 0),
    8000,
    'the cap holds for large counts',
  );
});

test('the seeded jitter is reproducible and not constant', () => {
  const a = seededRandom(7);
  const b = seededRandom(7);
  const xs = Array.from({ length: 5 }, () => a());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b()),
  );
  assert.ok(new Set(xs).size > 1);
  assert.ok(xs.every((x) => x >= 0 && x < 1));
});

test('Retry-After: delay-seconds and HTTP-dates, capped; unreadable values are ignored', () => {
  const now = Date.UTC(2026, 11, 1, 12, 0, 0);
  assert.equal(parseRetryAfter('120', now), 120_000);
  assert.equal(parseRetryAfter(' 5 ', now), 5_000);
  assert.equal(parseRetryAfter('Tue, 01 Dec 2026 12:01:30 GMT', now), 90_000);
  assert.equal(parseRetryAfter('Tue, 01 Dec 2026 11:00:00 GMT', now), 0, 'a past date: no extra wait');
  assert.equal(parseRetryAfter('99999999', now), MAX_RETRY_AFTER_MS);
  for (const bad of [undefined, '', '-1', '1.5', 'soon', '2026-12-01T12:00:00Z']) {
    assert.equal(parseRetryAfter(bad, now), undefined, String(bad));
  }
});

test('the next ask honours Retry-After as a floor, never shortens the backoff', () => {
  const now = 1_000_000;
  assert.equal(
    nextAskAt(now, 1, policy, () => 0, 120_000),
    now + 120_000,
  );
  assert.equal(
    nextAskAt(now, 5, policy, () => 0, 10),
    now + 8000,
  );
  assert.equal(
    nextAskAt(now, 1, policy, () => 0),
    now + 500,
  );
});
