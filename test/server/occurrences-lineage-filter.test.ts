/**
 * `GET /v1/occurrences?lineage=` as an executor, over HTTP against a real server: naming another
 * lineage is refused exactly as reading that lineage is (`GET /v1/lineages/{lineage}`:
 * `403 forbidden`), never answered `200` with the executor's own list as if the filter had
 * applied; naming its own lineage, or none, lists its own; an operator's filter is unchanged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import {
  assertProblem,
  createOccurrence,
  setupOverHttp,
  startApi,
  str,
  takeover,
  type Answer,
} from './helpers.js';

const ids = (a: Answer): string[] => (a.body['occurrences'] as JsonObject[]).map((o) => str(o));

test('an executor naming another lineage in GET /v1/occurrences gets 403 forbidden, like GET /v1/lineages/{other}', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const a = await takeover(api, 'agent-a');
  const b = await takeover(api, 'agent-b');
  const mine = str(await createOccurrence(api, a, 'inv-a'));
  api.clock.advance(1000);
  const theirs = str(await createOccurrence(api, b, 'inv-b'));

  const before = await api.snapshot();
  const other = await api.call('GET', '/v1/occurrences?lineage=agent-b', { token: a });
  assertProblem(other, 403, 'forbidden');
  // The same answer as reading the other lineage directly.
  const direct = await api.call('GET', '/v1/lineages/agent-b', { token: a });
  assertProblem(direct, 403, 'forbidden');
  assert.equal(other.body['detail'], direct.body['detail']);
  // With other filters too, and for a lineage that does not exist (nothing is disclosed).
  assertProblem(
    await api.call('GET', '/v1/occurrences?lineage=agent-b&phase=reserved', { token: a }),
    403,
    'forbidden',
  );
  assertProblem(await api.call('GET', '/v1/occurrences?lineage=nobody', { token: a }), 403, 'forbidden');
  assert.equal(await api.snapshot(), before, 'a refusal changes no state');

  // Its own lineage, named or not: its own occurrences.
  const named = await api.call('GET', '/v1/occurrences?lineage=agent-a', { token: a });
  assert.equal(named.status, 200, named.text);
  assert.deepEqual(ids(named), [mine]);
  const unnamed = await api.call('GET', '/v1/occurrences', { token: a });
  assert.equal(unnamed.status, 200, unnamed.text);
  assert.deepEqual(ids(unnamed), [mine]);
  // An operator filters by any lineage, as before.
  const operator = await api.call('GET', '/v1/occurrences?lineage=agent-b', { token: api.operator });
  assert.equal(operator.status, 200, operator.text);
  assert.deepEqual(ids(operator), [theirs]);
});
