/**
 * A page's `limit` as /openapi.json states it is what the server accepts: the schema's pattern
 * admits exactly the limits the route answers, at the bounds (1, 500, 501, 999, 1000…), so a
 * client generated from the document never sends a limit it says is valid and gets a 400.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { setupOverHttp, startApi, takeover } from './helpers.js';

const PROBES = ['0', '1', '9', '10', '99', '100', '499', '500', '501', '599', '999', '1000', '1001', '9999'];

test('the limit schema in /openapi.json admits exactly the limits each paged route accepts', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  await takeover(api, 'invoice-agent');
  const doc = await api.call('GET', '/openapi.json');
  assert.equal(doc.status, 200, doc.text);
  const paths = doc.body['paths'] as Record<string, Record<string, JsonObject>>;
  const routes: readonly (readonly [string, string, string])[] = [
    ['/v1/occurrences', '/v1/occurrences', ''],
    ['/v1/lineages/{lineage}', '/v1/lineages/invoice-agent', ''],
    ['/v1/lineages', '/v1/lineages', ''],
    ['/v1/evidence', '/v1/evidence', 'subject=invoice-agent&'],
  ];
  for (const [template, path, query] of routes) {
    const params = (paths[template]?.['get']?.['parameters'] ?? []) as JsonObject[];
    const limit = params.find((p) => p['name'] === 'limit');
    assert.ok(limit !== undefined, `${template} documents a limit`);
    const pattern = new RegExp((limit['schema'] as JsonObject)['pattern'] as string, 'u');
    const documented: string[] = [];
    const served: string[] = [];
    for (const n of PROBES) {
      if (pattern.test(n)) documented.push(n);
      const r = await api.call('GET', `${path}?${query}limit=${n}`, { token: api.operator });
      assert.ok(r.status === 200 || r.status === 400, `${template} limit=${n}: ${r.status} ${r.text}`);
      if (r.status === 200) served.push(n);
    }
    assert.deepEqual(documented, served, `${template}: the documented limits are the served ones`);
    assert.ok(served.includes('500') && !served.includes('501'), `${template} serves 1..500`);
  }
});
