/**
 * The RFC 8935 push receiver of a real Baton app (`POST /v1/missions/signals/{issuer}`) fed by the
 * real reference issuer over loopback, on both engines: the pinned issuer registry (admin route,
 * conflicts), A7.1 (revoked by a pushed SET between enqueue and dispatch ⇒ suppressed, evidenced),
 * A7.10 (replays: same bytes 202 and nothing reapplied, other bytes 400 invalid_request, reordered
 * versions ignored), A7.11 (wrong aud / iss / signature, no exp, bad stream bearer ⇒ the RFC 8935
 * code and no state change). The replay table surviving a restart: signals-poll-serve.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { missionSubject } from '../../src/missions/index.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, eventually, STREAM_BEARER, type ConsumerWorld } from './consumer-world.js';

const engines = await enginesUnderTest();

async function viewState(w: ConsumerWorld, mission: string): Promise<unknown> {
  return (await w.harness.getView(w.pin.issuer, mission))?.state;
}

interface Delivery {
  readonly status: number;
  readonly body: string | null;
}

async function deliveries(w: ConsumerWorld): Promise<Delivery[]> {
  return (await w.issuer.admin('/admin/deliveries')).body['deliveries'] as Delivery[];
}

/** The RFC 8935 `err` of an answer body ('' for a 202's empty body). */
const errOf = (d: Delivery | undefined): unknown =>
  d?.body === '' || d?.body === null || d === undefined ? '' : (JSON.parse(d.body) as JsonObject)['err'];

async function enqueue(w: ConsumerWorld, mission: string): Promise<string> {
  const made = await w.call('POST', '/v1/harness/items', {
    token: w.operator,
    body: {
      kind: 'queue_item',
      action_class: 'consequential_write',
      mission_binding: w.binding(mission),
      idempotency_key: 'pay-1',
    },
  });
  assert.equal(made.status, 201, made.text);
  return made.body['id'] as string;
}

