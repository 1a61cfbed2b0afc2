/**
 * One name grammar for harness ids in process and over HTTP (docs/harness.md: "the routes' rules,
 * from the one place both use"): a name the routes refuse (`#` is not in the route schema `name`)
 * is `input_invalid` in process too, and changes no state, so no item made in process is
 * unreachable over HTTP.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import { enginesUnderTest } from '../store/engines.js';
import { binding, verifiedSignal } from './fixtures.js';
import { servedWorld } from './http-world.js';

const [sqlite] = await enginesUnderTest();

test('a name with # is input_invalid in process as over HTTP', async (t) => {
  const api = await servedWorld(t, sqlite!);
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const credential = await api.takeover('invoice-agent');
  const actor = 'executor:invoice-agent#1';
  const before = await api.snapshot();
  const invalid = (e: unknown) => isBatonError(e, 'input_invalid');
  const item = { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding };
  await assert.rejects(
    api.harness.createItem({ ...item, queue_item_id: 'job#1' }, actor, 'invoice-agent'),
    invalid,
  );
  await assert.rejects(
    api.harness.createSession({ mission_binding: binding, session_id: 'sess#1' }, actor, 'invoice-agent'),
    invalid,
  );
  assert.equal(await api.snapshot(), before, 'nothing written');
  const http = await api.call('POST', '/v1/harness/items', {
    token: credential,
    body: { ...item, queue_item_id: 'job#1' },
  });
  assert.equal(http.status, 400);
  // The grammar both share still admits the route's characters.
  const ok = await api.harness.createItem(
    { ...item, queue_item_id: 'job.1:a@b/c-d_e' },
    actor,
    'invoice-agent',
  );
  assert.equal(ok.id, 'job.1:a@b/c-d_e');
});
