/**
 * Refusals name what they refuse, over real HTTP on both engines (SQLite always, PostgreSQL when
 * test/support/postgres.ts finds a server): an unregistered profile version is named in
 * `profile_not_found`'s message and details (ids are no secrets), and a domain whose limits
 * contradict each other is refused `400 input_invalid` naming the member, nothing changed, while a
 * limit lowered below the current count is accepted and leaves the held occurrences as they are.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import type { StoreChoice } from '../../src/server/open.js';
import { postgresForTests } from '../support/postgres.js';
import {
  assertProblem,
  createBody,
  domainConfig,
  paymentsProfile,
  request,
  serveWithAdmin,
  type Answer,
  type CallOptions,
} from './helpers.js';

const pg = await postgresForTests();

interface Served {
  call(method: string, path: string, opts?: CallOptions): Promise<Answer>;
  readonly admin: string;
}

async function serverOn(t: TestContext, choice: StoreChoice): Promise<Served> {
  const { url, admin } = await serveWithAdmin(t, choice);
  return { admin, call: (method, path, opts = {}) => request(url, method, path, opts) };
}

function dir(t: TestContext): string {
  const d = mkdtempSync(join(tmpdir(), 'baton-names-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

function assertNamesProfile(a: Answer, version: string): void {
  assertProblem(a, 404, 'profile_not_found');
  assert.match(a.body['detail'] as string, new RegExp(`sandbox-payments@${version.replaceAll('.', '\\.')}`));
  assert.deepEqual(a.body['details'], { profileId: 'sandbox-payments', profileVersion: version });
}

/** Domain, profile, budget and one lineage over HTTP; the lineage's credential. */
async function prepared(s: Served): Promise<string> {
  assert.equal((await s.call('PUT', '/v1/domain', { token: s.admin, body: domainConfig() })).status, 200);
  const profile = await s.call('POST', '/v1/profiles', { token: s.admin, body: paymentsProfile() });
  assert.equal(profile.status, 200, profile.text);
  const budget = { id: 'payouts', unit: 'EUR-cents', total: 100_000 };
  assert.equal((await s.call('POST', '/v1/authorities', { token: s.admin, body: budget })).status, 200);
  const takeover = await s.call('POST', '/v1/lineages/names-agent/takeover', { token: s.admin });
  assert.equal(takeover.status, 201, takeover.text);
  return takeover.body['credential'] as string;
}

async function profileNamed(s: Served): Promise<void> {
  const credential = await prepared(s);
  assertNamesProfile(
    await s.call('GET', '/v1/profiles/sandbox-payments/2030-09-09', { token: s.admin }),
    '2030-09-09',
  );
  const body = createBody('names-1') as { provider: JsonObject };
  const unregistered = { ...body, provider: { ...body.provider, profileVersion: '2030-01-01.ab12cd34' } };
  const r = await s.call('POST', '/v1/occurrences', { token: credential, body: unregistered });
  assertNamesProfile(r, '2030-01-01.ab12cd34');
}

/** Each pair: the limits that contradict, and the member the refusal names. */
const CONTRADICTIONS: readonly [Record<string, number>, string][] = [
  [{ maxPendingPerLineage: 101, maxPendingPerDomain: 100 }, '$.limits.maxPendingPerLineage'],
  [{ maxInFlightPerLineage: 7, maxInFlightPerDomain: 6 }, '$.limits.maxInFlightPerLineage'],
];

async function limitsContradict(s: Served): Promise<void> {
  const credential = await prepared(s);
  const ids: string[] = [];
  for (const key of ['held-1', 'held-2']) {
    const c = await s.call('POST', '/v1/occurrences', { token: credential, body: createBody(key) });
    assert.equal(c.status, 201, c.text);
    ids.push((c.body['occurrence'] as JsonObject)['id'] as string);
  }
  const domainBefore = (await s.call('GET', '/v1/domain', { token: s.admin })).text;
  for (const [limits, path] of CONTRADICTIONS) {
    const r = await s.call('PUT', '/v1/domain', { token: s.admin, body: domainConfig(limits) });
    assertProblem(r, 400, 'input_invalid');
    assert.equal((r.body['details'] as JsonObject | undefined)?.['path'], path, r.text);
    assert.match(r.body['detail'] as string, new RegExp(path.replaceAll('.', '\\.').replaceAll('$', '\\$')));
    const after = (await s.call('GET', '/v1/domain', { token: s.admin })).text;
    assert.equal(after, domainBefore, 'nothing changed');
  }
  // AOC-CASE-012: a limit lowered below the current count (2 pending) is accepted — it is how an
  // operator stops new work — and leaves the held occurrences as they are; new work is refused.
  const held = await Promise.all(
    ids.map(async (id) => (await s.call('GET', `/v1/occurrences/${id}`, { token: s.admin })).text),
  );
  const lowered = {
    maxPendingPerLineage: 1,
    maxPendingPerDomain: 1,
    maxInFlightPerLineage: 1,
    maxInFlightPerDomain: 1,
  };
  const ok = await s.call('PUT', '/v1/domain', { token: s.admin, body: domainConfig(lowered) });
  assert.equal(ok.status, 200, ok.text);
  for (const [i, id] of ids.entries()) {
    const now = await s.call('GET', `/v1/occurrences/${id}`, { token: s.admin });
    assert.equal(now.text, held[i], `occurrence ${id} is as it was`);
  }
  const refused = await s.call('POST', '/v1/occurrences', { token: credential, body: createBody('held-3') });
  assertProblem(refused, 429, 'limit_pending_exceeded');
}

for (const [name, cases] of [
  ['an unregistered profile version is named', profileNamed],
  ['contradictory limits are refused, naming the member, nothing changed', limitsContradict],
] as const) {
  test(`[sqlite] ${name}`, async (t) => {
    await cases(await serverOn(t, { kind: 'sqlite', path: join(dir(t), 'baton.db') }));
  });
  if (pg !== undefined) {
    test(`[postgres] ${name}`, async (t) => {
      const url = await pg.schema();
      await cases(
        await serverOn(t, { kind: 'postgres', url, domainKeyFile: join(dir(t), 'k.domain-key.pem') }),
      );
    });
  }
}
