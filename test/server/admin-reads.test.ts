/**
 * GET /v1/profiles and GET /v1/authorities (operator): every registered profile version and every
 * authority budget, ordered, capped by `limit` with `truncated` saying so; the same answers on
 * SQLite and on PostgreSQL; the unauthenticated get nothing; the OpenAPI document
 * lists both routes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { AdminClient } from '../../src/client/index.js';
import type { DomainConfigInput } from '../../src/occurrences/index.js';
import type { StoreChoice } from '../../src/server/open.js';
import { postgresForTests } from '../support/postgres.js';
import { assertProblem, domainConfig, paymentsProfile, request, serveWithAdmin } from './helpers.js';

const pg = await postgresForTests();

async function serverOn(
  t: TestContext,
  choice: StoreChoice,
): Promise<{ url: string; admin: AdminClient; token: string }> {
  const { url, admin: token } = await serveWithAdmin(t, choice);
  return { url, token, admin: new AdminClient({ baseUrl: url, token }) };
}

function dir(t: TestContext): string {
  const d = mkdtempSync(join(tmpdir(), 'baton-reads-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function listsCases(t: TestContext, choice: StoreChoice): Promise<void> {
  const { url, admin, token } = await serverOn(t, choice);
  assert.deepEqual(await admin.listProfiles(), { profiles: [], truncated: false });
  assert.deepEqual(await admin.listAuthorities(), { authorities: [], truncated: false, nextCursor: null });
  await admin.configureDomain(domainConfig() as unknown as DomainConfigInput);
  const base = paymentsProfile();
  for (const version of ['v2', 'v1', 'v3']) await admin.registerProfile({ ...base, version });
  for (const id of ['c-budget', 'a-budget', 'b-budget'])
    await admin.createAuthority({ id, unit: 'EUR-cents', total: 10 });

  const all = await admin.listProfiles();
  assert.deepEqual(
    all.profiles.map((p) => p.version),
    ['v1', 'v2', 'v3'],
  );
  assert.equal(all.truncated, false);
  const v1 = all.profiles[0];
  assert.equal(v1?.digest, (await admin.getProfile(v1?.id ?? '', 'v1')).digest);
  assert.equal(v1?.account, base['account']);
  const two = await admin.listProfiles({ limit: 2 });
  assert.deepEqual([two.profiles.length, two.truncated], [2, true]);

  const budgets = await admin.listAuthorities();
  assert.deepEqual(
    budgets.authorities.map((a) => [a.id, a.total, a.reserved, a.consumed]),
    [
      ['a-budget', 10, 0, 0],
      ['b-budget', 10, 0, 0],
      ['c-budget', 10, 0, 0],
    ],
  );
  const one = await admin.listAuthorities({ limit: 1 });
  assert.deepEqual([one.authorities.map((a) => a.id), one.truncated], [['a-budget'], true]);
  const exact = await admin.listAuthorities({ limit: 3 });
  assert.equal(exact.truncated, false, 'exactly limit items is not truncated');
  assert.equal(exact.nextCursor, null, 'the whole list: no next page');

  // Cursor pages: every budget once, in id order, and the last page says it is the last.
  const paged: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 5; i++) {
    const page = await admin.listAuthorities({ limit: 2, ...(cursor === undefined ? {} : { cursor }) });
    paged.push(...page.authorities.map((a) => a.id));
    assert.equal(page.truncated, page.nextCursor !== null, 'truncated is "another page exists"');
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  assert.deepEqual(paged, ['a-budget', 'b-budget', 'c-budget']);
  // A cursor Baton did not issue is refused, never read as "start over" or as the last page.
  assert.ok(one.nextCursor !== null);
  const c = one.nextCursor;
  const forged = `${c.slice(0, 5)}${c[5] === 'A' ? 'B' : 'A'}${c.slice(6)}`;
  const refused = await request(url, 'GET', `/v1/authorities?cursor=${forged}`, { token });
  assertProblem(refused, 400, 'input_invalid');
  // Another list's cursor (the lineages list) is no position in this one.
  for (const lineage of ['l-a', 'l-b'])
    await request(url, 'POST', `/v1/lineages/${lineage}/takeover`, { token });
  const lineages = await request(url, 'GET', '/v1/lineages?limit=1', { token });
  const other = (lineages.body as { nextCursor: string | null }).nextCursor;
  assert.ok(other !== null, lineages.text);
  assertProblem(
    await request(url, 'GET', `/v1/authorities?cursor=${other}`, { token }),
    400,
    'input_invalid',
  );

  // Limits outside 1..1000 are refused, not clamped.
  for (const bad of ['0', '1001', 'x', '-1']) {
    const r = await request(url, 'GET', `/v1/authorities?limit=${bad}`, { token });
    assert.equal(r.status, 400, `limit=${bad}`);
  }
}

test('profiles and authorities lists on SQLite: ordered, limited, truncated said out loud', async (t) => {
  await listsCases(t, { kind: 'sqlite', path: join(dir(t), 'baton.db') });
});

if (pg !== undefined) {
  test('profiles and authorities lists on PostgreSQL: the same answers', async (t) => {
    const url = await pg.schema();
    await listsCases(t, { kind: 'postgres', url, domainKeyFile: join(dir(t), 'k.domain-key.pem') });
  });
}

test('the lists need an operator token, and the OpenAPI document lists them', async (t) => {
  const { url } = await serverOn(t, { kind: 'sqlite', path: join(dir(t), 'baton.db') });
  for (const path of ['/v1/profiles', '/v1/authorities']) {
    assertProblem(await request(url, 'GET', path), 401, 'unauthenticated');
    assertProblem(await request(url, 'GET', path, { token: 'btk.tok_0.x' }), 401, 'unauthenticated');
  }
  const doc = (await request(url, 'GET', '/openapi.json')).body as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  assert.equal(doc.paths['/v1/profiles']?.['get']?.operationId, 'listProfiles');
  assert.equal(doc.paths['/v1/authorities']?.['get']?.operationId, 'listAuthorities');
});
