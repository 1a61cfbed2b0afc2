/**
 * `GET /v1/harness/sessions/{id}` and `GET /v1/harness/items/{id}` answer their evidence chain a
 * page at a time, as `GET /v1/evidence?subject=` does: a session's chain gains an event with every
 * item of the session, so one answer holding the whole chain grew without bound. `limit` 1..500
 * (default 50), `cursor` = the previous page's `evidenceNextCursor` (null only on the last page).
 * The SDK's `getSession` and `get` still give the whole chain, reading every page, and refuse pages
 * that do not move on. Real server on 127.0.0.1, both engines, real signed harness evidence.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { HarnessClient } from '../../src/client/harness.js';
import { isBatonError } from '../../src/core/errors.js';
import { fakeBaton } from '../support/fake-baton.js';
import type { JsonObject } from '../../src/core/json.js';
import { sessionSubject, workSubject } from '../../src/missions/index.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import { assertProblem } from '../server/helpers.js';
import { enginesUnderTest } from '../store/engines.js';
import { binding, verifiedSignal } from './fixtures.js';
import { servedWorld, type ServedWorld } from './http-world.js';

const engines = await enginesUnderTest();

/** More dispatched items than the SDK's page (200) holds events, so `getSession` must follow cursors. */
const ITEMS = 230;

async function sessionWithItems(t: TestContext, e: (typeof engines)[number]) {
  const api = await servedWorld(t, e);
  await api.harness.applyVerifiedSignal(verifiedSignal('active', 1, api.clock.wallMs()));
  const credential = await api.takeover('invoice-agent');
  const client = new HarnessClient({ baseUrl: api.url, credential });
  const session = await client.session(binding);
  const actor = 'executor:invoice-agent#1';
  const items: string[] = [];
  for (let i = 0; i < ITEMS; i++) {
    const input = { kind: 'queue_item', action_class: 'consequential_write', session_id: session.id };
    const made = await api.harness.createItem({ ...input, mission_binding: binding }, actor, 'invoice-agent');
    // Each dispatch's signed harness evidence joins the session's chain too.
    await api.harness.dispatch(made.id, actor, 1);
    items.push(made.id);
  }
  return { api, credential, client, sessionId: session.id, items };
}

const events = (a: { body: JsonObject }): JsonObject[] => a.body['evidence'] as JsonObject[];
const hashes = (xs: readonly object[]): string[] => xs.map((e) => (e as { hash: string }).hash);

/** Every page of `path` at `limit`, following evidenceNextCursor; asserts each page's size. */
async function pages(api: ServedWorld, token: string, path: string, limit: number): Promise<JsonObject[]> {
  const out: JsonObject[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 1000; n++) {
    const a = await api.call('GET', `${path}?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`, {
      token,
    });
    assert.equal(a.status, 200, a.text);
    out.push(...events(a));
    cursor = a.body['evidenceNextCursor'] as string | null;
    if (cursor === null) return out;
    assert.equal(events(a).length, limit, 'only the last page is short');
  }
  throw new Error('paging did not end');
}

for (const e of engines) {
  test(`[${e.name}] GET /v1/harness/sessions/{id} answers one page of its chain; paging through gives the stored chain`, async (t) => {
    const { api, credential, sessionId } = await sessionWithItems(t, e);
    const stored = await api.harness.events(sessionSubject(sessionId));
    assert.ok(stored.length > 200, `the session chain holds ${stored.length} events`);

    const first = await api.call('GET', `/v1/harness/sessions/${sessionId}`, { token: credential });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(Object.keys(first.body).sort(), ['evidence', 'evidenceNextCursor', 'session']);
    assert.equal((first.body['session'] as JsonObject)['id'], sessionId);
    assert.deepEqual(hashes(events(first)), hashes(stored.slice(0, 50)), 'the default page: the oldest 50');
    assert.equal(typeof first.body['evidenceNextCursor'], 'string', 'a truncated chain says so');

    for (const limit of [7, 500]) {
      assert.deepEqual(
        hashes(await pages(api, credential, `/v1/harness/sessions/${sessionId}`, limit)),
        hashes(stored),
      );
    }
    assert.equal((await verifyEvidence(api.store.engine)).ok, true);
  });

  test(`[${e.name}] GET /v1/harness/items/{id} pages its chain; bad limits and forged cursors are refused; another lineage learns nothing`, async (t) => {
    const { api, credential, items, sessionId } = await sessionWithItems(t, e);
    const id = items[0]!;
    const stored = await api.harness.events(workSubject(id));
    assert.ok(stored.length >= 1);
    const one = await api.call('GET', `/v1/harness/items/${id}?limit=1`, { token: api.operator });
    assert.equal(one.status, 200, one.text);
    assert.equal(events(one).length, 1);
    assert.equal(one.body['evidenceNextCursor'] === null, stored.length === 1);
    assert.deepEqual(hashes(await pages(api, api.operator, `/v1/harness/items/${id}`, 1)), hashes(stored));

    const forged = Buffer.from(JSON.stringify(['1']), 'utf8').toString('base64url');
    for (const [path, missing] of [
      [`/v1/harness/items/${id}`, 'work_item_not_found'],
      [`/v1/harness/sessions/${sessionId}`, 'session_not_found'],
    ] as const) {
      for (const q of ['limit=0', 'limit=501', 'limit=x', `cursor=${forged}`, 'cursor=not*a*cursor']) {
        assertProblem(await api.call('GET', `${path}?${q}`, { token: credential }), 400, 'input_invalid');
      }
      const cursor = (await api.call('GET', `${path}?limit=1`, { token: credential })).body[
        'evidenceNextCursor'
      ];
      const other = await api.takeover('other-agent');
      const q = typeof cursor === 'string' ? `?cursor=${cursor}` : '';
      assertProblem(await api.call('GET', `${path}${q}`, { token: other }), 404, missing);
    }
  });

  test(`[${e.name}] the SDK's getSession and get read every page: the whole stored chain`, async (t) => {
    const { api, client, sessionId, items } = await sessionWithItems(t, e);
    const read = await client.getSession(sessionId);
    assert.equal(read.session.id, sessionId);
    assert.deepEqual(hashes(read.evidence), hashes(await api.harness.events(sessionSubject(sessionId))));
    const item = await client.get(items[1]!);
    assert.equal(item.item.id, items[1]);
    assert.deepEqual(hashes(item.evidence), hashes(await api.harness.events(workSubject(items[1]!))));
  });
}

test('the SDK refuses chain pages that do not move on or lack the cursor (baton_response_invalid), never a partial chain', async (t) => {
  const session = { id: 'ses_1' };
  const event = { seq: 1, hash: 'h' };
  const answers: Record<string, (n: number) => JsonObject> = {
    'no cursor member': () => ({ session, evidence: [event] }),
    'a cursor of the wrong type': () => ({ session, evidence: [event], evidenceNextCursor: 7 }),
    'evidence not an array': () => ({ session, evidence: {}, evidenceNextCursor: null }),
    'an empty page that is not the last': () => ({ session, evidence: [], evidenceNextCursor: 'WzFd' }),
    'the same cursor again': () => ({ session, evidence: [event], evidenceNextCursor: 'WzFd' }),
    'no record': () => ({ session: null, evidence: [event], evidenceNextCursor: null }),
  };
  for (const [why, page] of Object.entries(answers)) {
    const client = new HarnessClient({ baseUrl: await fakeBaton(t, page), credential: 'bt_x' });
    await assert.rejects(
      client.getSession('ses_1'),
      (err: unknown) => isBatonError(err, 'baton_response_invalid'),
      why,
    );
  }
});
