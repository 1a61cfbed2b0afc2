/**
 * What an operator learns of principal tokens (docs/api.md "Authentication", docs/config.md): the
 * token LIST is admin-only, but the evidence log is an operator's to read, and a token's chain
 * (`token:<id>`: `token_created` with id, name and role; `token_revoked`) is part of it, as every
 * write's actor (`operator:<id>`) is. No secret and no digest is ever in it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApi } from './helpers.js';

test('an operator reads token ids, names, roles and revocations in evidence, never a secret', async (t) => {
  const api = await startApi(t);
  const made = await api.call('POST', '/v1/tokens', {
    token: api.admin,
    body: { role: 'operator', name: 'ci' },
  });
  assert.equal(made.status, 201);
  const id = made.body['id'] as string;
  const secret = made.body['token'] as string;
  assert.equal((await api.call('DELETE', `/v1/tokens/${id}`, { token: api.admin })).status, 200);

  assert.equal(
    (await api.call('GET', '/v1/tokens', { token: api.operator })).status,
    403,
    'the list is admin-only',
  );

  const recent = await api.call('GET', '/v1/evidence/recent?type=token_created', { token: api.operator });
  assert.equal(recent.status, 200);
  const created = (recent.body['events'] as { subject: string; body: Record<string, unknown> }[]).find(
    (e) => e.subject === `token:${id}`,
  );
  assert.deepEqual(created?.body, { id, name: 'ci', role: 'operator' });

  const chain = await api.call('GET', `/v1/evidence?subject=token:${id}`, { token: api.operator });
  assert.equal(chain.status, 200);
  const types = (chain.body['events'] as { type: string }[]).map((e) => e.type);
  assert.deepEqual(types, ['token_created', 'token_revoked']);

  const seen = JSON.stringify([recent.body, chain.body]);
  assert.ok(!seen.includes(secret.slice(-43)), 'no secret in evidence');
  assert.ok(!/digest/i.test(seen), 'no digest in evidence');
});
