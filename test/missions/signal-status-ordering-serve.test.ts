/**
 * A3.3 / MSG-02 between poll and push: a Status answer carries no `version`, so an `active` SET
 * committed BEFORE the Status answer a view rests on must not lift it. The real reference issuer
 * suspends, resumes (v3) and suspends again (v4), seconds apart on its own clock, with every SET
 * dropped; Baton's operator check learns `suspended`; then v3 — the issuer's real transition,
 * signed with its real key — reaches Baton's RFC 8935 route late. It is ignored
 * (`signal_older_than_status`), the view stays suspended and a dispatch is refused, on both
 * engines. The pure rule: view-ordering.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { missionSubject, SET_MEDIA_TYPE } from '../../src/missions/index.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { consumerWorld, eventually, issuerSet, STREAM_BEARER } from './consumer-world.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] A3.3 MSG-02 an active SET committed before the Status answer the view rests on does not lift it`, async (t) => {
    // The issuer's clock moves 2 s per step (ending 2 s behind Baton's, well inside the 30 s skew),
    // so v3's committed_at is whole seconds before the Status answer's iat.
    let skewMs = -10_000;
    const clock = { wallMs: () => Date.now() + skewMs, monotonicMs: () => performance.now() };
    const step = (): void => {
      skewMs += 2_000;
    };
    const w = await consumerWorld(t, e, { issuer: { clock } });
    assert.equal((await w.pinIssuer()).status, 201);
    const mission = await w.issuer.createMission();
    await eventually(
      async () => (await w.harness.getView(w.pin.issuer, mission))?.state === 'active',
      'the approval SET',
    );
    // v2 suspended, v3 active, v4 suspended: none of their SETs reaches Baton.
    await w.issuer.admin('/admin/faults', { sets: ['drop'], count: 3 });
    for (const op of ['suspend', 'resume', 'suspend']) {
      step();
      assert.equal((await w.issuer.admin(`/admin/missions/${mission}/${op}`, {})).status, 200);
    }
    step();
    const checked = await w.call(
      'POST',
      `/v1/missions/${encodeURIComponent(w.pin.issuer)}/${mission}/check`,
      {
        token: w.operator,
      },
    );
    assert.deepEqual([checked.status, checked.body['state']], [200, 'suspended'], checked.text);

    const pushed = await w.call('POST', `/v1/missions/signals/${encodeURIComponent(w.pin.issuer)}`, {
      raw: await issuerSet(w, mission, 3),
      contentType: SET_MEDIA_TYPE,
      headers: { authorization: `Bearer ${STREAM_BEARER}` },
    });
    assert.equal(pushed.status, 202, pushed.text);
    const ignored = (await w.harness.events(missionSubject(w.pin.issuer, mission))).find(
      (x) => x.type === 'mission_signal_ignored',
    );
    assert.equal((ignored?.body as JsonObject | undefined)?.['reason'], 'signal_older_than_status');
    assert.equal((await w.harness.getView(w.pin.issuer, mission))?.state, 'suspended');

    const cred = (await w.call('POST', '/v1/lineages/invoice-agent/takeover', { token: w.operator })).body[
      'credential'
    ] as string;
    const item = await w.call('POST', '/v1/harness/items', {
      token: cred,
      body: {
        kind: 'queue_item',
        action_class: 'consequential_write',
        mission_binding: w.binding(mission),
        idempotency_key: 'pay-1',
      },
    });
    assert.equal(item.status, 201, item.text);
    assertProblem(
      await w.call('POST', '/v1/harness/dispatch', { token: cred, body: { itemId: item.body['id'] } }),
      403,
      'mission_not_active',
    );
  });
}
