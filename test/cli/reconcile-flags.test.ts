/** `baton serve --reconcile-every` / `--reconcile-concurrency` values (src/cli/reconcile-wiring.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConcurrency, parseDuration } from '../../src/cli/reconcile-wiring.js';

test('durations: ms, s, m, h or bare seconds, 100 ms to 24 h', () => {
  assert.equal(parseDuration('500ms', '--x'), 500);
  assert.equal(parseDuration('30s', '--x'), 30_000);
  assert.equal(parseDuration('1.5m', '--x'), 90_000);
  assert.equal(parseDuration('2h', '--x'), 7_200_000);
  assert.equal(parseDuration('10', '--x'), 10_000);
  for (const bad of ['', '99ms', '25h', '-1s', '1d', 'soon', '1e3', '5 s']) {
    assert.throws(() => parseDuration(bad, '--reconcile-every'), { code: 'usage' }, bad);
  }
});

test('concurrency: 1..256, default 4', () => {
  assert.equal(parseConcurrency(undefined), 4);
  assert.equal(parseConcurrency('16'), 16);
  for (const bad of ['0', '257', '-1', '1.5', 'x'])
    assert.throws(() => parseConcurrency(bad), { code: 'usage' });
});
