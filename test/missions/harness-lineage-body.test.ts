/**
 * What an executor's body says about lineage and session ids (docs/harness.md "Executor scope"),
 * over real HTTP on loopback on both engines. A `lineage` that contradicts the credential is
 * refused `403 forbidden`, as `GET /v1/occurrences?lineage=` refuses it, never turned into a `201`
 * in the executor's own lineage; nothing is stored. A session that is not there (or another
 * lineage's) is `404 session_not_found`, not a work item's code. A session id taken by another
 * lineage answers the `409` the owner's own repeat gets, byte for byte: that the id is taken is
 * the one thing disclosed, never whose it is.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBatonError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import { enginesUnderTest } from '../store/engines.js';
import { assertProblem, str, type Answer } from '../server/helpers.js';
import { binding, T0, verifiedSignal } from './fixtures.js';
import { servedWorld } from './http-world.js';

const engines = await enginesUnderTest();

const bound = binding as unknown as JsonObject;
const queueItem: JsonObject = {
  kind: 'queue_item',
  action_class: 'consequential_write',
  mission_binding: bound,
};

/** Both are the same problem, body and all (nothing in one tells them apart). */
function sameProblem(a: Answer, b: Answer, status: number, code: string, what: string): void {
  assertProblem(a, status, code);
  assertProblem(b, status, code);
  assert.deepEqual(a.body, b.body, what);
}

for (const e of engines) {
  test(`[${e.name}] an executor naming another lineage in a harness body is refused 403 forbidden, as the occurrences list is, and nothing is stored`, async (t) => {
    const w = await servedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const a = await w.takeover('agent-a');
    await w.takeover('agent-b');
    const post = (path: string, body: JsonObject) => w.call('POST', path, { token: a, body });
    const own = await post('/v1/harness/sessions', { mission_binding: bound });
    assert.equal(own.status, 201, own.text);
    const ownSession = str(own.body);

    // The occurrences list's answer to the same contradiction is the reference.
    const listed = await w.call('GET', '/v1/occurrences?lineage=agent-b', { token: a });
    assertProblem(listed, 403, 'forbidden');

    const before = await w.snapshot();
    const session = await post('/v1/harness/sessions', {
      session_id: 's1',
      lineage: 'agent-b',
      mission_binding: bound,
    });
    assertProblem(session, 403, listed.body['code'] as string);
    const item = await post('/v1/harness/items', { ...queueItem, queue_item_id: 'q1', lineage: 'agent-b' });
    assertProblem(item, 403, 'forbidden');
    // Refused before any id is looked at: its own session does not make the contradiction right.
    assertProblem(
      await post('/v1/harness/items', { ...queueItem, session_id: ownSession, lineage: 'agent-b' }),
      403,
      'forbidden',
    );
    assert.equal(await w.snapshot(), before, 'the refusals stored nothing');
    for (const path of ['/v1/harness/sessions/s1', '/v1/harness/items/q1'])
      assert.equal((await w.call('GET', path, { token: w.operator })).status, 404, path);

    // In process the service draws the same line (the in-process client shares it).
    await assert.rejects(
      w.harness.createSession(
        { mission_binding: bound, lineage: 'agent-b' },
        'executor:agent-a#1',
        'agent-a',
      ),
      (x: unknown) => isBatonError(x, 'forbidden'),
    );
    assert.equal(await w.snapshot(), before, 'nor did the in-process refusal');

    // Naming its own lineage, or none, is fine; an operator's lineage is used as given.
    const named = await post('/v1/harness/sessions', { lineage: 'agent-a', mission_binding: bound });
    assert.equal(named.status, 201, named.text);
    assert.equal(named.body['lineage'], 'agent-a');
    const ownItem = await post('/v1/harness/items', { ...queueItem, lineage: 'agent-a' });
    assert.equal(ownItem.status, 201, ownItem.text);
    assert.equal(ownItem.body['lineage'], 'agent-a');
    const unnamed = await post('/v1/harness/items', queueItem);
    assert.equal(unnamed.body['lineage'], 'agent-a');
    const byOperator = await w.call('POST', '/v1/harness/sessions', {
      token: w.operator,
      body: { lineage: 'agent-b', mission_binding: bound },
    });
    assert.equal(byOperator.status, 201, byOperator.text);
    assert.equal(byOperator.body['lineage'], 'agent-b');
  });

  test(`[${e.name}] a missing or another lineage's session is 404 session_not_found; a taken session id answers another lineage what it answers its owner`, async (t) => {
    const w = await servedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const a = await w.takeover('agent-a');
    const b = await w.takeover('agent-b');
    const made = await w.call('POST', '/v1/harness/sessions', {
      token: a,
      body: { session_id: 's1', mission_binding: bound },
    });
    assert.equal(made.status, 201, made.text);

    const before = await w.snapshot();
    const get = (token: string, id: string) => w.call('GET', `/v1/harness/sessions/${id}`, { token });
    const unknown = await get(b, 'ses_x');
    sameProblem(await get(b, 's1'), unknown, 404, 'session_not_found', "A's session read by B");
    assertProblem(await get(w.operator, 'ses_x'), 404, 'session_not_found');
    const taint = (id: string) =>
      w.call('POST', `/v1/harness/sessions/${id}/taint`, { token: b, body: { source: 'tool_result' } });
    sameProblem(
      await taint('s1'),
      await taint('ses_x'),
      404,
      'session_not_found',
      "A's session tainted by B",
    );
    const enqueue = (id: string) =>
      w.call('POST', '/v1/harness/items', { token: b, body: { ...queueItem, session_id: id } });
    sameProblem(await enqueue('s1'), await enqueue('ses_x'), 404, 'session_not_found', 'work in it');

    // The id is global: B cannot have it, and learns no more than A's own repeat is told.
    const again = { session_id: 's1', mission_binding: bound };
    const byOwner = await w.call('POST', '/v1/harness/sessions', { token: a, body: again });
    const byOther = await w.call('POST', '/v1/harness/sessions', { token: b, body: again });
    sameProblem(byOther, byOwner, 409, 'work_item_conflict', 'a taken id, whoever holds it');
    assert.equal(byOther.body['details'], undefined, 'nothing of the holder');
    assert.equal(await w.snapshot(), before, 'the refusals stored nothing');
  });
}
