/**
 * An executor's reach over the harness (docs/harness.md "Executor scope"), over real HTTP on
 * loopback on both engines, and in process: the session and the parent item an executor names
 * when it creates work, and the work item it names when it creates a governed occurrence, must be
 * its own lineage's. Another lineage's — and a session or item of no lineage (an operator's) —
 * answers exactly as an unknown id does (same status, same problem body), and nothing is written:
 * no item in the other lineage's session or under its item, no evidence on its `session:<id>`
 * chain, no occurrence. Operators keep their reach.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InProcessBatonClient } from '../../src/client/in-process.js';
import { isBatonError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import { enginesUnderTest } from '../store/engines.js';
import { assertProblem, createBody, str, type Answer } from '../server/helpers.js';
import { binding, T0, verifiedSignal } from './fixtures.js';
import { servedWorld } from './http-world.js';

const engines = await enginesUnderTest();

const queueItem: JsonObject = {
  kind: 'queue_item',
  action_class: 'consequential_write',
  mission_binding: binding as unknown as JsonObject,
};

/** `refused` is a 404 (`code`) with exactly the problem body `unknown` has. */
function sameAsUnknown(refused: Answer, unknown: Answer, what: string, code = 'work_item_not_found'): void {
  assertProblem(unknown, 404, code);
  assertProblem(refused, 404, code);
  assert.deepEqual(refused.body, unknown.body, `${what}: answered as an unknown id`);
}

/** A session not found: its own code. */
const sameAsUnknownSession = (refused: Answer, unknown: Answer, what: string): void =>
  sameAsUnknown(refused, unknown, what, 'session_not_found');

