/**
 * The /v1/continuity routes over a real HTTP server on 127.0.0.1 (B6): records in and out with
 * their correction chain, refusals with their rule codes, signed records, metrics, coverage and
 * the OpenAPI document.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { ManualClock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import { generateEd25519KeyPair } from '../../src/core/ed25519.js';
import {
  HANDOFF_PROFILE,
  OBSERVATION_PROFILE,
  readMeasurementProfile,
  signRecord,
} from '../../src/observations/index.js';
import { buildServer, createToken } from '../../src/server/index.js';
import { openBaton } from '../../src/server/open.js';
import { domainConfig, paymentsProfile, request, T0, type Answer } from '../server/helpers.js';
import { correctionEvidence, decidedRecord, example } from './support.js';
import { DROP_EVIDENCE_GUARD } from '../store/support.js';

async function start(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-continuity-'));
  const clock = new ManualClock(T0);
  const opened = await openBaton({ kind: 'sqlite', path: join(dir, 'baton.db') }, { clock });
  const app = buildServer({
    engine: opened.engine,
    service: opened.service,
    clock,
    signingKey: opened.domainKey.privateKey,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const admin = (await createToken(opened.engine, { role: 'admin' }, { clock, actor: 'test' })).token;
  const operator = (await createToken(opened.engine, { role: 'operator' }, { clock, actor: 'test' })).token;
  const call = (method: string, path: string, body?: unknown, token = operator): Promise<Answer> =>
    request(url, method, path, { token, ...(body !== undefined && { body }) });
  assert.equal((await call('PUT', '/v1/domain', domainConfig(), admin)).status, 200);
  assert.ok([200, 201].includes((await call('POST', '/v1/profiles', paymentsProfile())).status));
  return { call, admin, opened, clock, path: join(dir, 'baton.db'), url, operator };
}

test('B6 B7-8: POST and GET records over HTTP, 409 on other bytes, corrections appended', async (t) => {
  const { call } = await start(t);
  const rec = decidedRecord();
  const first = await call('POST', '/v1/continuity/records', rec);
  assert.equal(first.status, 201, first.text);
  assert.equal((await call('POST', '/v1/continuity/records', rec)).status, 200);
  const conflict = await call('POST', '/v1/continuity/records', { ...rec, limitations: [] });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body['code'], 'observation_record_conflict');
  const fix = {
    ...rec,
    record_id: 'fix-1',
    event_type: 'correction',
    supersedes: rec.record_id,
    analysis_revision: 'r2',
    evidence: [...rec.evidence, correctionEvidence('fix-1')],
  };
  assert.equal((await call('POST', '/v1/continuity/records', fix)).status, 201);
  const got = await call(
    'GET',
    `/v1/continuity/records?producer=urn:baton:local&id=${encodeURIComponent(rec.record_id)}`,
  );
  assert.equal(got.status, 200, got.text);
  assert.equal((got.body['corrections'] as unknown[]).length, 1);
  const missing = await call('GET', '/v1/continuity/records?producer=urn:baton:local&id=nope');
  assert.equal(missing.status, 404);
});

test('OBS-08 OBS-12 over HTTP: an operator’s unsigned record under another producer’s name is refused and stores nothing; under the local producer it is stored', async (t) => {
  const { call } = await start(t);
  const squat = decidedRecord({ producer: 'urn:example:acme', record_id: 'acme-1' });
  const refused = await call('POST', '/v1/continuity/records', squat);
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.body['code'], 'observation_record_invalid');
  const details = refused.body['details'] as { rule: string; path: string };
  assert.deepEqual([details.rule, details.path], ['producer_unauthenticated', '$.producer']);
  const none = await call('GET', '/v1/continuity/records?producer=urn:example:acme&id=acme-1');
  assert.equal(none.status, 404, 'nothing stored');
  const cov = await call('GET', '/v1/continuity/coverage');
  assert.equal((cov.body['records'] as { total: number }).total, 0);
  const { producer: _acme, ...local } = squat;
  const stored = await call('POST', '/v1/continuity/records', local);
  assert.equal(stored.status, 201, stored.text);
  assert.equal((stored.body['record'] as { producer: string }).producer, 'urn:baton:local');
});

test('B2 C-B2 over HTTP: POST /v1/continuity/records takes the binding’s own media type, through the same strict parser; other routes answer it 415', async (t) => {
  const { url, operator, admin } = await start(t);
  const type = 'application/baton-continuity-observation+json';
  const post = (path: string, raw: string, token = operator) =>
    request(url, 'POST', path, { token, raw, contentType: type });
  const rec = decidedRecord();
  const created = await post('/v1/continuity/records', JSON.stringify(rec));
  assert.equal(created.status, 201, created.text);
  const withCharset = await request(url, 'POST', '/v1/continuity/records', {
    token: operator,
    raw: JSON.stringify(rec),
    contentType: `${type}; charset=utf-8`,
  });
  assert.equal(withCharset.status, 200, withCharset.text);
  const duplicate = await post(
    '/v1/continuity/records',
    JSON.stringify({ ...rec, record_id: 'dup' }).replace('"version":"1"', '"version":"1","version":"1"'),
  );
  assert.equal(duplicate.status, 400, duplicate.text);
  // The record reader's own refusal (docs/observations.md rule 1), as `baton observe validate`
  // answers; the strict parser's code is in details.json.
  assert.equal(duplicate.body['code'], 'observation_record_invalid');
  assert.equal((duplicate.body['details'] as { rule: string }).rule, 'bytes');
  assert.equal((duplicate.body['details'] as { json: string }).json, 'json_duplicate_member');
  const elsewhere = await post('/v1/continuity/profiles', JSON.stringify(HANDOFF_PROFILE), admin);
  assert.equal(elsewhere.status, 415, elsewhere.text);
  assert.equal(elsewhere.body['code'], 'media_type_unsupported');
  // The published contract says so, so generated clients can send it (before, only application/json).
  const doc = await request(url, 'GET', '/openapi.json');
  const content = (path: string, method: string): string[] => {
    const op = (doc.body['paths'] as Record<string, Record<string, JsonObject>>)[path]?.[method];
    return Object.keys((op?.['requestBody'] as { content?: object } | undefined)?.content ?? {});
  };
  assert.deepEqual(content('/v1/continuity/records', 'post'), ['application/json', type]);
  assert.deepEqual(content('/v1/continuity/profiles', 'post'), ['application/json']);
});

test('B3.1 over HTTP: a refusal keeps its code, rule and path; version 2 is observation_profile_unsupported', async (t) => {
  const { call } = await start(t);
  const bad = await call('POST', '/v1/continuity/records', { ...example(), colour: 'blue' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body['code'], 'observation_record_invalid');
  assert.match(bad.text, /\$\.colour/);
  const v2 = await call('POST', '/v1/continuity/records', { ...example(), version: '2' });
  assert.equal(v2.body['code'], 'observation_profile_unsupported');
});

test('B7-13 OBS-08 over HTTP: a record signed by another key is refused; one signed by the domain key is stored only as Baton projected it', async (t) => {
  const { call, opened } = await start(t);
  const signable = decidedRecord({
    record_id: 'signed-1',
    profile: OBSERVATION_PROFILE,
    producer: 'urn:baton:test-domain',
    audience: 'urn:baton:test-domain',
    issued_at: new Date(T0).toISOString(),
    expires_at: new Date(T0 + 3_600_000).toISOString(),
  });
  const foreign = await signRecord(signable, generateEd25519KeyPair().privateKey);
  const refused = await call('POST', '/v1/continuity/records', foreign);
  assert.equal(refused.status, 401, refused.text);
  const ours = await signRecord(signable, opened.domainKey.privateKey);
  const notProjected = await call('POST', '/v1/continuity/records', ours);
  assert.equal(notProjected.status, 400, notProjected.text);
  assert.equal(notProjected.body['code'], 'observation_record_invalid');
  assert.equal((notProjected.body['details'] as { rule: string }).rule, 'reserved_namespace');
  // The handoff record Baton projected, exported and posted back: the same bytes, a no-op.
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  const id = 'urn:baton:test-domain:record:handoff:L:1';
  const got = await call(
    'GET',
    `/v1/continuity/records?producer=urn:baton:test-domain&id=${encodeURIComponent(id)}`,
  );
  assert.equal(got.status, 200, got.text);
  const exported = (got.body['record'] as { record: unknown }).record;
  const again = await call('POST', '/v1/continuity/records', exported);
  assert.equal(again.status, 200, again.text);
  assert.equal((again.body['record'] as { signed: boolean }).signed, true);
});

test('OBS-08 B7-12 over HTTP: an unsigned all-MATCH handoff record under Baton’s producer is refused; the real one is projected and counted', async (t) => {
  const { call } = await start(t);
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  const id = 'urn:baton:test-domain:record:handoff:L:1';
  const forged = decidedRecord({
    producer: 'urn:baton:test-domain',
    record_id: id,
    event_type: 'handoff',
    scope_id: 'urn:baton:test-domain:lineage:L',
    invariants: ['state', 'policy', 'authority', 'lineage'].map((dimension) => ({
      dimension,
      status: 'MATCH',
      reference: 'urn:baton:x#1',
      reason: null,
    })),
  });
  const refused = await call('POST', '/v1/continuity/records', forged);
  assert.equal(refused.status, 400, refused.text);
  assert.equal((refused.body['details'] as { rule: string }).rule, 'reserved_namespace');
  const got = await call(
    'GET',
    `/v1/continuity/records?producer=urn:baton:test-domain&id=${encodeURIComponent(id)}`,
  );
  assert.equal(got.status, 200, got.text);
  assert.equal((got.body['record'] as { signed: boolean }).signed, true, 'the projector wrote the real one');
  const cov = await call('GET', '/v1/continuity/coverage');
  assert.equal((cov.body['records'] as { total: number }).total, 1);
});

test('B6: takeover over HTTP, then FIC, CIF and coverage count its handoff record; OpenAPI lists the routes', async (t) => {
  const { call } = await start(t);
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  const cov = await call('GET', '/v1/continuity/coverage');
  assert.equal(cov.status, 200, cov.text);
  assert.equal((cov.body['records'] as { handoff: number }).handoff, 2);
  // ?verify=full: every record re-derived now (the incremental read would count L's records, not
  // re-verified by it, UNKNOWN: test/observations/cif-not-reverified).
  const cif = await call('GET', '/v1/continuity/metrics/cif?verify=full');
  assert.equal(cif.body['complete'], true, cif.text);
  assert.equal(cif.body['authorizes'], false);
  const fic = await call('GET', '/v1/continuity/metrics/fic');
  assert.equal(fic.body['reason'], 'undefined_n_zero', 'nothing entered yet');
  const sampleOnly = await call('GET', '/v1/continuity/metrics/fic?sample=3');
  assert.equal(sampleOnly.status, 400);
  const doc = await call('GET', '/openapi.json');
  const paths = Object.keys(doc.body['paths'] as object);
  for (const p of [
    '/v1/continuity/records',
    '/v1/continuity/metrics/fic',
    '/v1/continuity/metrics/cif',
    '/v1/continuity/coverage',
    '/v1/continuity/profiles',
  ]) {
    assert.ok(paths.includes(p), p);
  }
});

test('B3.2 over HTTP: a record the read route’s projection finds contradicted counts UNKNOWN in GET …/metrics/cif, and in every later GET', async (t) => {
  const { call, path, clock } = await start(t);
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  const before = await call('GET', '/v1/continuity/metrics/cif?verify=incremental');
  assert.deepEqual([before.body['complete'], before.body['conflicting']], [true, []], before.text);
  const raw = new Database(path);
  try {
    raw.exec(DROP_EVIDENCE_GUARD.sqlite.join(';'));
    raw.prepare("UPDATE evidence_events SET actor = 'someone-else' WHERE subject = 'lineage:L'").run();
  } finally {
    raw.close();
  }
  clock.advance(1_000);
  // A new generation: the incremental projection re-derives lineage L and meets the altered event.
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  const after = await call('GET', '/v1/continuity/metrics/cif?verify=incremental');
  assert.equal(after.status, 200, after.text);
  assert.deepEqual(after.body['conflicting'], ['urn:baton:test-domain:record:handoff:L:1']);
  assert.equal(after.body['complete'], false);
  const lineage = (after.body['per_dimension'] as Record<string, { match: number; unknown: number }>)[
    'lineage'
  ];
  assert.equal(lineage?.match, 0, 'the stale MATCH is not counted');
  // The next read's incremental projection skips L (fully recorded): the recorded conflict still
  // counts, and L's other record, not re-verified by this read, counts UNKNOWN (OBS-13 ¶26).
  const again = await call('GET', '/v1/continuity/metrics/cif?verify=incremental');
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(
    again.body['conflicting'],
    after.body['conflicting'],
    'the recorded conflict still counts',
  );
  assert.deepEqual(again.body['not_reverified'], [
    'urn:baton:test-domain:record:handoff:L:1',
    'urn:baton:test-domain:record:handoff:L:2',
  ]);
  assert.equal(again.body['complete'], false);
  const lineageAgain = (again.body['per_dimension'] as Record<string, { match: number }>)['lineage'];
  assert.equal(lineageAgain?.match, 0, 'the stale MATCH is still not counted');
  // Re-derived in full, nothing changed: the answer is the first one.
  const full = await call('GET', '/v1/continuity/metrics/cif?verify=full');
  assert.deepEqual(full.body, after.body, 'nothing changed, nor does the fully re-derived answer');
});

test('issue 12 §5: /metrics counts continuity records written (projector, submit) and refused by code', async (t) => {
  const { call } = await start(t);
  const metric = async (line: RegExp): Promise<number> => {
    const m = await call('GET', '/metrics');
    assert.equal(m.status, 200);
    const hit = m.text.split('\n').find((l) => line.test(l));
    return hit === undefined ? 0 : Number(hit.split(' ').at(-1));
  };
  const written = (type: string, via: string) =>
    metric(new RegExp(`^baton_continuity_records_written_total\\{event_type="${type}",via="${via}"\\} `));
  const refused = (code: string) =>
    metric(new RegExp(`^baton_continuity_records_refused_total\\{code="${code}",via="submit"\\} `));
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  assert.equal((await call('GET', '/v1/continuity/coverage')).status, 200);
  assert.equal((await call('GET', '/v1/continuity/coverage')).status, 200);
  assert.equal(await written('handoff', 'projector'), 1, 'the second projection wrote nothing');
  const rec = decidedRecord();
  assert.equal((await call('POST', '/v1/continuity/records', rec)).status, 201);
  assert.equal((await call('POST', '/v1/continuity/records', rec)).status, 200);
  assert.equal((await call('POST', '/v1/continuity/records', { ...rec, limitations: [] })).status, 409);
  assert.equal((await call('POST', '/v1/continuity/records', { ...rec, version: '2' })).status, 400);
  assert.equal((await call('POST', '/v1/continuity/records', { ...rec, extra: 1 })).status, 400);
  assert.equal(await written(String(rec.event_type), 'submit'), 1, 'same bytes again is not a write');
  assert.equal(await refused('observation_record_conflict'), 1);
  assert.equal(await refused('observation_profile_unsupported'), 1);
  assert.equal(await refused('observation_record_invalid'), 1);
});

test('B3.1 rule 1 over HTTP: a POSTed record refused at the byte level (duplicate member, lone surrogate, no body, trailing data) is observation_record_invalid rule bytes, counted as refused; other routes keep json_*; the body limit stands', async (t) => {
  const { call, url, operator, admin } = await start(t);
  const refusedTotal = async (): Promise<number> => {
    const m = await call('GET', '/metrics');
    const hit = m.text
      .split('\n')
      .find((l) =>
        l.startsWith(
          'baton_continuity_records_refused_total{code="observation_record_invalid",via="submit"} ',
        ),
      );
    return hit === undefined ? 0 : Number(hit.split(' ').at(-1));
  };
  const post = (raw: string, contentType?: string) =>
    request(url, 'POST', '/v1/continuity/records', {
      token: operator,
      raw,
      ...(contentType !== undefined && { contentType }),
    });
  const text = JSON.stringify(decidedRecord({ record_id: 'urn:x:bytes' }));
  const cases: [string, string, string, string?][] = [
    [
      'duplicate member',
      text.replace('"version":"1"', '"version":"1","version":"1"'),
      'json_duplicate_member',
    ],
    ['lone surrogate', text.replace('"urn:x:bytes"', '"urn:x:\\ud800"'), 'json_lone_surrogate'],
    [
      'duplicate member, binding media type',
      text.replace('"version":"1"', '"version":"1","version":"1"'),
      'json_duplicate_member',
      'application/baton-continuity-observation+json',
    ],
    ['trailing data', `${text} {}`, 'json_malformed'],
  ];
  assert.equal(await refusedTotal(), 0);
  for (const [name, raw, json, type] of cases) {
    const a = await post(raw, type);
    assert.equal(a.status, 400, `${name}: ${a.text}`);
    assert.equal(a.body['code'], 'observation_record_invalid', name);
    const details = a.body['details'] as { rule: string; json: string };
    assert.deepEqual([details.rule, details.json], ['bytes', json], name);
  }
  const empty = await post('');
  assert.equal(empty.status, 400, empty.text);
  assert.equal(empty.body['code'], 'observation_record_invalid');
  assert.equal((empty.body['details'] as { rule: string }).rule, 'bytes');
  assert.equal(await refusedTotal(), cases.length + 1, 'every byte-level refusal counted (before: 0)');
  assert.equal(
    ((await call('GET', '/v1/continuity/coverage')).body['records'] as { total: number }).total,
    0,
    'nothing stored',
  );
  // The body limit still answers before the route: 413, as on every route.
  const huge = await post(JSON.stringify({ ...decidedRecord(), limitations: ['x'.repeat(1_100_000)] }));
  assert.equal(huge.status, 413, huge.text);
  assert.equal(huge.body['code'], 'json_too_large');
  // The record still goes through: bytes read by the reader, then stored.
  assert.equal((await post(text)).status, 201);
  // Other routes keep the strict parser's own code.
  const profile = await request(url, 'POST', '/v1/continuity/profiles', {
    token: admin,
    raw: JSON.stringify(HANDOFF_PROFILE).replace('{', '{"id":"a",'),
  });
  assert.equal(profile.status, 400, profile.text);
  assert.equal(profile.body['code'], 'json_duplicate_member');
});

test('¶27 B3.6 over HTTP: a profile requiring an unweighted dimension is refused, so an UNKNOWN state never yields a complete CIF', async (t) => {
  const { call, admin } = await start(t);
  const hostile = { ...HANDOFF_PROFILE, id: 'urn:example:p', weights: { lineage: '1' } };
  const refused = await call('POST', '/v1/continuity/profiles', hostile, admin);
  assert.equal(refused.status, 400, refused.text);
  assert.equal((refused.body['details'] as { path: string }).path, '$.required[0]');
  const rec = decidedRecord({
    invariants: [
      { dimension: 'lineage', status: 'MATCH', reference: 'urn:baton:x#1', reason: null },
      { dimension: 'state', status: 'UNKNOWN', reference: null, reason: 'not observed' },
    ],
  });
  assert.equal((await call('POST', '/v1/continuity/records', rec)).status, 201);
  const cif = await call('GET', '/v1/continuity/metrics/cif?profile=urn%3Aexample%3Ap');
  assert.notEqual(cif.body['complete'], true, cif.text);
});

test('OBS-29 over HTTP: a profile under Baton’s reserved urn:baton: ids is refused and stores nothing; CIF names the profile it used', async (t) => {
  const { call, admin, opened } = await start(t);
  for (const id of [HANDOFF_PROFILE.id, 'URN:Baton:measurement-profile:mine']) {
    const squat = {
      ...HANDOFF_PROFILE,
      id,
      weights: { state: '1', policy: '0', authority: '0', lineage: '0' },
    };
    const refused = await call('POST', '/v1/continuity/profiles', squat, admin);
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body['code'], 'input_invalid');
    assert.equal((refused.body['details'] as { path: string }).path, '$.id');
  }
  const rows = await opened.engine.read((ex) =>
    ex.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM cop_profiles'),
  );
  assert.equal(Number(rows[0]?.n), 0, 'nothing stored');
  const cif = await call('GET', '/v1/continuity/metrics/cif');
  assert.equal(cif.status, 200, cif.text);
  const used = cif.body['profile'] as { id: string; version: string; digest: string };
  assert.deepEqual([used.id, used.version], [HANDOFF_PROFILE.id, HANDOFF_PROFILE.version]);
  assert.equal(used.digest, readMeasurementProfile({ ...HANDOFF_PROFILE }).digest, 'the built-in one');
  const mine = { ...HANDOFF_PROFILE, id: 'urn:example:mine' };
  assert.equal((await call('POST', '/v1/continuity/profiles', mine, admin)).status, 201);
  const other = await call('GET', '/v1/continuity/metrics/cif?profile=urn%3Aexample%3Amine');
  assert.equal((other.body['profile'] as { id: string }).id, 'urn:example:mine');
});

test('B7-15 B7-4 over HTTP: the answer carries unapproved locators and uninterpreted extensions', async (t) => {
  const { call } = await start(t);
  const rec = decidedRecord({
    evidence: [
      {
        locator: 'urn:baton:x',
        method: 'direct_capture',
        verification: 'MANUAL_UNATTESTED',
        byte_digest: null,
      },
      {
        locator: 'https://attacker.example/x',
        method: 'direct_capture',
        verification: 'MANUAL_UNATTESTED',
        byte_digest: null,
      },
    ],
    extensions: { 'urn:example:ext': { note: 'kept' } },
  });
  const first = await call('POST', '/v1/continuity/records', rec);
  assert.equal(first.status, 201, first.text);
  assert.deepEqual(first.body['unapprovedLocators'], ['$.evidence[1].locator']);
  assert.deepEqual(first.body['uninterpreted'], ['urn:example:ext']);
  const again = await call('POST', '/v1/continuity/records', rec);
  assert.equal(again.status, 200);
  assert.deepEqual(again.body['unapprovedLocators'], ['$.evidence[1].locator']);
});

/**
 * OBS-13 ¶26: stale or unverifiable evidence yields UNKNOWN, never MATCH. GET
 * /v1/continuity/metrics/cif re-derives every record by default (the full projection `baton
 * report` and the coverage route run). With `?verify=incremental` its cost stays flat as the log
 * grows, so it does not re-read the chains of a lineage whose every generation already has its
 * record: the handoff records of such a lineage were verified when they were derived, not now, and
 * an evidence row altered since (here the actor of its `generation_advanced` events, with the update
 * guard dropped) would go unseen. Each of their dimensions then counts UNKNOWN and they are listed
 * in `not_reverified`; the full answer finds the conflict.
 */
