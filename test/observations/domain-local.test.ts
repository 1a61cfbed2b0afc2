/**
 * The domain id `local` is refused (docs/observations.md "The domain id `local` is refused"): a
 * domain's records stand under the producer `urn:baton:<id>` and `urn:baton:local` is the unsigned
 * local producer, so `producerOf('local')` would be the local producer. Over HTTP (the service's
 * own reader decides), with no state change; a domain id that merely contains the word is fine.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { assertProblem, domainConfig, startApi } from '../server/helpers.js';

test('a domain named local (any case) is refused, input_invalid at $.id, and nothing is configured', async (t) => {
  const api = await startApi(t, { continuity: true });
  const before = await api.snapshot();
  for (const id of ['local', 'LOCAL', 'Local']) {
    const r = await api.call('PUT', '/v1/domain', { token: api.admin, body: { ...domainConfig(), id } });
    assertProblem(r, 400, 'input_invalid');
    assert.equal((r.body['details'] as JsonObject | undefined)?.['path'], '$.id', r.text);
  }
  assertProblem(await api.call('GET', '/v1/domain', { token: api.operator }), 404, 'domain_not_found');
  assert.equal(await api.snapshot(), before);
  // A domain whose id only contains the word is another namespace: accepted.
  const ok = await api.call('PUT', '/v1/domain', {
    token: api.admin,
    body: { ...domainConfig(), id: 'local-eu' },
  });
  assert.equal(ok.status, 200, ok.text);
});
