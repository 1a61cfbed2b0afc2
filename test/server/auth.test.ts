/**
 * The authorization matrix on EVERY /v1 route, over real HTTP: no token (401), an unknown or
 * revoked token (401), a role the route is not open to (403), an executor naming another
 * lineage's occurrence (404) or lineage (403), and a retired generation (409). Each refusal must
 * carry its code and leave every table of the database exactly as it was.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import {
  assertProblem,
  createBody,
  createOccurrence,
  domainConfig,
  paymentsProfile,
  setupOverHttp,
  startApi,
  takeover,
  type Api,
  str,
} from './helpers.js';

type Role = 'admin' | 'operator' | 'executor';

interface Target {
  readonly lineage: string;
  readonly occurrence: string;
  readonly digest: string;
}

interface RouteCase {
  readonly method: string;
  readonly template: string;
  readonly roles: readonly Role[];
  readonly scope: 'occurrence' | 'lineage' | 'none';
  path(t: Target): string;
  body?(t: Target): unknown;
}

const OP: readonly Role[] = ['operator', 'admin'];
const EX: readonly Role[] = ['executor'];
const ALL: readonly Role[] = ['operator', 'admin', 'executor'];

const observation = (): JsonObject => ({
  observedAt: 0,
  result: 'not_found',
  carried: { account: 'acct_sandbox_001' },
});

const HARNESS_BINDING = {
  mission_id: 'msn_x',
  mission_origin: 'https://as.example.com',
  stop_policy: 'baton-default@1',
};

const occ = (suffix: string) => (t: Target) => `/v1/occurrences/${t.occurrence}${suffix}`;
const fixed = (p: string) => () => p;

const ROUTES: readonly RouteCase[] = [
  {
    method: 'PUT',
    template: '/v1/domain',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/domain'),
    body: () => domainConfig(),
  },
  { method: 'GET', template: '/v1/domain', roles: OP, scope: 'none', path: fixed('/v1/domain') },
  {
    method: 'POST',
    template: '/v1/profiles',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/profiles'),
    body: () => paymentsProfile({ version: '2026-02-01' }),
  },
  { method: 'GET', template: '/v1/profiles', roles: OP, scope: 'none', path: fixed('/v1/profiles') },
  {
    method: 'GET',
    template: '/v1/profiles/{id}/{version}',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/profiles/sandbox-payments/2026-01-01'),
  },
  {
    method: 'POST',
    template: '/v1/authorities',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/authorities'),
    body: () => ({ id: 'more', unit: 'EUR-cents', total: 9 }),
  },
  { method: 'GET', template: '/v1/authorities', roles: OP, scope: 'none', path: fixed('/v1/authorities') },
  {
    method: 'GET',
    template: '/v1/authorities/{id}',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/authorities/payouts'),
  },
  {
    method: 'POST',
    template: '/v1/lineages/{lineage}/takeover',
    roles: OP,
    scope: 'lineage',
    path: (t) => `/v1/lineages/${t.lineage}/takeover`,
  },
  {
    method: 'GET',
    template: '/v1/lineages/{lineage}',
    roles: ALL,
    scope: 'lineage',
    path: (t) => `/v1/lineages/${t.lineage}`,
  },
  {
    method: 'GET',
    template: '/v1/lineages/{lineage}/open',
    roles: ALL,
    scope: 'lineage',
    path: (t) => `/v1/lineages/${t.lineage}/open`,
  },
  // The console's overview and lineages list (docs/console.md).
  { method: 'GET', template: '/v1/lineages', roles: OP, scope: 'none', path: fixed('/v1/lineages') },
  {
    method: 'GET',
    template: '/v1/health/reconciler',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/health/reconciler'),
  },
  {
    method: 'GET',
    template: '/v1/health/webhooks',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/health/webhooks'),
  },
  {
    method: 'GET',
    template: '/v1/refusals/histogram',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/refusals/histogram'),
  },
  {
    method: 'POST',
    template: '/v1/occurrences',
    roles: EX,
    scope: 'none',
    path: fixed('/v1/occurrences'),
    body: () => createBody('matrix-new'),
  },
  {
    method: 'POST',
    template: '/v1/occurrences/create-and-enter',
    roles: EX,
    scope: 'none',
    path: fixed('/v1/occurrences/create-and-enter'),
    body: () => createBody('matrix-new-entered'),
  },
  // An executor's list is its own lineage's (test/server/occurrences-list.test.ts).
  { method: 'GET', template: '/v1/occurrences', roles: ALL, scope: 'none', path: fixed('/v1/occurrences') },
  { method: 'GET', template: '/v1/occurrences/{id}', roles: ALL, scope: 'occurrence', path: occ('') },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/enter',
    roles: EX,
    scope: 'occurrence',
    path: occ('/enter'),
    body: () => ({}),
  },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/release',
    roles: EX,
    scope: 'occurrence',
    path: occ('/release'),
    body: (t) => ({ requestDigest: t.digest }),
  },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/reissue',
    roles: EX,
    scope: 'occurrence',
    path: occ('/reissue'),
    body: () => ({ creationKey: 'matrix-re' }),
  },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/remedies',
    roles: EX,
    scope: 'occurrence',
    path: occ('/remedies'),
    body: () => ({ ...createBody('matrix-fix'), kind: 'refund' }),
  },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/acknowledgements',
    roles: EX,
    scope: 'occurrence',
    path: occ('/acknowledgements'),
    body: observation,
  },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/acknowledge-and-settle',
    roles: EX,
    scope: 'occurrence',
    path: occ('/acknowledge-and-settle'),
    body: observation,
  },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/observations',
    roles: ALL,
    scope: 'occurrence',
    path: occ('/observations'),
    body: () => ({ ...observation(), source: 'by-key' }),
  },
  {
    method: 'POST',
    template: '/v1/occurrences/{id}/reconcile',
    roles: ALL,
    scope: 'occurrence',
    path: occ('/reconcile'),
    body: () => ({}),
  },
  { method: 'GET', template: '/v1/counts', roles: OP, scope: 'none', path: fixed('/v1/counts') },
  // Console sessions and events (test/server/console-session.test.ts has the cookie cases).
  { method: 'GET', template: '/v1/session', roles: OP, scope: 'none', path: fixed('/v1/session') },
  { method: 'DELETE', template: '/v1/session', roles: OP, scope: 'none', path: fixed('/v1/session') },
  { method: 'GET', template: '/v1/events', roles: OP, scope: 'none', path: fixed('/v1/events') },
  {
    method: 'GET',
    template: '/v1/evidence/recent',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/evidence/recent?type=generation_advanced'),
  },
  {
    method: 'GET',
    template: '/v1/evidence/histogram',
    roles: OP,
    scope: 'none',
    path: fixed(
      '/v1/evidence/histogram?type=provider_entered&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z',
    ),
  },
  {
    method: 'GET',
    template: '/v1/evidence',
    roles: OP,
    scope: 'none',
    path: (t) => `/v1/evidence?subject=lineage:${t.lineage}`,
  },
  {
    method: 'GET',
    template: '/v1/evidence/verify',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/evidence/verify'),
  },
  {
    method: 'POST',
    template: '/v1/tokens',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/tokens'),
    body: () => ({ role: 'operator' }),
  },
  { method: 'GET', template: '/v1/tokens', roles: ['admin'], scope: 'none', path: fixed('/v1/tokens') },
  // The harness (docs/harness.md): item routes check lineage ownership inside the handler.
  {
    method: 'POST',
    template: '/v1/harness/sessions',
    roles: ALL,
    scope: 'none',
    path: fixed('/v1/harness/sessions'),
    body: () => ({ mission_binding: HARNESS_BINDING }),
  },
  {
    method: 'POST',
    template: '/v1/harness/items',
    roles: ALL,
    scope: 'none',
    path: fixed('/v1/harness/items'),
    body: () => ({
      kind: 'queue_item',
      action_class: 'consequential_read',
      mission_binding: HARNESS_BINDING,
    }),
  },
  {
    method: 'GET',
    template: '/v1/harness/items/{id}',
    roles: ALL,
    scope: 'none',
    path: fixed('/v1/harness/items/wrk_x'),
  },
  {
    method: 'GET',
    template: '/v1/harness/items',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/harness/items'),
  },
  {
    method: 'POST',
    template: '/v1/harness/dispatch',
    roles: EX,
    scope: 'none',
    path: fixed('/v1/harness/dispatch'),
    body: () => ({ itemId: 'wrk_x' }),
  },
  ...(['resume', 'retry', 'complete'] as const).map((verb) => ({
    method: 'POST',
    template: `/v1/harness/items/{id}/${verb}`,
    roles: EX,
    scope: 'none' as const,
    path: fixed(`/v1/harness/items/wrk_x/${verb}`),
  })),
  {
    method: 'POST',
    template: '/v1/harness/items/{id}/stop',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/harness/items/wrk_x/stop'),
    body: () => ({ decision: 'suppress' }),
  },
  {
    method: 'POST',
    template: '/v1/harness/items/{id}/requeue',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/harness/items/wrk_x/requeue'),
  },
  {
    method: 'GET',
    template: '/v1/harness/evidence',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/harness/evidence?origin=https%3A%2F%2Fas.example.com&mission=msn_x'),
  },
  {
    method: 'GET',
    template: '/v1/harness/policy',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/harness/policy'),
  },
  {
    method: 'GET',
    template: '/v1/missions/{origin}/{missionId}',
    roles: ALL,
    scope: 'none',
    path: fixed('/v1/missions/https%3A%2F%2Fas.example.com/msn_x'),
  },
  // Sessions (HAR-29 taint) and the operator's rebind (A7#24): ownership is checked in the handler.
  {
    method: 'GET',
    template: '/v1/harness/sessions/{id}',
    roles: ALL,
    scope: 'none',
    path: fixed('/v1/harness/sessions/ses_x'),
  },
  {
    method: 'POST',
    template: '/v1/harness/sessions/{id}/taint',
    roles: ALL,
    scope: 'none',
    path: fixed('/v1/harness/sessions/ses_x/taint'),
    body: () => ({ source: 'web_page' }),
  },
  {
    method: 'POST',
    template: '/v1/harness/items/{id}/rebind',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/harness/items/wrk_x/rebind'),
    body: () => ({ mission_binding: HARNESS_BINDING }),
  },
  {
    method: 'DELETE',
    template: '/v1/tokens/{id}',
    roles: ['admin'],
    scope: 'none',
    path: fixed(`/v1/tokens/tok_${'0'.repeat(32)}`),
  },
  // The Mission consumer (docs/missions.md); the RFC 8935 push route authenticates its stream
  // bearer itself (signals-push-serve.test.ts) and is not in this matrix.
  {
    method: 'POST',
    template: '/v1/missions/issuers',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/missions/issuers'),
    body: () => ({ pin: {} }),
  },
  {
    method: 'GET',
    template: '/v1/missions/issuers',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/missions/issuers'),
  },
  {
    method: 'GET',
    template: '/v1/missions/issuers/{issuer}',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/missions/issuers/https%3A%2F%2Fas.example.com'),
  },
  {
    method: 'DELETE',
    template: '/v1/missions/issuers/{issuer}',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/missions/issuers/https%3A%2F%2Fas.example.com'),
  },
  {
    method: 'PUT',
    template: '/v1/missions/issuers/{issuer}/bearer',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/missions/issuers/https%3A%2F%2Fas.example.com/bearer'),
    body: () => ({ pushBearer: 'a-push-bearer-of-at-least-32-characters' }),
  },
  {
    method: 'POST',
    template: '/v1/missions/{origin}/{missionId}/check',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/missions/https%3A%2F%2Fas.example.com/msn_x/check'),
  },
  // Continuity observation records (docs/observations.md).
  {
    method: 'POST',
    template: '/v1/continuity/records',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/continuity/records'),
    body: () => ({ version: '1' }),
  },
  {
    method: 'GET',
    template: '/v1/continuity/records',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/continuity/records?producer=urn:x&id=y'),
  },
  {
    method: 'GET',
    template: '/v1/continuity/metrics/fic',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/continuity/metrics/fic'),
  },
  {
    method: 'GET',
    template: '/v1/continuity/metrics/cif',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/continuity/metrics/cif'),
  },
  {
    method: 'GET',
    template: '/v1/continuity/coverage',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/continuity/coverage'),
  },
  {
    method: 'POST',
    template: '/v1/continuity/profiles',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/continuity/profiles'),
    body: () => ({}),
  },
  {
    method: 'PUT',
    template: '/v1/continuity/producers',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/continuity/producers'),
    body: () => ({ producer: 'urn:x', keys: [{ kty: 'OKP' }] }),
  },
  {
    method: 'GET',
    template: '/v1/continuity/producers',
    roles: OP,
    scope: 'none',
    path: fixed('/v1/continuity/producers'),
  },
  {
    method: 'DELETE',
    template: '/v1/continuity/producers',
    roles: ['admin'],
    scope: 'none',
    path: fixed('/v1/continuity/producers?producer=urn%3Ax'),
  },
];

interface Fixture {
  readonly api: Api;
  readonly tokens: Readonly<Record<Role, string>>;
  readonly own: Target;
  readonly other: Target;
  readonly retired: { readonly credential: string; readonly target: Target };
  readonly revoked: string;
}

async function lineageWithOccurrence(
  api: Api,
  lineage: string,
): Promise<{ credential: string; target: Target }> {
  const credential = await takeover(api, lineage);
  const o = await createOccurrence(api, credential, `${lineage}-1`);
  const digest = (o['provider'] as JsonObject)['requestDigest'] as string;
  return { credential, target: { lineage, occurrence: o['id'] as string, digest } };
}

async function fixture(t: Parameters<typeof startApi>[0]): Promise<Fixture> {
  const api = await startApi(t);
  await setupOverHttp(api);
  const own = await lineageWithOccurrence(api, 'lineage-a');
  const other = await lineageWithOccurrence(api, 'lineage-b');
  const retired = await lineageWithOccurrence(api, 'lineage-r');
  await takeover(api, 'lineage-r');
  const made = await api.call('POST', '/v1/tokens', {
    token: api.admin,
    body: { role: 'admin', name: 'soon revoked' },
  });
  await api.call('DELETE', `/v1/tokens/${str(made.body)}`, { token: api.admin });
  return {
    api,
    tokens: { admin: api.admin, operator: api.operator, executor: own.credential },
    own: own.target,
    other: other.target,
    retired,
    revoked: made.body['token'] as string,
  };
}

/** Call, assert the problem, and assert that no table changed. */
async function refused(
  f: Fixture,
  r: RouteCase,
  target: Target,
  token: string | undefined,
  status: number,
  code: string,
) {
  const before = await f.api.snapshot();
  const answer = await f.api.call(r.method, r.path(target), { token, body: r.body?.(target) });
  assertProblem(answer, status, code);
  if (status === 401) assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
  assert.equal(
    await f.api.snapshot(),
    before,
    `${r.method} ${r.template} changed state while refusing ${code}`,
  );
}

