/**
 * Two answers that must say exactly what docs/api.md says: a bad RFC 3339 time is
 * `400 time_invalid` naming its place (the query parameter or the JSON member), never echoing the
 * text; and `GET /v1/evidence/histogram` answers `buckets` slices that tile [from, to) exactly —
 * slice i from `from + floor(i * span / buckets)`, none at or past `to` — refusing more slices than
 * milliseconds (`400 input_invalid` naming `buckets`). Real server on 127.0.0.1, both engines.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { appendEvidence } from '../../src/store/evidence-log.js';
import { binding, T0, verifiedSignal } from '../missions/fixtures.js';
import { servedWorld, type ServedWorld } from '../missions/http-world.js';
import { enginesUnderTest } from '../store/engines.js';
import { assertProblem, type Answer } from './helpers.js';

const engines = await enginesUnderTest();

const TYPE = 'histogram_tick';
const iso = (ms: number): string => new Date(ms).toISOString();

function assertPlace(a: Answer, status: number, code: string, path: string, value: string): void {
  assertProblem(a, status, code);
  assert.deepEqual(a.body['details'], { path }, a.text);
  assert.ok(!a.text.includes(value), `the value is not echoed: ${a.text}`);
}

async function ticks(w: ServedWorld, ats: readonly number[]): Promise<void> {
  await w.store.engine.transaction(async (tx) => {
    for (const at of ats)
      await appendEvidence(tx, { subject: 'test:ticks', type: TYPE, body: {}, at, actor: 'test' });
  });
}

const histogram = (w: ServedWorld, from: number, to: number, buckets: number) =>
  w.call('GET', `/v1/evidence/histogram?type=${TYPE}&from=${iso(from)}&to=${iso(to)}&buckets=${buckets}`, {
    token: w.operator,
  });

const bucketsOf = (a: Answer): JsonObject[] => a.body['buckets'] as JsonObject[];

test('a bad time is 400 time_invalid naming its query parameter or JSON member, never the value', async (t) => {
  const e = engines[0];
  assert.ok(e !== undefined);
  const w = await servedWorld(t, e);
  await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
  const agent = await w.takeover('agent-a');
  const get = (path: string) => w.call('GET', path, { token: w.operator });
  assertPlace(await get('/v1/occurrences?from=notatime'), 400, 'time_invalid', '$.from', 'notatime');
  assertPlace(await get('/v1/occurrences?to=notatime'), 400, 'time_invalid', '$.to', 'notatime');
  const at = `type=${TYPE}&from=${iso(T0)}&to=${iso(T0 + 1000)}`;
  assertPlace(
    await get(`/v1/evidence/histogram?${at.replace(iso(T0), 'notatime')}`),
    400,
    'time_invalid',
    '$.from',
    'notatime',
  );
  const item = await w.call('POST', '/v1/harness/items', {
    token: agent,
    body: {
      kind: 'queue_item',
      action_class: 'consequential_write',
      mission_binding: binding,
      expires_at: 'tomorrow',
    },
  });
  assertPlace(item, 400, 'time_invalid', '$.expires_at', 'tomorrow');
});

for (const e of engines) {
  test(`[${e.name}] GET /v1/evidence/histogram: buckets tile [from, to) exactly; more buckets than milliseconds is 400 naming buckets`, async (t) => {
    const w = await servedWorld(t, e);
    const T = T0 + 100;
    await ticks(w, [T - 1, T, T + 2, T + 3, T + 5, T + 6, T + 9, T + 10, T + 11]);

    // 10 ms in 3 slices: [T, T+3), [T+3, T+6), [T+6, T+10).
    const three = await histogram(w, T, T + 10, 3);
    assert.equal(three.status, 200, three.text);
    assert.deepEqual(bucketsOf(three), [
      { from: T, count: 2 },
      { from: T + 3, count: 2 },
      { from: T + 6, count: 2 },
    ]);

    // As many slices as milliseconds: one each, the last starting at to - 1.
    const five = await histogram(w, T, T + 5, 5);
    assert.equal(five.status, 200, five.text);
    assert.deepEqual(
      bucketsOf(five).map((b) => [b['from'], b['count']]),
      [
        [T, 1],
        [T + 1, 0],
        [T + 2, 1],
        [T + 3, 1],
        [T + 4, 0],
      ],
    );

    // Every slice starts in [from, to), ascending, and the counts add up to the events in range.
    const wide = await histogram(w, T - 1, T + 12, 7);
    const starts = bucketsOf(wide).map((b) => b['from'] as number);
    assert.equal(starts[0], T - 1);
    assert.ok(
      starts.every((s, i) => s < T + 12 && (i === 0 || s > (starts[i - 1] ?? 0))),
      String(starts),
    );
    assert.equal(
      bucketsOf(wide).reduce((n, b) => n + (b['count'] as number), 0),
      9,
    );

    // The review's case: 5 ms in 99 slices ran 93 ms past `to`.
    const before = await w.snapshot();
    const tooMany = await histogram(w, T, T + 5, 99);
    assertProblem(tooMany, 400, 'input_invalid');
    assert.equal((tooMany.body['details'] as JsonObject)['path'], '$.buckets');
    assertProblem(await histogram(w, T, T + 5, 6), 400, 'input_invalid');
    assert.equal(await w.snapshot(), before);
  });
}
