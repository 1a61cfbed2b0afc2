/**
 * docs/config.md: a server refusal part-way through `baton apply` (one only the server can judge,
 * such as a `file:` key reference outside its --secret-dir folders) stops the apply there; what was
 * written before it stays, and the refusal says so — in its message and `details.applied` — and
 * exits 1, since exit 2 means "bad file or usage", nothing written. A REAL server on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { AdminClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { applyConfig } from '../../src/cli/config/apply.js';
import { httpTarget } from '../../src/cli/config/target.js';
import { startApi } from '../server/helpers.js';
import { LOOPBACK_PUSH_PIN, writeClientKey } from '../missions/fixtures.js';
import { baton, exampleConfig, tempDir, writeConfig } from './support.js';

test('a refusal after writes names what was applied before it and exits 1', async (t) => {
  const api = await startApi(t); // no --secret-dir: a `file:` key reference is outside its scope
  const dir = tempDir(t);
  writeClientKey(dir);
  writeFileSync(join(dir, 'bearer.txt'), 'a-push-bearer-of-at-least-32-characters\n');
  const domain = exampleConfig('http://127.0.0.1:9')['domain'] as { limits: object };
  const base = { format: 'baton.config/1', domain };
  const admin = ['--url', api.url, '--token', api.admin];
  assert.equal((await baton(['apply', writeConfig(dir, base), ...admin])).code, 0);

  const issuers = [{ pin: LOOPBACK_PUSH_PIN, pushBearerRef: 'file:bearer.txt' }];
  const partial = (authority: string): object => ({
    ...base,
    domain: { ...domain, limits: { ...domain.limits, maxPendingPerLineage: 11 } },
    authorities: [{ id: authority, unit: 'usd_cents', total: 10 }],
    issuers,
  });
  const r = await baton(['apply', writeConfig(dir, partial('partial-a'), 'a.json'), ...admin]);
  assert.equal(r.code, 1, r.err);
  assert.equal(r.out, '');
  assert.match(
    r.err,
    /^error: input_invalid: .*\$\.pin\.client\.key_ref.*outside what this server allows.* \(applied before the failure: domain first-call updated, authority partial-a created\)$/m,
  );
  // What it says was applied was applied.
  const shown = await api.call('GET', '/v1/domain', { token: api.admin });
  assert.equal((shown.body['limits'] as Record<string, unknown>)['maxPendingPerLineage'], 11);
  assert.equal((await api.call('GET', '/v1/authorities/partial-a', { token: api.admin })).status, 200);

  // The same refusal through the library: `details.applied` lists the items, in order.
  const file = writeConfig(dir, partial('partial-b'), 'b.json');
  const target = httpTarget(new AdminClient({ baseUrl: api.url, token: api.admin }));
  const error = await applyConfig(file, target, () => undefined).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isBatonError(error, 'input_invalid'), String(error));
  assert.deepEqual(error.details['applied'], [{ kind: 'authority', id: 'partial-b', action: 'create' }]);

  // A refusal before any write is still exit 2 and says nothing was applied.
  const issuerOnly = { format: 'baton.config/1', issuers };
  const first = await baton(['apply', writeConfig(dir, issuerOnly, 'c.json'), ...admin]);
  assert.equal(first.code, 2, first.err);
  assert.doesNotMatch(first.err, /applied before the failure/);
});