type Tally = Record<string, { match: number; mismatch: number; unknown: number }>;

test('OBS-13 ¶26: GET …/metrics/cif never counts a MATCH it did not re-derive from a verifying log', async (t) => {
  const { call, path } = await start(t);
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  assert.equal((await call('POST', '/v1/lineages/L/takeover')).status, 201);
  const ids = ['urn:baton:test-domain:record:handoff:L:1', 'urn:baton:test-domain:record:handoff:L:2'];
  // The first read derives L's record from the log (its chains verify): it counts.
  const fresh = await call('GET', '/v1/continuity/metrics/cif?verify=incremental');
  assert.equal(fresh.status, 200, fresh.text);
  assert.deepEqual(fresh.body['not_reverified'], [], fresh.text);
  assert.ok(((fresh.body['per_dimension'] as Tally)['lineage']?.match ?? 0) > 0, fresh.text);
  // An evidence row the record was derived from is altered out of band.
  const raw = new Database(path);
  try {
    raw.exec(DROP_EVIDENCE_GUARD.sqlite.join(';'));
    const changed = raw
      .prepare(
        "UPDATE evidence_events SET actor = 'someone-else' WHERE subject = 'lineage:L' AND type = 'generation_advanced'",
      )
      .run();
    assert.equal(changed.changes, 2);
  } finally {
    raw.close();
  }
  // The incremental read skips L (fully recorded): its record was not re-derived, so it decides nothing.
  const stale = await call('GET', '/v1/continuity/metrics/cif?verify=incremental');
  assert.equal(stale.status, 200, stale.text);
  assert.deepEqual(stale.body['not_reverified'], ids, stale.text);
  assert.equal(stale.body['complete'], false, stale.text);
  assert.equal(stale.body['value'], null);
  for (const [dim, tally] of Object.entries(stale.body['per_dimension'] as Tally)) {
    assert.equal(tally.match + tally.mismatch, 0, `${dim}: nothing decided from unverified evidence`);
  }
  // ?verify=full re-derives every record: the altered row is found, a conflict, never a MATCH.
  const full = await call('GET', '/v1/continuity/metrics/cif?verify=full');
  assert.equal(full.status, 200, full.text);
  assert.deepEqual(full.body['not_reverified'], []);
  assert.deepEqual(full.body['conflicting'], ids, full.text);
  assert.equal(full.body['complete'], false);
  assert.equal((full.body['per_dimension'] as Tally)['lineage']?.match, 0);
  // The route re-derives every record unless asked not to: its default is the full answer.
  const byDefault = await call('GET', '/v1/continuity/metrics/cif');
  assert.deepEqual(byDefault.body, full.body, 'the default is verify=full');
  assert.equal((await call('GET', '/v1/continuity/metrics/cif?verify=some')).status, 400);
});
