/**
 * Seeing what happened, over HTTP against a real server: `GET /v1/occurrences` (filters, cursor,
 * executor visibility, refusals as problems, the route in OpenAPI) and `baton occurrences list|show`
 * (--url/--token/BATON_URL/BATON_TOKEN, --json), whose timeline marks each event by the store's
 * chain walk — an event changed behind Baton's back is marked BROKEN — and lists the takeovers
 * that delivered the occurrence to a successor (AOC-REQ-005).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import type { CliIo } from '../../src/cli/io.js';
import type { JsonObject } from '../../src/core/json.js';
import {
  assertProblem,
  createOccurrence,
  setupOverHttp,
  startApi,
  str,
  takeover,
  type Api,
} from './helpers.js';
import { DROP_EVIDENCE_GUARD } from '../store/support.js';

async function cli(
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return { code: await main(argv, io), out, err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function world(api: Api) {
  await setupOverHttp(api);
  const a = await takeover(api, 'agent-a');
  const b = await takeover(api, 'agent-b');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(str(await createOccurrence(api, i % 2 === 0 ? a : b, `inv-${i}`)));
    api.clock.advance(1000);
  }
  return { a, b, ids };
}

test('GET /v1/occurrences: filters, an opaque cursor, executor sees only its lineage, refusals are problems', async (t) => {
  const api = await startApi(t);
  const { a, ids } = await world(api);
  const newest = [...ids].reverse();
  const p1 = await api.call('GET', '/v1/occurrences?limit=2', { token: api.operator });
  assert.equal(p1.status, 200, p1.text);
  const page = (x: JsonObject): string[] => (x['occurrences'] as JsonObject[]).map((o) => str(o));
  assert.deepEqual(page(p1.body), newest.slice(0, 2));
  const cursor = p1.body['nextCursor'] as string;
  const p2 = await api.call('GET', `/v1/occurrences?limit=2&cursor=${cursor}`, { token: api.operator });
  assert.deepEqual(page(p2.body), newest.slice(2, 4));
  const byLineage = await api.call('GET', '/v1/occurrences?lineage=agent-b', { token: api.operator });
  assert.deepEqual(page(byLineage.body), [ids[3], ids[1]]);
  assert.equal(byLineage.body['nextCursor'], null);
  const byKey = await api.call('GET', '/v1/occurrences?creationKey=inv-2&phase=reserved&outcome=unknown', {
    token: api.operator,
  });
  assert.deepEqual(page(byKey.body), [ids[2]]);
  const from = new Date(api.clock.wallMs() - 4000).toISOString();
  const to = new Date(api.clock.wallMs() - 2000).toISOString();
  const window = await api.call('GET', `/v1/occurrences?from=${from}&to=${to}&profile=sandbox-payments`, {
    token: api.operator,
  });
  assert.deepEqual(page(window.body), [ids[2], ids[1]]);
  // An executor's list is its own lineage's; naming another lineage is refused
  // (test/server/occurrences-lineage-filter.test.ts).
  const own = await api.call('GET', '/v1/occurrences', { token: a });
  assert.deepEqual(page(own.body), [ids[4], ids[2], ids[0]]);
  assertProblem(await api.call('GET', '/v1/occurrences'), 401, 'unauthenticated');
  assertProblem(
    await api.call('GET', '/v1/occurrences?limit=0', { token: api.operator }),
    400,
    'input_invalid',
  );
  assertProblem(
    await api.call('GET', '/v1/occurrences?limit=501', { token: api.operator }),
    400,
    'input_invalid',
  );
  assertProblem(
    await api.call('GET', '/v1/occurrences?phase=done', { token: api.operator }),
    400,
    'input_invalid',
  );
  assertProblem(
    await api.call('GET', '/v1/occurrences?from=yesterday', { token: api.operator }),
    400,
    'time_invalid',
  );
  assertProblem(
    await api.call('GET', '/v1/occurrences?cursor=AAAA', { token: api.operator }),
    400,
    'input_invalid',
  );
  assertProblem(
    await api.call('GET', '/v1/occurrences?sort=asc', { token: api.operator }),
    400,
    'input_invalid',
  );
  const doc = await api.call('GET', '/openapi.json');
  const get = ((doc.body['paths'] as JsonObject)['/v1/occurrences'] as JsonObject)['get'] as JsonObject;
  assert.equal(get['operationId'], 'listOccurrences');
  const names = (get['parameters'] as JsonObject[]).map((p) => p['name']).sort();
  assert.deepEqual(names, [
    'creationKey',
    'cursor',
    'from',
    'limit',
    'lineage',
    'outcome',
    'phase',
    'profile',
    'to',
  ]);
});

test('baton occurrences list and show: the timeline with RFC 3339 times, actors, generations, chain marks and handovers', async (t) => {
  const api = await startApi(t);
  const { a, ids } = await world(api);
  const id = ids[0] ?? '';
  const entered = await api.call('POST', `/v1/occurrences/${id}/enter`, { token: a });
  assert.equal(entered.status, 200, entered.text);
  await takeover(api, 'agent-a'); // generation 2 is handed the unresolved occurrence
  const env = { BATON_URL: api.url, BATON_TOKEN: api.operator };

  const list = await cli(['occurrences', 'list', '--lineage', 'agent-a', '--limit', '2'], env);
  assert.equal(list.code, 0, list.err);
  assert.equal(list.out.split('\n').filter((l) => l.includes(' agent-a ')).length, 2);
  assert.match(list.out, /^more: --cursor [A-Za-z0-9_-]+$/m);
  const json = await cli([
    'occurrences',
    'list',
    '--json',
    '--phase',
    'entered',
    '--url',
    api.url,
    '--token',
    api.operator,
  ]);
  assert.equal(json.code, 0, json.err);
  assert.deepEqual(
    (JSON.parse(json.out) as { occurrences: { id: string }[] }).occurrences.map((o) => o.id),
    [id],
  );

  const show = await cli(['occurrences', 'show', id], env);
  assert.equal(show.code, 0, show.err);
  assert.match(show.out, /occurrence chain: verified/);
  assert.match(show.out, /lineage chain at the handovers \(their links, the head\): verified/);
  const timeline = show.out.split('handovers')[0] ?? '';
  const events = timeline.split('\n').filter((l) => l.startsWith('  '));
  assert.ok(events.length >= 2, show.out);
  for (const line of events) {
    assert.match(
      line,
      /^ {2}\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z {2}ok {4} {2}#\d+ {2}\S+ {2}actor \S+ {2}generation \d+/,
    );
  }
  assert.match(timeline, /actor executor:agent-a#1 {2}generation 1/);
  const handovers = show.out.split('handovers (1):\n')[1] ?? '';
  assert.match(handovers, /generation_advanced {2}actor operator:\S+ {2}generation 2/);

  const detail = (await api.call('GET', `/v1/occurrences/${id}`, { token: api.operator })).body;
  const ho = detail['handovers'] as JsonObject[];
  assert.equal(ho.length, 1);
  assert.deepEqual(((ho[0]?.['body'] as JsonObject)['delivered'] as JsonObject)['unresolved'], [id]);
  // Another occurrence of the lineage that was not open at the takeover: no handover names it.
  const other = (await api.call('GET', `/v1/occurrences/${ids[2] ?? ''}`, { token: api.operator })).body;
  assert.equal((other['handovers'] as JsonObject[]).length, 1, 'reserved ones are delivered too');

  // Someone with database access rewrites one event: show marks exactly that one and exits 1.
  const seq = (detail['evidence'] as JsonObject[])[0]?.['seq'] as number;
  const raw = new Database(join(api.dir, 'baton.db'));
  raw.exec(DROP_EVIDENCE_GUARD.sqlite.join(';'));
  raw.prepare("UPDATE evidence_events SET actor = 'executor:agent-a#9' WHERE seq = ?").run(seq);
  raw.close();
  const broken = await cli(['occurrences', 'show', id, '--json'], env);
  assert.equal(broken.code, 1);
  const chains = (JSON.parse(broken.out) as { chains: { occurrence: { ok: boolean; verified: number[] } } })
    .chains;
  assert.equal(chains.occurrence.ok, false);
  assert.equal(chains.occurrence.verified.includes(seq), false);
  assert.equal(chains.occurrence.verified.length, (detail['evidence'] as JsonObject[]).length - 1);
  const text = await cli(['occurrences', 'show', id], env);
  assert.match(text.out, new RegExp(`BROKEN {2}#${seq} `));
  assert.match(text.out, /occurrence chain: BROKEN/);

  const noToken = await cli(['occurrences', 'list', '--url', api.url], { BATON_TOKEN: '' });
  assert.equal(noToken.code, 2);
  assert.match(noToken.err, /usage: a token is required/);
  // Not found is what the server holds, not bad input: exit 1, as `harness stop` of an unknown item.
  const missing = await cli(['occurrences', 'show', 'occ-none'], env);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /occurrence_not_found/);
});
