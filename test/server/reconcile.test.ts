/**
 * Authenticated knowledge over HTTP: an executor's own report stays unauthenticated evidence, but
 * `POST /v1/occurrences/{id}/reconcile` makes the SERVER ask the pinned status source of the real
 * sandbox provider (src/providers' trusted layer), verify the answer against the profile's pin and
 * resolve the occurrence — without ever sending the payment again.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import type { EntryTicket } from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  NO_KEYS,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  type KeyResolver,
} from '../../src/providers/index.js';
import { assertProblem, setupOverHttp, startApi, str, takeover } from './helpers.js';

const HMAC = Buffer.alloc(32, 5);

async function world(t: TestContext, serverKeys: (secretId: string) => KeyResolver) {
  const clock = new ManualClock(Date.UTC(2026, 2, 1));
  const sandbox = createSandboxProvider({ hmacSecret: HMAC, clock, adminToken: 'sandbox-admin-token' });
  const url = await sandbox.listen(0);
  t.after(() => sandbox.close());
  const deployment = sandboxDeployment(sandbox);
  const secretId = deployment.hmacSecretId ?? '';
  const api = await startApi(t, { clock, keys: serverKeys(secretId) });
  await setupOverHttp(api);
  const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
  const registered = await api.call('POST', '/v1/profiles', { token: api.operator, body: profile });
  assert.equal(registered.status, 200, registered.text);
  const cred = await takeover(api, 'invoice-agent');
  const created = await api.call('POST', '/v1/occurrences', {
    token: cred,
    body: {
      creationKey: 'inv-77',
      provider: { profileId: profile.id, profileVersion: profile.version },
      request: { amount: 1250, currency: 'eur', payee: 'acme-supplies', invoice: 'inv-77' },
      authority: { id: 'payouts', amount: 1250 },
    },
  });
  assert.equal(created.status, 201, created.text);
  const id = str(created.body['occurrence'] as JsonObject);
  const entered = await api.call('POST', `/v1/occurrences/${id}/enter`, { token: cred });
  assert.equal(entered.status, 200, entered.text);
  const ticket = entered.body as unknown as EntryTicket;
  // The executor sends once and the answer is lost on the way back.
  sandbox.addFault({ key: ticket.nativeKey ?? '' }, 'drop_response_after_apply');
  const adapter = new HttpProviderAdapter(profile, { entryUrl: sandboxEntryUrl(url), keys: NO_KEYS, clock });
  const sent = await adapter.send(ticket);
  assert.equal(sent.acknowledged, false);
  const reported = await api.call('POST', `/v1/occurrences/${id}/acknowledgements`, {
    token: cred,
    body: sent.acknowledgement as unknown as JsonObject,
  });
  assert.equal(reported.status, 200, reported.text);
  assert.equal(reported.body['effective'], false);
  return { api, sandbox, cred, id, key: ticket.nativeKey ?? '' };
}

test('reconcile: the server asks the pinned source, verifies it and resolves the occurrence', async (t) => {
  const w = await world(t, (id) => staticKeys({ [id]: HMAC }));
  const r = await w.api.call('POST', `/v1/occurrences/${w.id}/reconcile`, { token: w.cred });
  assert.equal(r.status, 200, r.text);
  const occurrence = r.body['occurrence'] as JsonObject;
  assert.equal(occurrence['outcome'], 'success');
  assert.equal(occurrence['unresolved'], false);
  assert.equal((r.body['report'] as JsonObject)['effective'], 1);
  assert.deepEqual(
    occurrence,
    JSON.parse(JSON.stringify((await w.api.service.getOccurrence(w.id)).occurrence)),
  );
  assert.equal(w.sandbox.effectCount(w.key), 1, 'the payment was applied once and never sent again');
  // Resolved: a second reconcile asks nobody and changes nothing.
  const before = await w.api.snapshot();
  const again = await w.api.call('POST', `/v1/occurrences/${w.id}/reconcile`, { token: w.api.operator });
  assert.equal((again.body['report'] as JsonObject)['observations'], 0);
  assert.equal(await w.api.snapshot(), before);
});

test('reconcile without the pinned key: the answer is recorded as unauthenticated and stays unresolved', async (t) => {
  const w = await world(t, () => NO_KEYS);
  const r = await w.api.call('POST', `/v1/occurrences/${w.id}/reconcile`, { token: w.api.operator });
  assert.equal(r.status, 200, r.text);
  assert.equal((r.body['occurrence'] as JsonObject)['unresolved'], true);
  assert.equal((r.body['report'] as JsonObject)['effective'], 0);
  assert.ok(((r.body['report'] as JsonObject)['byReason'] as JsonObject)['unauthenticated'] !== undefined);
  assertProblem(
    await w.api.call('POST', `/v1/occurrences/${w.id}/reconcile`, { token: w.api.operator, body: { x: 1 } }),
    400,
    'input_invalid',
  );
});

test('reconcile: the observation that settles an occurrence names who asked for the reconcile (requestedBy)', async (t) => {
  const w = await world(t, (id) => staticKeys({ [id]: HMAC }));
  const r = await w.api.call('POST', `/v1/occurrences/${w.id}/reconcile`, { token: w.api.operator });
  assert.equal((r.body['occurrence'] as JsonObject)['outcome'], 'success');
  const detail = await w.api.service.getOccurrence(w.id);
  const observed = detail.evidence.filter((e) => e.type === 'observation_recorded');
  const settling = observed.find((e) => (e.body as JsonObject)['requestedBy'] !== undefined);
  assert.ok(settling !== undefined, 'the reconcile observation carries requestedBy');
  assert.match((settling.body as JsonObject)['requestedBy'] as string, /^operator:/);
  assert.match(settling.actor, /^status-source:/, 'the actor stays the status source that answered');
  // The executor's own acknowledgement was not requested by anyone.
  assert.equal(observed.filter((e) => (e.body as JsonObject)['requestedBy'] !== undefined).length, 1);
  // An executor asking is named too.
  const w2 = await world(t, (id) => staticKeys({ [id]: HMAC }));
  await w2.api.call('POST', `/v1/occurrences/${w2.id}/reconcile`, { token: w2.cred });
  const by = (await w2.api.service.getOccurrence(w2.id)).evidence
    .map((e) => (e.body as JsonObject)['requestedBy'])
    .filter((x) => x !== undefined);
  assert.deepEqual(by, ['executor:invoice-agent#1']);
});