test('the matrix covers every /v1 route the OpenAPI document lists, with the same roles', async (t) => {
  const api = await startApi(t);
  const doc = (await api.call('GET', '/openapi.json')).body;
  const listed: string[] = [];
  for (const [path, ops] of Object.entries(doc['paths'] as Record<string, JsonObject>)) {
    if (!path.startsWith('/v1/')) continue;
    for (const [method, op] of Object.entries(ops)) {
      // Public /v1 routes (console sign-in takes its token in the body) and the RFC 8935 push receiver
      // (it checks its SSF stream bearer itself) are not in the role matrix.
      const roles = (op as JsonObject)['x-baton-roles'] as string[];
      if (roles.length === 0 || roles.includes('ssf-transmitter')) continue;
      // Signature-authenticated, not bearer (POST /v1/webhooks/{profileId}: test/server/webhooks.test.ts).
      if (((op as JsonObject)['security'] as unknown[]).length === 0) continue;
      listed.push(
        `${method.toUpperCase()} ${path} ${[...((op as JsonObject)['x-baton-roles'] as string[])].sort().join(',')}`,
      );
    }
  }
  const covered = ROUTES.map((r) => `${r.method} ${r.template} ${[...r.roles].sort().join(',')}`);
  assert.deepEqual([...covered].sort(), listed.sort());
  t.diagnostic(`checked ${covered.length} routes`);
});

