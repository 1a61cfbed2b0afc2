/**
 * docs/api.md's route table is the OpenAPI document's list of operations, no more and no less:
 * every `| METHOD | \`/path\` |` row (its query string aside) is an operation of `GET /openapi.json`
 * of a real server, and every operation there has its row — the harness, Missions and continuity
 * families included (their pages, docs/harness.md, docs/missions.md, docs/observations.md, say
 * the rest).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { repoRoot } from '../support/paths.js';
import { startApi } from './helpers.js';

const ROW = /^\| (GET|POST|PUT|DELETE) \| `([^`]+)` \|/;

function documented(): string[] {
  const text = readFileSync(join(repoRoot, 'docs', 'api.md'), 'utf8');
  const routes = text.slice(text.indexOf('\n## Routes\n'));
  const table = routes.slice(0, routes.indexOf('\n\n', routes.indexOf('| method | path |')));
  const rows: string[] = [];
  for (const line of table.split('\n')) {
    const m = ROW.exec(line);
    if (m !== null) rows.push(`${m[1]} ${m[2]!.split('?')[0]}`);
  }
  return rows;
}

test('docs/api.md lists every operation of /openapi.json, by its exact path, and nothing else', async (t) => {
  const api = await startApi(t, { continuity: true });
  const doc = await api.call('GET', '/openapi.json');
  assert.equal(doc.status, 200, doc.text);
  const operations: string[] = [];
  for (const [path, ops] of Object.entries(doc.body['paths'] as JsonObject)) {
    for (const method of Object.keys(ops as JsonObject)) operations.push(`${method.toUpperCase()} ${path}`);
  }
  const rows = documented();
  assert.equal(new Set(rows).size, rows.length, 'no route is listed twice');
  const missing = operations.filter((o) => !rows.includes(o)).sort();
  const unknown = rows.filter((r) => !operations.includes(r)).sort();
  assert.deepEqual({ missing, unknown }, { missing: [], unknown: [] });
  for (const family of ['/v1/harness/', '/v1/missions/', '/v1/continuity/']) {
    assert.ok(
      rows.some((r) => r.includes(family)),
      `${family}* is in the table`,
    );
  }
});

test('the harness item commands say what they check: complete runs no Mission check, in /openapi.json and docs/api.md alike', async (t) => {
  const api = await startApi(t, { continuity: true });
  const doc = await api.call('GET', '/openapi.json');
  assert.equal(doc.status, 200, doc.text);
  const summary = (verb: string): string => {
    const paths = doc.body['paths'] as Record<string, Record<string, { summary?: string }>>;
    return paths[`/v1/harness/items/{id}/${verb}`]?.['post']?.summary ?? '';
  };
  assert.match(summary('resume'), /A3\.1 check first/);
  assert.match(summary('complete'), /no Mission check/);
  assert.doesNotMatch(summary('complete'), /check first/);
  const text = readFileSync(join(repoRoot, 'docs', 'api.md'), 'utf8');
  const row = text.split('\n').find((l) => l.startsWith('| POST | `/v1/harness/items/{id}/complete`'));
  assert.ok(row !== undefined);
  assert.match(row, /no Mission check/);
  assert.doesNotMatch(row, /the same check/);
});