for (const e of engines) {
  test(`[${e.name}] an executor cannot create work in another lineage's session or under its item: answered as an unknown id, nothing written`, async (t) => {
    const w = await servedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const a = await w.takeover('agent-a');
    const b = await w.takeover('agent-b');
    const post = (token: string, body: JsonObject) => w.call('POST', '/v1/harness/items', { token, body });

    const sA = await w.call('POST', '/v1/harness/sessions', {
      token: a,
      body: { mission_binding: binding as unknown as JsonObject },
    });
    assert.equal(sA.status, 201, sA.text);
    const sessionA = str(sA.body);
    const iA = await post(a, { ...queueItem, session_id: sessionA });
    assert.equal(iA.status, 201, iA.text);
    const itemA = str(iA.body);
    // An operator's session and item carry no lineage: no executor's.
    const sN = await w.call('POST', '/v1/harness/sessions', {
      token: w.operator,
      body: { mission_binding: binding },
    });
    assert.equal(sN.status, 201, sN.text);
    assert.equal(sN.body['lineage'], null);
    const iN = await post(w.operator, queueItem);
    assert.equal(iN.status, 201, iN.text);
    assert.equal(iN.body['lineage'], null);

    const before = await w.snapshot();
    const unknownSession = await post(b, { ...queueItem, session_id: 'sess_unknown_1' });
    const unknownParent = await post(b, { ...queueItem, kind: 'task_node', parent_item: 'wrk_unknown_1' });
    sameAsUnknownSession(
      await post(b, { ...queueItem, session_id: sessionA }),
      unknownSession,
      "A's session",
    );
    sameAsUnknownSession(
      await post(b, { kind: 'queue_item', action_class: 'consequential_write', session_id: sessionA }),
      unknownSession,
      "A's session, its binding inherited",
    );
    sameAsUnknownSession(
      await post(b, { ...queueItem, session_id: str(sN.body) }),
      unknownSession,
      'a null-lineage session',
    );
    sameAsUnknown(
      await post(b, { ...queueItem, kind: 'task_node', parent_item: itemA }),
      unknownParent,
      "A's item as parent",
    );
    sameAsUnknown(
      await post(b, { ...queueItem, kind: 'task_node', parent_item: str(iN.body) }),
      unknownParent,
      'a null-lineage parent',
    );
    // Claiming A's lineage in the body gains nothing: the contradiction is refused outright
    // (test/missions/harness-lineage-body.test.ts).
    assertProblem(
      await post(b, { ...queueItem, session_id: sessionA, lineage: 'agent-a' }),
      403,
      'forbidden',
    );
    assert.equal(await w.snapshot(), before, 'the refusals wrote nothing');

    // The owner and operators keep their reach.
    const child = await post(a, { ...queueItem, kind: 'task_node', parent_item: itemA });
    assert.equal(child.status, 201, child.text);
    assert.deepEqual([child.body['lineage'], child.body['sessionId']], ['agent-a', sessionA]);
    const more = await post(a, { ...queueItem, session_id: sessionA });
    assert.equal(more.status, 201, more.text);
    const byOperator = await post(w.operator, { ...queueItem, kind: 'task_node', parent_item: itemA });
    assert.equal(byOperator.status, 201, byOperator.text);
    assert.equal(byOperator.body['lineage'], 'agent-a');
    const inSession = await post(w.operator, { ...queueItem, session_id: sessionA });
    assert.equal(inSession.status, 201, inSession.text);
  });

  test(`[${e.name}] a governed occurrence names only its own lineage's work item: another's (or a null-lineage one) is answered as an unknown id`, async (t) => {
    const w = await servedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const a = await w.takeover('agent-a');
    const b = await w.takeover('agent-b');
    const made = await w.call('POST', '/v1/harness/items', { token: a, body: queueItem });
    const itemA = str(made.body);
    const d = await w.call('POST', '/v1/harness/dispatch', { token: a, body: { itemId: itemA } });
    assert.equal(d.status, 200, d.text);
    // A running item of no lineage (an operator's, dispatched in process).
    const orphan = await w.harness.createItem(queueItem, 'operator');
    await w.harness.dispatch(orphan.id, 'operator');
    const occurrence = (token: string, key: string, workItemId: string) =>
      w.call('POST', '/v1/occurrences', { token, body: { ...createBody(key), workItemId } });

    const before = await w.snapshot();
    const unknown = await occurrence(b, 'pay-b-1', 'wrk_unknown_1');
    sameAsUnknown(await occurrence(b, 'pay-b-2', itemA), unknown, "A's running item");
    sameAsUnknown(await occurrence(b, 'pay-b-3', orphan.id), unknown, 'a null-lineage running item');
    assert.equal(await w.snapshot(), before, 'the refusals wrote nothing');

    const own = await occurrence(a, 'pay-a-1', itemA);
    assert.equal(own.status, 201, own.text);
  });

  test(`[${e.name}] in process, too: another lineage's session and parent item are not found`, async (t) => {
    const w = await servedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const client = new InProcessBatonClient({ service: w.occurrences, harness: w.harness });
    const a = await client.takeover('agent-a');
    const b = await client.takeover('agent-b');
    const session = await a.harness.session(binding);
    const item = await a.harness.enqueue({ action_class: 'consequential_write', session_id: session.id });
    const notFound = (x: unknown) => isBatonError(x) && x.code === 'work_item_not_found';
    const before = await w.snapshot();
    await assert.rejects(
      b.harness.enqueue({ action_class: 'consequential_write', session_id: session.id }),
      (x: unknown) => isBatonError(x, 'session_not_found'),
    );
    await assert.rejects(
      b.harness.spawn(
        item.id,
        {
          actor: { client_id: 'agent-7' },
          parent_mission: { id: binding.mission_id, origin: binding.mission_origin },
          governed_by: { kind: 'parent_mission' },
        },
        { action_class: 'consequential_read', mission_binding: binding },
      ),
      notFound,
    );
    assert.equal(await w.snapshot(), before, 'the refusals wrote nothing');
    const own = await a.harness.enqueue({ action_class: 'consequential_read', parent_item: item.id });
    assert.deepEqual([own.lineage, own.sessionId], ['agent-a', session.id]);
  });
}
