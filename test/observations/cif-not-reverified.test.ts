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
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { ManualClock } from '../../src/core/clock.js';
import { buildServer, createToken } from '../../src/server/index.js';
import { openBaton } from '../../src/server/open.js';
import { domainConfig, paymentsProfile, request, T0, type Answer } from '../server/helpers.js';
import { DROP_EVIDENCE_GUARD } from '../store/support.js';

async function start(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-cif-'));
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
  const call = (method: string, path: string, token = operator): Promise<Answer> =>
    request(url, method, path, { token });
  const put = await request(url, 'PUT', '/v1/domain', { token: admin, body: domainConfig() });
  assert.equal(put.status, 200);
  const profile = await request(url, 'POST', '/v1/profiles', { token: operator, body: paymentsProfile() });
  assert.ok([200, 201].includes(profile.status));
  return { call, path: join(dir, 'baton.db') };
}

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