test('no token, an unknown token and a revoked token: 401 unauthenticated, no state change', async (t) => {
  const f = await fixture(t);
  let n = 0;
  for (const r of ROUTES) {
    for (const token of [
      undefined,
      'btk.tok_' + 'f'.repeat(32) + '.' + 'A'.repeat(43),
      'x'.repeat(43),
      f.revoked,
    ]) {
      await refused(f, r, f.own, token, 401, 'unauthenticated');
      n += 1;
    }
  }
  t.diagnostic(`checked ${n} cases`);
});

test('a role the route is not open to: 403 forbidden, no state change', async (t) => {
  const f = await fixture(t);
  let n = 0;
  for (const r of ROUTES) {
    const wrong = (['admin', 'operator', 'executor'] as const).filter(
      (role) => !r.roles.includes(role) && !(role === 'admin' && r.roles.includes('operator')),
    );
    for (const role of wrong) {
      await refused(f, r, f.own, f.tokens[role], 403, 'forbidden');
      n += 1;
    }
  }
  assert.ok(n >= ROUTES.length, 'every route refuses at least one role');
  t.diagnostic(`checked ${n} cases`);
});

test('an executor naming another lineage: 404 for its occurrences, 403 for the lineage, no state change', async (t) => {
  const f = await fixture(t);
  let n = 0;
  for (const r of ROUTES.filter((x) => x.roles.includes('executor') && x.scope !== 'none')) {
    if (r.scope === 'occurrence')
      await refused(f, r, f.other, f.tokens.executor, 404, 'occurrence_not_found');
    else await refused(f, r, f.other, f.tokens.executor, 403, 'forbidden');
    n += 1;
  }
  assert.equal(n, 11, 'nine occurrence routes and two lineage routes are open to executors');
  t.diagnostic(`checked ${n} cases`);
});

test('a retired generation: 409 generation_retired on every route, no state change', async (t) => {
  const f = await fixture(t);
  for (const r of ROUTES)
    await refused(f, r, f.retired.target, f.retired.credential, 409, 'generation_retired');
  t.diagnostic(`checked ${ROUTES.length} cases`);
});
