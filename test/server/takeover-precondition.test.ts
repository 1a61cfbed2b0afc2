/**
 * `POST /v1/lineages/{lineage}/takeover` with `{ expectedGeneration }`: compare-and-set on the
 * generation the caller means to retire (0: the lineage has none yet). Racing supervisors that
 * read the same generation get exactly one successor; the others are refused
 * `409 generation_mismatch` with nothing changed — no generation, no credential, no event — instead
 * of a credential already retired by the winner (AOC-REQ-006 fences either way; this makes the
 * loser learn it at takeover, not at first use). Without the member, takeover is unconditional.
 * Real server on 127.0.0.1, both engines.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { listEvidence } from '../../src/store/evidence-log.js';
import { enginesUnderTest } from '../store/engines.js';
import { servedWorld, type ServedWorld } from '../missions/http-world.js';
import { assertProblem, type Answer } from './helpers.js';

const engines = await enginesUnderTest();

const LINEAGE = 'payroll-agent';
const PATH = `/v1/lineages/${LINEAGE}/takeover`;

function takeoverExpecting(api: ServedWorld, expectedGeneration: unknown): Promise<Answer> {
  return api.call('POST', PATH, { token: api.operator, body: { expectedGeneration } });
}

async function lineageEvents(api: ServedWorld): Promise<number> {
  return (await api.store.engine.read((ex) => listEvidence(ex, `lineage:${LINEAGE}`))).length;
}

async function generationOf(api: ServedWorld): Promise<number> {
  const a = await api.call('GET', `/v1/lineages/${LINEAGE}`, { token: api.operator });
  assert.equal(a.status, 200, a.text);
  return a.body['generation'] as number;
}

function assertMismatch(a: Answer, expected: number, current: number): void {
  assertProblem(a, 409, 'generation_mismatch');
  assert.deepEqual(a.body['details'], {
    lineage: LINEAGE,
    expectedGeneration: expected,
    currentGeneration: current,
  });
  assert.equal(a.body['credential'], undefined, 'a refusal carries no credential');
}

for (const e of engines) {
  test(`[${e.name}] takeover expecting another generation is 409 generation_mismatch and changes nothing`, async (t) => {
    const api = await servedWorld(t, e);
    // A lineage with no generation yet: expecting one is refused, and no lineage row appears.
    const empty = await api.snapshot();
    assertMismatch(await takeoverExpecting(api, 1), 1, 0);
    assert.equal(await api.snapshot(), empty, 'no lineage, credential or event was written');
    const missing = await api.call('GET', `/v1/lineages/${LINEAGE}`, { token: api.operator });
    assertProblem(missing, 404, 'lineage_not_found');

    await api.takeover(LINEAGE);
    const current = await api.takeover(LINEAGE);
    const before = await api.snapshot();
    for (const stale of [0, 1, 3, 99]) assertMismatch(await takeoverExpecting(api, stale), stale, 2);
    assert.equal(await api.snapshot(), before, 'every table as it was');
    assert.equal(await generationOf(api), 2);
    assert.equal(await lineageEvents(api), 2, 'no generation_advanced event');
    // The current executor's credential still acts: nothing retired it.
    const open = await api.call('GET', `/v1/lineages/${LINEAGE}/open`, { token: current });
    assert.equal(open.status, 200, open.text);
  });

  test(`[${e.name}] takeover expecting the current generation advances it (0 for a lineage with none)`, async (t) => {
    const api = await servedWorld(t, e);
    const first = await takeoverExpecting(api, 0);
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body['generation'], 1);
    assert.equal(first.body['retiredGeneration'], null);

    const second = await takeoverExpecting(api, 1);
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body['generation'], 2);
    assert.equal(second.body['retiredGeneration'], 1);
    // The predecessor is retired as by any takeover (AOC-REQ-006).
    const old = await api.call('GET', `/v1/lineages/${LINEAGE}/open`, {
      token: first.body['credential'] as string,
    });
    assertProblem(old, 409, 'generation_retired');

    // Without the member (no body, null, {}), takeover stays unconditional.
    const bare = await api.call('POST', PATH, { token: api.operator });
    assert.equal(bare.status, 201, bare.text);
    const empty = await api.call('POST', PATH, { token: api.operator, body: {} });
    assert.equal(empty.status, 201, empty.text);
    assert.equal(empty.body['generation'], 4);
    assert.equal(await lineageEvents(api), 4);
  });

  test(`[${e.name}] concurrent takeovers expecting the same generation: exactly one 201, the others 409`, async (t) => {
    const api = await servedWorld(t, e);
    await api.takeover(LINEAGE);
    const answers = await Promise.all(Array.from({ length: 6 }, () => takeoverExpecting(api, 1)));
    const won = answers.filter((a) => a.status === 201);
    const lost = answers.filter((a) => a.status !== 201);
    assert.equal(won.length, 1, answers.map((a) => a.text).join('\n'));
    assert.equal(won[0]?.body['generation'], 2);
    for (const a of lost) assertMismatch(a, 1, 2);
    assert.equal(await generationOf(api), 2);
    assert.equal(await lineageEvents(api), 2, 'one takeover event for the one winner');
    const lineage = await api.call('GET', `/v1/lineages/${LINEAGE}`, { token: api.operator });
    assert.equal((lineage.body['credentials'] as JsonObject[]).length, 2, 'one credential per generation');
  });

  test(`[${e.name}] a malformed expectedGeneration is 400 input_invalid, nothing changed`, async (t) => {
    const api = await servedWorld(t, e);
    await api.takeover(LINEAGE);
    const before = await api.snapshot();
    for (const bad of [-1, 1.5, '1', null, true, [1], { generation: 1 }]) {
      assertProblem(await takeoverExpecting(api, bad), 400, 'input_invalid');
    }
    // Beyond 2^53 the JSON reader refuses the number itself, before any schema.
    assertProblem(await takeoverExpecting(api, 2 ** 53), 400, 'json_number_out_of_range');
    const unknown = await api.call('POST', PATH, { token: api.operator, body: { generation: 1 } });
    assertProblem(unknown, 400, 'input_invalid');
    assert.equal(await api.snapshot(), before);
    // The same route takes the well-formed member.
    const ok = await takeoverExpecting(api, 1);
    assert.equal(ok.status, 201, ok.text);
  });
}
