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
import { isBatonError } from '../../src/core/errors.js';
import { HarnessClient } from '../../src/client/harness.js';

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

test('HAR-29 A7#24 A6 over HTTP: session read and taint, operator rebind to an active successor, held items in the takeover answer', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'invoice-agent');
  const now = api.clock.wallMs();
  const successorId = 'msn_successor_Q3x9vT2pL7mN4kR8sB1yZ';
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, now));
  await api.harness.applyVerifiedSignal(
    verifiedSignal('active', 1, now, { missionId: successorId, jti: 'succ_1' }),
  );
  const s = await api.call('POST', '/v1/harness/sessions', {
    token: cred,
    body: { mission_binding: binding, lineage: 'invoice-agent' },
  });
  assert.equal(s.status, 201, s.text);
  const sessionId = str(s.body);
  const pay = await api.call('POST', '/v1/harness/items', {
    token: cred,
    body: { kind: 'queue_item', action_class: 'external_commitment', session_id: sessionId },
  });
  const payId = str(pay.body);
  const taint = await api.call('POST', `/v1/harness/sessions/${sessionId}/taint`, {
    token: cred,
    body: { source: 'tool_result' },
  });
  assert.equal(taint.status, 200, taint.text);
  assert.equal(taint.body['tainted'], true);
  assertProblem(
    await api.call('POST', `/v1/harness/sessions/${sessionId}/taint`, { token: cred, body: {} }),
    400,
    'input_invalid',
  );
  const shown = await api.call('GET', `/v1/harness/sessions/${sessionId}`, { token: cred });
  assert.equal((shown.body['session'] as JsonObject)['tainted'], true);
  assert.ok((shown.body['evidence'] as JsonObject[]).some((e) => e['type'] === 'session_tainted'));
  const other = await takeover(api, 'other-agent');
  assertProblem(
    await api.call('GET', `/v1/harness/sessions/${sessionId}`, { token: other }),
    404,
    'session_not_found',
  );
  const item = await api.call('POST', '/v1/harness/items', {
    token: cred,
    body: { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
  });
  const id = str(item.body);
  await api.harness.applyVerifiedSignal(verifiedSignal('superseded', 2, now + 1));
  const rebind = { mission_binding: { ...binding, mission_id: successorId } };
  const byExecutor = await api.call('POST', `/v1/harness/items/${id}/rebind`, { token: cred, body: rebind });
  assert.equal(byExecutor.status, 403);
  const rebound = await api.call('POST', `/v1/harness/items/${id}/rebind`, {
    token: api.operator,
    body: rebind,
  });
  assert.equal(rebound.status, 200, rebound.text);
  assert.equal(rebound.body['state'], 'queued');
  assert.equal((rebound.body['binding'] as JsonObject)['mission_id'], successorId);
  const next = await api.call('POST', '/v1/lineages/invoice-agent/takeover', { token: api.operator });
  assert.equal(next.status, 201, next.text);
  const held = (next.body['held'] as JsonObject[]).map((h) => [h['id'], h['state']]);
  assert.deepEqual(held, [[payId, 'suppressed']]);
});

test('HAR-29 the SDK HarnessClient over HTTP: session, taint (idempotent), getSession; egress dispatch suppressed', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const credential = await takeover(api, 'invoice-agent');
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const client = new HarnessClient({ baseUrl: api.url, credential });
  const session = await client.session(binding);
  assert.equal(session.tainted, false);
  const egress = await client.enqueue({
    action_class: 'external_commitment',
    session_id: session.id,
  });
  const first = await client.taint(session.id, 'inbound_email');
  const again = await client.taint(session.id, 'inbound_email');
  assert.equal(first.tainted, true);
  assert.equal(again.version, first.version);
  const read = await client.getSession(session.id);
  assert.equal(read.session.tainted, true);
  assert.equal(read.evidence.filter((e) => e['type'] === 'session_tainted').length, 2);
  assert.equal((await client.get(egress.id)).item.state, 'suppressed');
  await assert.rejects(client.dispatch(egress.id), (e: unknown) =>
    isBatonError(e, 'work_item_not_dispatchable'),
  );
});

test('GET /v1/harness/items pages by keyset (cursor, limit): every item exactly once, in order; a bad cursor or limit is refused', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'invoice-agent');
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const made: string[] = [];
  for (let i = 0; i < 7; i++) {
    const r = await api.call('POST', '/v1/harness/items', {
      token: cred,
      body: { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
    });
    assert.equal(r.status, 201, r.text);
    made.push(str(r.body));
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q: string = cursor === null ? '' : `&cursor=${cursor}`;
    const page = await api.call('GET', `/v1/harness/items?limit=3${q}`, { token: api.operator });
    assert.equal(page.status, 200, page.text);
    const items = page.body['items'] as JsonObject[];
    assert.ok(items.length <= 3);
    seen.push(...items.map((x) => x['id'] as string));
    cursor = page.body['nextCursor'] as string | null;
    pages += 1;
  } while (cursor !== null && pages < 10);
  assert.equal(pages, 3);
  assert.deepEqual([...seen].sort(), [...made].sort());
  assert.equal(new Set(seen).size, 7);
  const all = await api.call('GET', '/v1/harness/items', { token: api.operator });
  assert.deepEqual(
    (all.body['items'] as JsonObject[]).map((x) => x['id']),
    seen,
  );
  assert.equal(all.body['nextCursor'], null);
  // A cursor the server did not issue, and limits out of range: refused, never "start over".
  for (const q of ['cursor=bm90LWEtY3Vyc29y', 'limit=1001', 'limit=0']) {
    const r = await api.call('GET', `/v1/harness/items?${q}`, { token: api.operator });
    assertProblem(r, 400, 'input_invalid');
  }
});
