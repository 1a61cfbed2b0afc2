/**
 * The whole occurrence lifecycle over real HTTP, each answer compared with what the service itself
 * returns for the same record (so a response schema that dropped or mangled a member fails here).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/core/json.js';
import { ACCOUNT, ENVIRONMENT } from '../occurrences/helpers.js';
import {
  assertProblem,
  createBody,
  createOccurrence,
  paymentsProfile,
  setupOverHttp,
  startApi,
  takeover,
  type Api,
  str,
} from './helpers.js';

const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

async function sameAsService(api: Api, id: string): Promise<void> {
  const http = await api.call('GET', `/v1/occurrences/${id}`, { token: api.operator });
  assert.equal(http.status, 200, http.text);
  // The HTTP detail adds the chain walk's verdicts (`chains`); the rest is the service's own.
  const { chains, ...detail } = http.body;
  assert.deepEqual(detail, json(await api.service.getOccurrence(id)));
  assert.equal(((chains as JsonObject)['occurrence'] as JsonObject)['ok'], true);
}

function ack(ticket: JsonObject, at: number, overrides: JsonObject = {}): JsonObject {
  return {
    observedAt: new Date(at).toISOString(),
    result: 'found',
    nativeStatus: 'succeeded',
    response: { id: 'pay_abcdef12', status: 'succeeded' },
    carried: {
      account: ACCOUNT,
      environment: ENVIRONMENT,
      nativeKey: ticket['nativeKey'] as string,
      requestDigest: ticket['requestDigest'] as string,
    },
    complete: true,
    ...overrides,
  };
}

test('setup over HTTP returns exactly the service records', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const domain = await api.call('GET', '/v1/domain', { token: api.operator });
  assert.deepEqual(domain.body, json(await api.service.getDomain()));
  assert.equal((domain.body['bypassPaths'] as unknown[]).length, 6, 'the bypass-path disclosure is shown');
  const profile = await api.call('GET', '/v1/profiles/sandbox-payments/2026-01-01', { token: api.operator });
  assert.deepEqual(profile.body, json(await api.service.getProfile('sandbox-payments', '2026-01-01')));
  const budget = await api.call('GET', '/v1/authorities/payouts', { token: api.operator });
  assert.deepEqual(budget.body, json(await api.service.getAuthority('payouts')));
  // Idempotent for identical terms; other terms are a conflict.
  const again = await api.call('POST', '/v1/profiles', { token: api.operator, body: paymentsProfile() });
  assert.equal(again.status, 200);
  const other = await api.call('POST', '/v1/authorities', {
    token: api.operator,
    body: { id: 'payouts', unit: 'EUR-cents', total: 5 },
  });
  assertProblem(other, 409, 'authority_conflict');
  const evidence = await api.call('GET', '/v1/evidence?subject=authority:payouts', { token: api.operator });
  assert.equal(
    (evidence.body['events'] as JsonObject[])[0]?.['actor'],
    'operator:' + api.operator.split('.')[1],
  );
});

test('takeover → create → enter → acknowledgement → remedy, and release → reissue', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const cred = await takeover(api, 'invoice-agent');

  const created = await api.call('POST', '/v1/occurrences', { token: cred, body: createBody('inv-1') });
  assert.equal(created.status, 201);
  assert.equal(created.body['created'], true);
  const occ = created.body['occurrence'] as JsonObject;
  const id = occ['id'] as string;
  const replay = await api.call('POST', '/v1/occurrences', { token: cred, body: createBody('inv-1') });
  assert.equal(replay.status, 200, 'the creation binding returns the original');
  assert.equal((replay.body['occurrence'] as JsonObject)['id'], id);
  const clash = await api.call('POST', '/v1/occurrences', { token: cred, body: createBody('inv-1', 7) });
  assertProblem(clash, 409, 'creation_binding_conflict');

  const entered = await api.call('POST', `/v1/occurrences/${id}/enter`, { token: cred });
  assert.equal(entered.status, 200, entered.text);
  const ticket = entered.body;
  assert.deepEqual(ticket['request'], createBody('inv-1')['request']);
  assert.equal(ticket['nativeKeyHeader'], 'Idempotency-Key');
  assert.equal((ticket['occurrence'] as JsonObject)['phase'], 'entered');
  const twice = await api.call('POST', `/v1/occurrences/${id}/enter`, { token: cred, body: {} });
  assertProblem(twice, 409, 'already_entered');

  // The executor's report is evidence only: it never moves outcome/effect (AOC-REQ-009).
  const reported = await api.call('POST', `/v1/occurrences/${id}/acknowledgements`, {
    token: cred,
    body: ack(ticket, api.clock.wallMs()),
  });
  assert.equal(reported.status, 200, reported.text);
  assert.equal(reported.body['effective'], false);
  assert.equal(reported.body['missingKnowledge'], 'unauthenticated');
  assert.equal(reported.body['changed'], false);
  assert.equal((reported.body['occurrence'] as JsonObject)['outcome'], 'unknown');
  const claimed = await api.call('POST', `/v1/occurrences/${id}/acknowledgements`, {
    token: cred,
    body: ack(ticket, api.clock.wallMs(), {
      authentication: { verified: true, pin: 'sandbox-response-2026' },
    }),
  });
  assertProblem(claimed, 403, 'forbidden');
  const observed = await api.call('POST', `/v1/occurrences/${id}/observations`, {
    token: api.operator,
    body: { ...ack(ticket, api.clock.wallMs()), source: 'by-key' },
  });
  assert.equal(observed.body['missingKnowledge'], 'unauthenticated');
  // Each report is recorded under who made it, never as a status source's answer.
  const actors = (await api.service.getOccurrence(id)).evidence
    .filter((e) => e.type === 'observation_recorded')
    .map((e) => e.actor);
  assert.equal(actors.length, 2);
  assert.equal(actors[0], 'executor:invoice-agent#1');
  assert.match(actors[1] ?? '', /^operator:/);
  await sameAsService(api, id);

  const open = await api.call('GET', '/v1/lineages/invoice-agent/open', { token: cred });
  assert.deepEqual(
    open.body,
    json({ lineage: 'invoice-agent', ...(await api.service.listOpen('invoice-agent')) }),
  );
  assert.deepEqual(
    (open.body['unresolved'] as JsonObject[]).map((o) => o['id']),
    [id],
  );

  const remedy = await api.call('POST', `/v1/occurrences/${id}/remedies`, {
    token: cred,
    body: { ...createBody('inv-1-refund', 500), kind: 'refund' },
  });
  assert.equal(remedy.status, 201, remedy.text);
  assert.equal((remedy.body['occurrence'] as JsonObject)['remedyOf'], id);

  const second = await createOccurrence(api, cred, 'inv-2');
  const digest = (second['provider'] as JsonObject)['requestDigest'];
  const released = await api.call('POST', `/v1/occurrences/${str(second)}/release`, {
    token: cred,
    body: { requestDigest: digest },
  });
  assert.equal(released.status, 200, released.text);
  assert.equal((released.body['occurrence'] as JsonObject)['phase'], 'released');
  const reissued = await api.call('POST', `/v1/occurrences/${str(second)}/reissue`, {
    token: cred,
    body: { creationKey: 'inv-2-again' },
  });
  assert.equal(reissued.status, 201, reissued.text);
  assert.equal((reissued.body['occurrence'] as JsonObject)['reissueOf'], second['id']);
  await sameAsService(api, str(second));

  const counts = await api.call('GET', '/v1/counts', { token: api.operator });
  assert.deepEqual(counts.body, json(await api.service.counts()));
  assert.equal(counts.body['total'], 4);
  const budget = await api.call('GET', '/v1/authorities/payouts', { token: api.operator });
  assert.equal(budget.body['consumed'], 1_000);
  assert.equal(budget.body['reserved'], 1_500, 'the refund and the reissue hold their reservations');

  const verify = await api.call('GET', '/v1/evidence/verify', { token: api.operator });
  assert.equal(verify.body['ok'], true, verify.text);
  const chain = await api.call('GET', `/v1/evidence?subject=occurrence:${id}`, { token: api.operator });
  assert.deepEqual(chain.body['events'], json((await api.service.getOccurrence(id)).evidence));
  t.diagnostic(`checked ${(chain.body['events'] as unknown[]).length} evidence events of one occurrence`);
});

test('a takeover hands the successor the open work and retires the predecessor at once', async (t) => {
  const api = await startApi(t);
  await setupOverHttp(api);
  const first = await takeover(api, 'payroll');
  const a = await createOccurrence(api, first, 'p-1');
  const b = await createOccurrence(api, first, 'p-2');
  await api.call('POST', `/v1/occurrences/${str(b)}/enter`, { token: first });

  const next = await api.call('POST', '/v1/lineages/payroll/takeover', { token: api.operator });
  assert.equal(next.status, 201);
  assert.equal(next.body['generation'], 2);
  assert.equal(next.body['retiredGeneration'], 1);
  assert.deepEqual(
    (next.body['reserved'] as JsonObject[]).map((o) => o['id']),
    [a['id']],
  );
  assert.deepEqual(
    (next.body['unresolved'] as JsonObject[]).map((o) => o['id']),
    [b['id']],
  );

  const before = await api.snapshot();
  assertProblem(
    await api.call('POST', '/v1/occurrences', { token: first, body: createBody('p-3') }),
    409,
    'generation_retired',
  );
  assert.equal(await api.snapshot(), before);
  const successor = next.body['credential'] as string;
  const lineage = await api.call('GET', '/v1/lineages/payroll', { token: successor });
  const { nextAfter, ...view } = await api.service.getLineage('payroll');
  assert.equal(nextAfter, null, 'two takeovers: one page');
  assert.deepEqual(lineage.body, json({ ...view, evidenceNextCursor: null }));
  assert.deepEqual(lineage.body['retiredGenerations'], [1]);
  // The successor may not enter the predecessor's reservation: it releases and reissues instead.
  assertProblem(
    await api.call('POST', `/v1/occurrences/${str(a)}/enter`, { token: successor }),
    409,
    'generation_mismatch',
  );
});
