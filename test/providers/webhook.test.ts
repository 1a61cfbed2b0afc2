/**
 * The signed webhook receiver (a Fastify plugin) fed by the live sandbox: a signed event is an
 * observation like any other; a dropped event leaves the occurrence unresolved; a replay after a
 * takeover is a historical response — evidence only (AOC-REQ-007, AOC-CASE-004, -009).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signSandboxMessage, sandboxSignedString, occurrenceIdFromKey } from '../../src/providers/index.js';
import { admin, ask, openWorld, pay, WEBHOOK_PATH, type World } from './world.js';

async function post(w: World, body: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${w.receiverUrl!}${WEBHOOK_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return res.status;
}

test('a signed webhook after a lost answer resolves the occurrence', async (t) => {
  const w = await openWorld(t, { webhook: true });
  const { ticket, ack } = await pay(w, 'inv-hook', ['drop_response_after_apply']);
  await w.sandbox.webhooksIdle();
  assert.equal(ack.missingKnowledge, 'unavailable');
  const mine = w.recorded.filter((r) => r.occurrenceId === ticket.occurrence.id);
  assert.equal(mine.length, 1);
  assert.equal(mine[0]!.result.effective, true);
  const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
  assert.equal(occurrence.outcome, 'success');
  assert.equal(occurrence.unresolved, false);
});

test('drop_webhook: nothing arrives, the only record is the lost answer (`unavailable`); a replay after takeover is evidence only', async (t) => {
  const w = await openWorld(t, { webhook: true });
  const { ticket, key } = await pay(w, 'inv-dropped-hook', ['drop_webhook', 'drop_response_after_apply']);
  await w.sandbox.webhooksIdle();
  assert.equal(w.recorded.length, 0, 'the receiver heard nothing');
  const before = await w.svc.getOccurrence(ticket.occurrence.id);
  const reasons = before.evidence
    .filter((e) => e.type === 'observation_recorded')
    .map((e) => (e.body as { interpretation: { missingKnowledge: string } }).interpretation.missingKnowledge);
  assert.deepEqual(reasons, ['unavailable']);
  assert.equal(before.occurrence.unresolved, true);
  const hooks = (await (await admin(w.url, 'GET', '/admin/webhooks')).json()) as {
    events: { key: string; deliveries: { result: string }[] }[];
  };
  assert.deepEqual(
    hooks.events.filter((e) => e.key === key).flatMap((e) => e.deliveries.map((d) => d.result)),
    ['dropped'],
  );
  const retired = w.credential;
  const successor = await w.svc.takeover({ lineage: 'invoice-agent' });
  assert.deepEqual(
    successor.unresolved.map((o) => o.id),
    [ticket.occurrence.id],
  );
  await admin(w.url, 'POST', '/admin/webhooks/replay', { key });
  await w.sandbox.webhooksIdle();
  const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
  assert.equal(occurrence.outcome, 'success', 'the historical response closes the predecessor attempt');
  assert.equal(
    (await w.svc.getLineage('invoice-agent')).generation,
    successor.generation,
    'no generation change',
  );
  await assert.rejects(
    w.svc.create({
      credential: retired,
      creationKey: 'inv-late',
      provider: { profileId: w.profile.id, profileVersion: w.profile.version },
      request: { amount: 1, currency: 'eur', payee: 'x', invoice: 'inv-late' },
      authority: { id: 'payouts', amount: 1 },
    }),
    { code: 'generation_retired' },
    'the predecessor is not reactivated',
  );
  assert.equal(w.sandbox.effectCount(key), 1);
  assert.equal((await w.svc.getAuthority('payouts')).consumed, 1250);
});

test('forged and unsigned webhooks are recorded as `unauthenticated` and change nothing; unknown keys are ignored', async (t) => {
  const w = await openWorld(t, { webhook: true });
  const { ticket, key } = await pay(w, 'inv-forged', ['drop_webhook', 'drop_response_after_apply']);
  const lookup = await fetch(`${w.url}/v1/accounts/acct_sandbox/payments/by-key/${encodeURIComponent(key)}`);
  const data = (await lookup.json()) as Record<string, unknown>;
  const body = JSON.stringify({ id: 'evt_forged', object: 'event', type: 'payment.succeeded', data });
  const signed = sandboxSignedString({ method: 'POST', path: WEBHOOK_PATH, body });
  const forged = signSandboxMessage(
    { kind: 'hmac', secretId: 'hsk_attacker', secret: Buffer.alloc(32, 1) },
    signed,
    w.clock.wallMs(),
  );
  assert.equal(await post(w, body), 204);
  assert.equal(await post(w, body, { 'sandbox-signature': forged }), 204);
  assert.deepEqual(
    w.recorded.map((r) => r.result.missingKnowledge),
    ['unauthenticated', 'unauthenticated'],
  );
  const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
  assert.equal(occurrence.outcome, 'unknown');
  assert.equal(occurrence.unresolved, true);
  const stranger = JSON.stringify({
    id: 'evt_x',
    object: 'event',
    data: { ...data, idempotency_key: 'not-ours' },
  });
  assert.equal(await post(w, stranger), 202);
  assert.equal(await post(w, 'not json'), 400);
  const signedOk = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(signedOk.occurrence.outcome, 'success', 'the authentic source still works');
});

test('occurrenceIdFromKey inverts the template rule and refuses keys it did not derive', async (t) => {
  const w = await openWorld(t);
  const { ticket, key } = await pay(w, 'inv-invert');
  const doc = w.profile.document;
  assert.equal(occurrenceIdFromKey(doc, w.domainId, key), ticket.occurrence.id);
  assert.equal(occurrenceIdFromKey(doc, 'another-domain', key), undefined);
  assert.equal(occurrenceIdFromKey(doc, w.domainId, key.replace('baton:', 'other:')), undefined);
  assert.equal(occurrenceIdFromKey(doc, w.domainId, 'baton:test-domain'), undefined);
});
