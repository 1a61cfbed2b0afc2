/**
 * URL templates (src/providers/url-template.ts): a provider-supplied value fills one path segment
 * and nothing else. `.` and `..` would be resolved as dot segments by URL parsing — `..` as a
 * reference would send the credentialed lookup to another path on the origin — so they are
 * refused, as is an empty value (it would drop the segment); nothing is fetched.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandUrl } from '../../src/providers/url-template.js';

const LOOKUP = 'https://api.example/v1/payment_intents/{reference}';

test('expandUrl: a value is one percent-encoded path segment (no new segment, query or host)', () => {
  assert.equal(
    expandUrl(LOOKUP, { reference: 'pi_123' }).href,
    'https://api.example/v1/payment_intents/pi_123',
  );
  assert.equal(
    expandUrl(LOOKUP, { reference: '../a/b?x=1#f' }).href,
    'https://api.example/v1/payment_intents/..%2Fa%2Fb%3Fx%3D1%23f',
  );
  // A `%` is itself encoded, so encoded dots stay data and are not resolved.
  assert.equal(
    expandUrl(LOOKUP, { reference: '%2e%2e' }).href,
    'https://api.example/v1/payment_intents/%252e%252e',
  );
  assert.equal(expandUrl(LOOKUP, { reference: '...' }).href, 'https://api.example/v1/payment_intents/...');
});

test('expandUrl: ".", ".." and "" are refused (status_source_invalid) instead of removing a path segment', () => {
  for (const reference of ['..', '.', '']) {
    assert.throws(
      () => expandUrl(LOOKUP, { reference }),
      (e: unknown) => {
        const err = e as { code?: string; details?: Record<string, unknown> };
        assert.equal(err.code, 'status_source_invalid', `reference ${JSON.stringify(reference)}`);
        assert.equal(err.details?.['reason'], 'dot_segment');
        return true;
      },
    );
  }
  assert.throws(() => expandUrl('https://api.example/v1/accounts/{account}/payments', { account: '..' }), {
    code: 'status_source_invalid',
  });
});
