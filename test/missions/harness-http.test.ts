/**
 * The harness over real HTTP (127.0.0.1, port 0) on a real SQLite file: enqueue, dispatch, a
 * committed Mission stop answered as problem+json, gated provider entry through /v1/occurrences.
 * The Mission view is driven with PRE-VERIFIED SET objects (the SET push route comes at merge).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertProblem, createBody, setupOverHttp, startApi, str, takeover } from '../server/helpers.js';
import { binding, MISSION, ORIGIN, verifiedSignal } from './fixtures.js';
import type { JsonObject } from '../../src/core/json.js';

test('HAR-11 A3.6 C-A25 over HTTP: dispatch, revocation, committed 403 mission_not_active at enter, evidence readable', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'invoice-agent');
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const made = await api.call('POST', '/v1/harness/items', {
    token: cred,
    body: {
      kind: 'queue_item',
      action_class: 'consequential_write',
      mission_binding: binding,
      idempotency_key: 'pay-1',
    },
  });
  assert.equal(made.status, 201, made.text);
  const id = str(made.body);
  assert.equal(made.body['lineage'], 'invoice-agent');
  const unbound = await api.call('POST', '/v1/harness/items', {
    token: cred,
    body: { kind: 'queue_item', action_class: 'consequential_write' },
  });
  assertProblem(unbound, 409, 'mission_binding_missing');
  const d = await api.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: id } });
  assert.equal(d.status, 200, d.text);
  assert.equal((d.body['item'] as JsonObject)['state'], 'running');
  const occ = await api.call('POST', '/v1/occurrences', {
    token: cred,
    body: { ...createBody('pay-1'), workItemId: id },
  });
  assert.equal(occ.status, 201, occ.text);
  const occurrenceId = str(occ.body['occurrence'] as JsonObject);
  await api.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, api.clock.wallMs()));
  const enter = await api.call('POST', `/v1/occurrences/${occurrenceId}/enter`, { token: cred });
  assertProblem(enter, 403, 'mission_not_active');
  const shown = await api.call('GET', `/v1/harness/items/${id}`, { token: api.operator });
  assert.equal((shown.body['item'] as JsonObject)['state'], 'suppressed');
  const types = (shown.body['evidence'] as JsonObject[]).map((e) => e['type']);
  assert.ok(types.includes('harness_evidence') && types.includes('occurrence_linked'));
  const requeue = await api.call('POST', `/v1/harness/items/${id}/requeue`, { token: api.operator });
  assert.equal(requeue.status, 200, requeue.text);
  const again = await api.call('POST', `/v1/harness/items/${id}/resume`, { token: cred });
  assertProblem(again, 403, 'mission_not_active');
  const view = await api.call('GET', `/v1/missions/${encodeURIComponent(ORIGIN)}/${MISSION}`, {
    token: api.operator,
  });
  assert.equal((view.body['view'] as JsonObject)['state'], 'revoked');
  const policy = await api.call('GET', '/v1/harness/policy', { token: api.operator });
  assert.equal((policy.body['matrix'] as JsonObject)['ref'], 'baton-default@1');
  const ev = await api.call(
    'GET',
    `/v1/harness/evidence?origin=${encodeURIComponent(ORIGIN)}&mission=${MISSION}`,
    { token: api.operator },
  );
  assert.ok((ev.body['events'] as JsonObject[]).some((e) => e['type'] === 'mission_signal_applied'));
  const stop = await api.call('POST', `/v1/harness/items/${id}/stop`, {
    token: cred,
    body: { decision: 'terminate' },
  });
  assert.equal(stop.status, 403);
  const other = await takeover(api, 'other-agent');
  assertProblem(
    await api.call('GET', `/v1/harness/items/${id}`, { token: other }),
    404,
    'work_item_not_found',
  );
});
