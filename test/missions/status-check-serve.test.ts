/**
 * Mission Status wired into a real Baton app (issue 11 §2): the operator's `POST
 * /v1/missions/{origin}/{missionId}/check` and the harness's own fetch before a dispatch (A3.1
 * step 3), both through the MissionStatusClient (nonce, private_key_jwt with the key the pin's
 * key_ref names) against the real reference issuer, on both engines. A7.13: 503 ⇒ unavailable,
 * nothing relied on; 404 ⇒ unknown, never revoked. A7.6/A7.22: refused answers make the view
 * unknown. Metrics `baton_mission_checks_total{result}`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { missionSubject } from '../../src/missions/index.js';
import { baton } from '../config/support.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, type ConsumerWorld } from './consumer-world.js';
import { verifiedSignal } from './fixtures.js';

const engines = await enginesUnderTest();

const checkPath = (w: ConsumerWorld, mission: string): string =>
  `/v1/missions/${encodeURIComponent(w.pin.issuer)}/${mission}/check`;

for (const e of engines) {
  test(`[${e.name}] HAR-06 A3.2: the operator check fetches verified Status and applies it; faults fail closed`, async (t) => {
    const w = await consumerWorld(t, e);
    // Pinned with a push stream, but the mission exists before Baton's receiver: no SET reached it.
    const mission = await w.issuer.createMission();
    assert.equal((await w.pinIssuer()).status, 201);
    assert.equal(await w.harness.getView(w.pin.issuer, mission), undefined);
    const ok = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body['state'], 'active');
    assert.equal(ok.body['applied'], true);
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'active');
    const archived = await w.engine.read((ex) =>
      ex.all<{ jwk: string | null }>('SELECT jwk FROM msn_keys WHERE origin = ?', [w.pin.issuer]),
    );
    assert.ok(archived.length >= 1 && archived.every((k) => k.jwk !== null), 'the verifying key is archived');

    const cli = (): Promise<{ code: number; out: string; err: string }> =>
      baton(['missions', 'check', w.pin.issuer, mission, '--url', w.url, '--token', w.operator]);
    const active = await cli();
    assert.deepEqual(
      [active.code, active.out],
      [0, 'active (active); applied; work stopped: 0\n'],
      active.err,
    );
    // A3.3 / MSG-02: an `active` answer the view does not take (here: issued before a suspension
    // SET committed later) is no permission — `active` follows the view after the apply, which is
    // what the MCP gate acts on.
    const held = await w.harness.applyVerifiedSignal(
      verifiedSignal('suspended', 2, Date.now() + 3_600_000, { origin: w.pin.issuer, missionId: mission }),
    );
    assert.equal(held.result, 'applied');
    const notTaken = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assert.equal(notTaken.status, 200, notTaken.text);
    assert.deepEqual(
      [notTaken.body['state'], notTaken.body['applied'], notTaken.body['active']],
      ['active', false, false],
    );
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'suspended');
    await w.issuer.admin('/admin/faults', { status: ['http_503'] });
    const down = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assertProblem(down, 503, 'mission_status_unavailable');
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'suspended', '503 changes no view');

    await w.issuer.admin('/admin/faults', { status: ['wrong_aud'] });
    const refused = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assertProblem(refused, 502, 'mission_status_invalid');
    assert.equal(
      (refused.body['details'] as JsonObject | undefined)?.['check'] ?? refused.body['check'],
      'aud',
    );
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, null, 'refused ⇒ unknown');

    await w.issuer.admin('/admin/faults', { status: ['http_404'] });
    const missing = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assertProblem(missing, 503, 'mission_status_unavailable');
    assert.equal(
      (await w.harness.getView(w.pin.issuer, mission))?.state,
      null,
      '404 ⇒ unknown, never revoked',
    );

    await w.issuer.admin(`/admin/missions/${mission}/revoke`, {});
    const revoked = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assert.equal(revoked.status, 200, revoked.text);
    assert.deepEqual([revoked.body['state'], revoked.body['active']], ['revoked', false]);
    const stopped = await cli();
    assert.equal(stopped.code, 1, stopped.err);
    assert.match(stopped.out, /^revoked \(not active\)/);
    await w.issuer.admin('/admin/faults', { status: ['http_503'] });
    const down2 = await cli();
    assert.equal(down2.code, 1);
    assert.match(down2.err, /^error: mission_status_unavailable: /);
    assertProblem(
      await w.call('POST', `/v1/missions/${encodeURIComponent('https://nobody.example')}/${mission}/check`, {
        token: w.operator,
      }),
      404,
      'mission_issuer_not_found',
    );
    const metrics = (await w.call('GET', '/metrics')).text;
    for (const [result, n] of [
      // The answer the view did not take is still counted as the answer it was.
      ['active', 3],
      ['unavailable', 2],
      ['refused', 1],
      ['not_found', 1],
      // The revocation SET arrives with a version gap (no SET before it): one more check (A3.4 step 6).
      ['not_active', '[23]'],
    ] as const)
      assert.match(metrics, new RegExp(`baton_mission_checks_total\\{result="${result}"\\} ${n}\\n`));
  });

  test(`[${e.name}] HAR-11 A3.1 step 3: a dispatch with no view fetches Status first, then runs; revoked ⇒ suppressed`, async (t) => {
    const w = await consumerWorld(t, e);
    const mission = await w.issuer.createMission();
    assert.equal((await w.pinIssuer()).status, 201);
    const cred = (await w.call('POST', '/v1/lineages/invoice-agent/takeover', { token: w.operator })).body[
      'credential'
    ] as string;
    const enqueue = async (key: string): Promise<string> => {
      const made = await w.call('POST', '/v1/harness/items', {
        token: cred,
        body: {
          kind: 'queue_item',
          action_class: 'consequential_write',
          mission_binding: w.binding(mission),
          idempotency_key: key,
        },
      });
      assert.equal(made.status, 201, made.text);
      return made.body['id'] as string;
    };
    const first = await enqueue('pay-1');
    const d = await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: first } });
    assert.equal(d.status, 200, d.text);
    assert.equal((d.body['item'] as JsonObject)['state'], 'running');
    // One fetch, one answer applied once: one archive entry's evidence, one view version (A3.2 step 9).
    const verified = (await w.harness.events(missionSubject(w.pin.issuer, mission))).filter(
      (x) => x.type === 'mission_status_verified',
    );
    assert.equal(verified.length, 1, 'the fetched answer is applied once');
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.version, 1);
    // Revoked at the issuer, no SET reaches Baton (the pin's receiver came after the mission, and
    // the revocation is pushed: drop it). The view is fresh active until its bound; the operator
    // check learns the revocation and suppresses the queued sibling.
    await w.issuer.admin('/admin/faults', { sets: ['drop'] });
    const second = await enqueue('pay-2');
    await w.issuer.admin(`/admin/missions/${mission}/revoke`, {});
    const checked = await w.call('POST', checkPath(w, mission), { token: w.operator });
    assert.equal(checked.body['state'], 'revoked', checked.text);
    assert.ok((checked.body['stopped'] as number) >= 1);
    const shown = await w.call('GET', `/v1/harness/items/${second}`, { token: w.operator });
    assert.equal((shown.body['item'] as JsonObject)['state'], 'suppressed');
  });
}
