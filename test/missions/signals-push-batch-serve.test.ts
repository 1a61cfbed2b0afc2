/**
 * Concurrent RFC 8935 pushes to a real Baton app over loopback, on both engines (issue 11 §8,
 * A3.4): real ES256 SETs signed with the reference issuer's key, all sent at once, go through the
 * consumer's per-issuer signal batcher. Each push is answered for itself, after its COMMIT:
 * 202 for the applied ones and for an identical replay, 400 `invalid_request` for the same jti
 * with other bytes; `baton_sets_received_total{result}` counts every SET once; every view is
 * as its SET says; the stream is live; every evidence chain verifies.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { formatRfc3339 } from '../../src/core/time.js';
import { signClaims } from '../../src/issuer/sign.js';
import { LIFECYCLE_EVENT, SET_TYP } from '../../src/missions/index.js';
import { verifyEvidence } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, STREAM_BEARER, type ConsumerWorld } from './consumer-world.js';
import { AUDIENCE } from './issuer-support.js';

const engines = await enginesUnderTest();

/** A lifecycle SET of `mission` (version 1, `active`), signed by the issuer's current key. */
function sign(w: ConsumerWorld, mission: string, jti: string, committedAtMs = Date.now()): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  const claims: JsonObject = {
    iss: w.pin.issuer,
    aud: AUDIENCE,
    iat,
    exp: iat + 300,
    jti,
    events: {
      [LIFECYCLE_EVENT]: {
        mission_id: mission,
        mission_origin: w.pin.issuer,
        state: 'active',
        version: 1,
        committed_at: formatRfc3339(committedAtMs),
      },
    },
  };
  return signClaims(claims, w.issuer.issuer.state.keys.current, SET_TYP, undefined);
}

function push(w: ConsumerWorld, set: string) {
  return w.call('POST', `/v1/missions/signals/${encodeURIComponent(w.pin.issuer)}`, {
    raw: set,
    contentType: 'application/secevent+jwt',
    headers: { authorization: `Bearer ${STREAM_BEARER}` },
  });
}

const counted = (text: string, result: string): number =>
  Number(new RegExp(`baton_sets_received_total\\{result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? 0);

for (const e of engines) {
  test(`[${e.name}] issue 11 §8 A3.4 C-A18 concurrent pushes: each answered for itself after COMMIT, counted once, every view applied`, async (t) => {
    const w = await consumerWorld(t, e);
    assert.equal((await w.pinIssuer()).status, 201);
    const missions = Array.from({ length: 12 }, (_, i) => `msn_push_batch_${i}`);
    const sets = await Promise.all(missions.map((m, i) => sign(w, m, `set_batch_${i}`)));
    // The first SET again (same bytes), and its jti with other bytes.
    const other = await sign(w, missions[0]!, 'set_batch_0', Date.now() - 5000);
    const answers = await Promise.all([...sets, sets[0]!, other].map((s) => push(w, s)));
    const statuses = answers.map((a) => a.status);
    assert.deepEqual(
      statuses.slice(1, 12),
      Array.from({ length: 11 }, () => 202),
      'the other Missions',
    );
    // Whichever of the three SETs with jti set_batch_0 went first applied; the identical one is
    // a duplicate (202) either way, the one with other bytes a conflict unless it went first.
    const pair = [statuses[0], statuses[12], statuses[13]];
    assert.ok(
      JSON.stringify(pair) === '[202,202,400]' || JSON.stringify(pair) === '[400,400,202]',
      `same jti: ${JSON.stringify(pair)}`,
    );
    for (const a of answers.filter((x) => x.status === 400)) assert.equal(a.body['err'], 'invalid_request');
    for (const m of missions) assert.equal((await w.harness.getView(w.pin.issuer, m))?.state, 'active');
    const metrics = (await w.call('GET', '/metrics')).text;
    const applied = counted(metrics, 'applied');
    const duplicate = counted(metrics, 'duplicate');
    const conflict = counted(metrics, 'invalid_request');
    assert.equal(applied + duplicate + conflict, 14, 'every SET counted once');
    assert.equal(applied, 12);
    assert.equal(statuses.filter((s) => s === 400).length, conflict);
    const issuers = await w.call('GET', '/v1/missions/issuers', { token: w.operator });
    assert.equal((issuers.body['issuers'] as JsonObject[])[0]?.['streamLive'], true);
    assert.equal((await verifyEvidence(w.engine)).ok, true);
  });
}