for (const e of engines) {
  test(`[${e.name}] issuer registry: admin pins, operators read, same pin unchanged, another pin 409, never a bearer`, async (t) => {
    const w = await consumerWorld(t, e);
    const first = await w.pinIssuer();
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body['pushBearer'], true);
    assert.ok(!first.text.includes(STREAM_BEARER), 'the bearer is never answered');
    const body = { pin: { ...w.pin, stream: { delivery: 'urn:ietf:rfc:8935' } }, pushBearer: STREAM_BEARER };
    const again = await w.call('POST', '/v1/missions/issuers', { token: w.admin, body });
    assert.equal(again.status, 200, again.text);
    const other = await w.call('POST', '/v1/missions/issuers', {
      token: w.admin,
      body: { ...body, pin: { ...body.pin, audience: 'https://other.example' } },
    });
    assertProblem(other, 409, 'mission_issuer_conflict');
    assertProblem(
      await w.call('POST', '/v1/missions/issuers', { token: w.admin, body: { pin: body.pin } }),
      400,
      'input_invalid',
    );
    assertProblem(
      await w.call('POST', '/v1/missions/issuers', { token: w.operator, body }),
      403,
      'forbidden',
    );
    const listed = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    assert.equal((listed.body['issuers'] as JsonObject[]).length, 1);
    const one = await w.call('GET', `/v1/missions/issuers/${encodeURIComponent(w.pin.issuer)}`, {
      token: w.operator,
    });
    assert.equal(one.body['pinDigest'], first.body['pinDigest']);
    assertProblem(
      await w.call('GET', `/v1/missions/issuers/${encodeURIComponent('https://nobody.example')}`, {
        token: w.operator,
      }),
      404,
      'mission_issuer_not_found',
    );
  });

  test(`[${e.name}] HAR-13 A7.1: a pushed revocation SET suppresses the queued item, evidenced; 202 after COMMIT`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer()).status, 201);
    const mission = await w.issuer.createMission();
    await eventually(async () => (await viewState(w, mission)) === 'active', 'the approval SET');
    const id = await enqueue(w, mission);
    assert.equal((await w.issuer.admin(`/admin/missions/${mission}/revoke`, {})).status, 200);
    await eventually(async () => (await viewState(w, mission)) === 'revoked', 'the revocation SET');
    const shown = await w.call('GET', `/v1/harness/items/${id}`, { token: w.operator });
    assert.equal((shown.body['item'] as JsonObject)['state'], 'suppressed');
    const evidence = (shown.body['evidence'] as JsonObject[]).filter((x) => x['type'] === 'harness_evidence');
    const last = evidence.at(-1)?.['body'] as JsonObject;
    assert.equal(last['event_type'], 'queue_suppressed');
    assert.equal(last['decision'], 'suppress');
    assert.equal(last['reason'], 'mission_not_active');
    assert.equal(last['state'], 'revoked');
    assert.equal(last['state_source'], 'signal');
    assert.ok(typeof last['evidence_envelope'] === 'object', 'signed');
    const statuses = (await deliveries(w)).map((d) => d['status']);
    assert.deepEqual(statuses, [202, 202]);
    const dispatch = await w.call('POST', `/v1/harness/items/${id}/requeue`, { token: w.operator });
    assert.equal(dispatch.status, 200);
    const metrics = await w.call('GET', '/metrics');
    assert.match(metrics.text, /baton_sets_received_total\{result="applied"\} 2/);
    assert.match(
      metrics.text,
      /baton_harness_stops_total\{decision="suppress",reason="mission_not_active"\} 1/,
    );
    const issuers = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    assert.equal((issuers.body['issuers'] as JsonObject[])[0]?.['streamLive'], true);
  });

  test(`[${e.name}] HAR-10 A7.10/A7.11: replays, reordering and every protection failure answer their RFC 8935 code and change nothing`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer()).status, 201);
    const mission = await w.issuer.createMission();
    await eventually(async () => (await viewState(w, mission)) === 'active', 'the approval SET');
    // SET evidence only: a version gap also schedules a Status check in the background (A3.4 step 6).
    const events = async (): Promise<string[]> =>
      (await w.harness.events(missionSubject(w.pin.issuer, mission)))
        .map((x) => x.type)
        .filter((type) => type.startsWith('mission_signal_'));
    // Each fault changes the next delivery; the suspend SET it carries must not apply.
    const cases: [string, number, string | null][] = [
      ['wrong_aud', 400, 'invalid_audience'],
      ['wrong_iss', 400, 'invalid_issuer'],
      ['bad_signature', 400, 'invalid_key'],
      ['no_exp', 400, 'invalid_request'],
      ['expired', 400, 'invalid_request'],
      ['origin_mismatch', 400, 'invalid_issuer'],
    ];
    for (const [fault, status, err] of cases) {
      const before = await events();
      await w.issuer.admin('/admin/faults', { sets: [fault] });
      await w.issuer.admin(`/admin/missions/${mission}/suspend`, {});
      const last = (await deliveries(w)).at(-1)!;
      assert.equal(last.status, status, `${fault}: ${last.body}`);
      assert.equal(errOf(last), err, fault);
      // The refused SET changed nothing. A gap's background Status check (A3.4 step 6) may still
      // land meanwhile and show the issuer's real state: that one is sourced from Status, never signal.
      const view = await w.harness.getView(w.pin.issuer, mission);
      assert.ok(
        view?.state === 'active' || view?.stateSource === 'status',
        `${fault} changed nothing (view ${view?.state} from ${view?.stateSource})`,
      );
      assert.deepEqual(await events(), before, `${fault} wrote no evidence`);
      // The issuer moved to suspended; bring it back (its SET applies: version grows).
      await w.issuer.admin(`/admin/missions/${mission}/resume`, {});
      assert.equal((await deliveries(w)).at(-1)?.status, 202, 'the resume SET applied');
    }
    // Identical redelivery ⇒ 202, recorded as a duplicate, nothing reapplied.
    await w.issuer.admin('/admin/faults', { sets: ['replay'] });
    await w.issuer.admin(`/admin/missions/${mission}/suspend`, {});
    await eventually(async () => (await events()).includes('mission_signal_duplicate'), 'the replay');
    assert.equal(await viewState(w, mission), 'suspended');
    // Same jti, other bytes ⇒ 400 invalid_request.
    await w.issuer.admin('/admin/faults', { sets: ['replay_other_bytes'] });
    await w.issuer.admin(`/admin/missions/${mission}/resume`, {});
    await eventually(
      async () => (await events()).includes('mission_signal_rejected'),
      'the conflicting replay',
    );
    const answers = (await deliveries(w)).map((d) => [d.status, errOf(d)]);
    assert.ok(answers.some(([s, err]) => s === 400 && err === 'invalid_request'));
    assert.equal(await viewState(w, mission), 'active');
    // Bad stream bearer, unknown issuer, wrong media type: refused, nothing recorded.
    const path = `/v1/missions/signals/${encodeURIComponent(w.pin.issuer)}`;
    const before = await events();
    const wrong = await w.call('POST', path, {
      raw: 'a.b.c',
      contentType: 'application/secevent+jwt',
      headers: { authorization: 'Bearer nope-nope-nope-nope-nope-nope-nope' },
    });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, {
      err: 'authentication_failed',
      description: 'stream bearer missing or wrong',
    });
    const unknown = await w.call(
      'POST',
      `/v1/missions/signals/${encodeURIComponent('https://nobody.example')}`,
      {
        raw: 'a.b.c',
        contentType: 'application/secevent+jwt',
        headers: { authorization: `Bearer ${STREAM_BEARER}` },
      },
    );
    assert.deepEqual([unknown.status, unknown.body['err']], [401, 'authentication_failed']);
    const json = await w.call('POST', path, {
      body: { set: 'x' },
      headers: { authorization: `Bearer ${STREAM_BEARER}` },
    });
    assert.deepEqual([json.status, json.body['err']], [400, 'invalid_request']);
    const garbage = await w.call('POST', path, {
      raw: 'not-a-jwt',
      contentType: 'application/secevent+jwt',
      headers: { authorization: `Bearer ${STREAM_BEARER}` },
    });
    assert.equal(garbage.status, 400);
    assert.deepEqual(await events(), before);
  });

  test(`[${e.name}] HAR-10 A7.12: a reordered late SET is ignored (version only grows), every jti recorded in the store`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer()).status, 201);
    const mission = await w.issuer.createMission();
    await eventually(async () => (await viewState(w, mission)) === 'active', 'the approval SET');
    // The reorder fault holds a SET back and sends it after the next: the late one is ignored.
    await w.issuer.admin('/admin/faults', { sets: ['reorder'] });
    await w.issuer.admin(`/admin/missions/${mission}/suspend`, {});
    await w.issuer.admin(`/admin/missions/${mission}/resume`, {});
    await eventually(
      async () =>
        (await w.harness.events(missionSubject(w.pin.issuer, mission))).some(
          (x) => x.type === 'mission_signal_ignored',
        ),
      'the late SET',
    );
    assert.equal(
      await viewState(w, mission),
      'active',
      'a late suspended v2 after active v3 is ignored (A7.12)',
    );
    const seen = await w.engine.read((ex) =>
      ex.all<{ jti: string }>('SELECT jti FROM msn_sets_seen WHERE iss = ?', [w.pin.issuer]),
    );
    assert.equal(seen.length, 3);
  });
}
