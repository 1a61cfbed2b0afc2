/**
 * `POST /v1/webhooks/{profileId}` inside the server (issue 13 §4, §7), on SQLite and PostgreSQL,
 * fed by the real sandbox and by deliveries signed here with the sandbox's own scheme: a signed
 * event resolves; a duplicate (the sandbox's re-delivery, a replayed capture) answers 200 and
 * records nothing; an out-of-order older event never moves the occurrence backwards; tampered,
 * unsigned and expired deliveries are refused with a problem and change nothing but the evidence
 * (AOC-CASE-009).
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { formatRfc3339 } from '../../src/core/time.js';
import { REFUSED_EVIDENCE_CAP } from '../../src/occurrences/index.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import {
  sandboxSignedString,
  signSandboxMessage,
  type SandboxSigningKey,
} from '../../src/providers/index.js';
import { sandboxHeaderName } from '../../src/providers/sandbox/index.js';
import type { SqliteStoreEngine } from '../../src/store/sqlite.js';
import { postgresForTests } from '../support/postgres.js';
import { assertProblem, request, type Answer } from './helpers.js';
import {
  openReconcileWorld,
  pay,
  paymentView,
  SANDBOX_ADMIN,
  type EngineName,
  type ReconcileWorld,
} from './reconcile-world.js';

const db = await postgresForTests();
const engines: EngineName[] = db === undefined ? ['sqlite'] : ['sqlite', 'postgres'];

async function world(t: TestContext, engine: EngineName): Promise<ReconcileWorld> {
  return openReconcileWorld(t, { engine, ...(engine === 'postgres' && { postgresUrl: await db!.schema() }) });
}

interface Signed {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/** An event about the payment, signed for the receiver's path at `atMs` (the sandbox's scheme). */
function signEvent(
  w: ReconcileWorld,
  id: string,
  data: Record<string, unknown>,
  atMs: number,
  key: SandboxSigningKey = { kind: 'hmac', secretId: w.secretId, secret: w.secret },
): Signed {
  const body = JSON.stringify({
    id,
    object: 'event',
    type: `payment.${String(data['status'])}`,
    created_at: formatRfc3339(atMs),
    data,
  });
  const header = signSandboxMessage(
    key,
    sandboxSignedString({ method: 'POST', path: w.hookPath, body }),
    atMs,
  );
  return { body, headers: { [sandboxHeaderName(key.kind)]: header } };
}

function deliver(w: ReconcileWorld, s: Signed, path = w.hookPath): Promise<Answer> {
  return request(w.url, 'POST', path, { raw: s.body, headers: s.headers });
}

async function observations(
  w: ReconcileWorld,
  id: string,
): Promise<{ missing: string | null; source: string }[]> {
  const { evidence } = await w.svc.getOccurrence(id);
  return evidence
    .filter((e) => e.type === 'observation_recorded')
    .map((e) => {
      const b = e.body as { source: string; interpretation: { missingKnowledge: string | null } };
      return { missing: b.interpretation.missingKnowledge, source: b.source };
    });
}

async function family(w: ReconcileWorld, name: string): Promise<string> {
  const res = await fetch(`${w.url}/metrics`);
  return (await res.text())
    .split('\n')
    .filter((l) => l.startsWith(name))
    .join('\n');
}

const deliveries = (w: ReconcileWorld): Promise<string> => family(w, 'baton_webhook_deliveries_total');

async function evidenceTypes(w: ReconcileWorld, id: string): Promise<string[]> {
  return (await w.svc.getOccurrence(id)).evidence.map((e) => e.type);
}

for (const engine of engines) {
  test(`[${engine}] the sandbox's signed webhook resolves a lost answer; its re-delivery is a duplicate that records nothing`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-1', ['drop_response_after_apply']);
    await w.sandbox.webhooksIdle();
    const id = ticket.occurrence.id;
    const after = await w.svc.getOccurrence(id);
    assert.equal(after.occurrence.outcome, 'success');
    assert.equal(after.occurrence.unresolved, false);
    const seen = await observations(w, id);
    assert.deepEqual(
      seen.map((o) => o.missing),
      ['unavailable', null],
      'the lost answer, then the webhook',
    );
    const replay = await fetch(`${w.sandbox.url}/admin/webhooks/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: ticket.nativeKey }),
    });
    const replayed = (await replay.json()) as { deliveries: { status: number; result: string }[] };
    assert.deepEqual(
      replayed.deliveries.map((d) => [d.result, d.status]),
      [['delivered', 200]],
    );
    assert.equal((await observations(w, id)).length, 2, 'the duplicate recorded nothing');
    assert.equal((await w.svc.getOccurrence(id)).evidence.length, after.evidence.length);
    assert.match(await deliveries(w), /result="duplicate"\} 1/);
    assert.match(await deliveries(w), /result="recorded"\} 1/);
  });

  test(`[${engine}] out of order: an older "pending" event after "succeeded" never moves the occurrence back`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-2', ['drop_response_after_apply', 'drop_webhook']);
    const id = ticket.occurrence.id;
    const view = await paymentView(w, ticket.nativeKey!);
    assert.equal(view['status'], 'succeeded');
    const now = w.clock.wallMs();
    const newer = signEvent(w, 'evt_newer', view, now);
    const older = signEvent(
      w,
      'evt_older',
      { ...view, status: 'pending', observed_at: formatRfc3339(now - 5_000) },
      now,
    );
    const first = await deliver(w, newer);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body, { received: true, duplicate: false, recorded: true, effective: true });
    const second = await deliver(w, older);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body['recorded'], true);
    const { occurrence } = await w.svc.getOccurrence(id);
    assert.equal(occurrence.outcome, 'success', 'still success');
    assert.equal(occurrence.effect, 'occurred');
    assert.equal(occurrence.conflict, false, 'pending then succeeded is no contradiction');
    assert.equal(occurrence.unresolved, false);
    assert.equal((await observations(w, id)).length, 3);
  });

  test(`[${engine}] an event dated beyond the 60 s allowance is refused webhook_stale without spending its id; its retry settles`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-future', ['drop_response_after_apply', 'drop_webhook']);
    const id = ticket.occurrence.id;
    const view = await paymentView(w, ticket.nativeKey!);
    const now = w.clock.wallMs();
    const ahead = signEvent(w, 'evt_ahead', { ...view, observed_at: formatRfc3339(now + 600_000) }, now);
    const refused = await deliver(w, ahead);
    assertProblem(refused, 401, 'webhook_stale');
    assert.deepEqual(refused.body['details'], { reason: 'future_dated' });
    assert.equal((await w.svc.getOccurrence(id)).occurrence.unresolved, true);
    // The provider's retry of the same event id, no longer ahead: new, read, settles.
    const retry = signEvent(w, 'evt_ahead', { ...view, observed_at: formatRfc3339(now) }, now);
    const settled = await deliver(w, retry);
    assert.deepEqual(settled.body, { received: true, duplicate: false, recorded: true, effective: true });
    assert.equal((await w.svc.getOccurrence(id)).occurrence.outcome, 'success');
  });

  test(`[${engine}] tampered, unsigned, expired and replayed deliveries settle nothing`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-3', ['drop_response_after_apply', 'drop_webhook']);
    const id = ticket.occurrence.id;
    const view = await paymentView(w, ticket.nativeKey!);
    const now = w.clock.wallMs();
    const good = signEvent(w, 'evt_good', view, now);

    const tampered = { ...good, body: good.body.replace('"amount":1250', '"amount":1251') };
    assert.notEqual(tampered.body, good.body);
    assertProblem(await deliver(w, tampered), 401, 'webhook_unauthenticated');
    const unsigned = await deliver(w, { body: good.body, headers: {} });
    assertProblem(unsigned, 401, 'webhook_unauthenticated');
    assert.equal(
      (unsigned.body['details'] as { reason: string } | undefined)?.reason ?? unsigned.body['reason'],
      'unsigned',
    );
    const otherPath = await deliver(w, good, `/v1/webhooks/${w.profile.id}?moved=1`);
    assertProblem(otherPath, 401, 'webhook_unauthenticated');
    const expired = signEvent(w, 'evt_old', view, now - 10 * 60_000);
    assertProblem(await deliver(w, expired), 401, 'webhook_stale');
    assertProblem(await deliver(w, good, '/v1/webhooks/no-such-profile'), 404, 'webhook_source_missing');

    let o = await w.svc.getOccurrence(id);
    assert.equal(o.occurrence.unresolved, true, 'nothing unauthenticated settled it');
    assert.deepEqual(
      (await observations(w, id)).map((x) => x.missing),
      ['unavailable', 'unauthenticated', 'unauthenticated', 'unauthenticated', 'unauthenticated'],
      'each refused delivery about a known occurrence is kept as evidence only',
    );
    const accepted = await deliver(w, good);
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body['effective'], true);
    const before = (await w.svc.getOccurrence(id)).evidence.length;
    const replayed = await deliver(w, good);
    assert.equal(replayed.status, 200, replayed.text);
    assert.deepEqual(replayed.body, { received: true, duplicate: true, recorded: false });
    o = await w.svc.getOccurrence(id);
    assert.equal(o.evidence.length, before, 'the replay recorded nothing');
    assert.equal(o.occurrence.outcome, 'success');
    assert.equal(w.sandbox.effectCount(ticket.nativeKey!), 1);
    const counted = await deliveries(w);
    assert.match(counted, /result="unauthenticated"\} 3/);
    assert.match(counted, /result="stale"\} 1/);
    assert.match(counted, /result="no_source"\} 1/);
  });

  test(`[${engine}] refused deliveries are kept once each and at most REFUSED_EVIDENCE_CAP per occurrence; the rest are only counted`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-cap', ['drop_response_after_apply', 'drop_webhook']);
    const id = ticket.occurrence.id;
    const view = await paymentView(w, ticket.nativeKey!);
    const now = w.clock.wallMs();
    const forged = (n: number): Signed => ({
      body: signEvent(w, `evt_forged_${n}`, view, now).body,
      headers: {},
    });
    const start = (await evidenceTypes(w, id)).length;
    for (let i = 0; i < 5; i++) assertProblem(await deliver(w, forged(0)), 401, 'webhook_unauthenticated');
    assert.equal((await evidenceTypes(w, id)).length, start + 1, 'the same refused delivery is kept once');
    const wrongKey = { kind: 'hmac' as const, secretId: w.secretId, secret: Buffer.alloc(32, 9) };
    const badlySigned = {
      body: forged(0).body,
      headers: {
        'sandbox-signature': signSandboxMessage(
          wrongKey,
          sandboxSignedString({ method: 'POST', path: w.hookPath, body: forged(0).body }),
          now,
        ),
      },
    };
    assertProblem(await deliver(w, badlySigned), 401, 'webhook_unauthenticated');
    assert.equal(
      (await evidenceTypes(w, id)).length,
      start + 2,
      'the same body refused for another reason is kept',
    );
    for (let i = 1; i <= 40; i++) assertProblem(await deliver(w, forged(i)), 401, 'webhook_unauthenticated');
    const kept = (await observations(w, id)).filter((o) => o.missing === 'unauthenticated');
    assert.equal(kept.length, REFUSED_EVIDENCE_CAP, 'distinct refused deliveries are kept up to the cap');
    let types = await evidenceTypes(w, id);
    assert.equal(types.length, start + REFUSED_EVIDENCE_CAP + 1, 'past the cap only the one mark');
    assert.equal(types.at(-1), 'refused_evidence_capped');
    const dropped = await family(w, 'baton_webhook_refused_evidence_dropped_total');
    assert.match(dropped, /cause="repeat"\} 4/);
    assert.match(dropped, new RegExp(`cause="cap"\\} ${40 - (REFUSED_EVIDENCE_CAP - 2)}\\b`));

    const good = await deliver(w, signEvent(w, 'evt_real', view, now));
    assert.equal(good.body['effective'], true, 'the cap never stands in an authentic delivery’s way');
    const settled = (await evidenceTypes(w, id)).length;
    assertProblem(await deliver(w, forged(41)), 401, 'webhook_unauthenticated');
    types = await evidenceTypes(w, id);
    assert.equal(types.length, settled, 'nothing appended past the cap, resolved or not');
    assert.equal(types.filter((x) => x === 'refused_evidence_capped').length, 1, 'the mark is appended once');
    assert.equal((await w.svc.getOccurrence(id)).occurrence.outcome, 'success');
  });

  test(`[${engine}] a resolved occurrence keeps a refused delivery once, and it changes nothing`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-resolved', ['drop_response_after_apply']);
    await w.sandbox.webhooksIdle();
    const id = ticket.occurrence.id;
    assert.equal((await w.svc.getOccurrence(id)).occurrence.unresolved, false);
    const view = await paymentView(w, ticket.nativeKey!);
    const failed = { ...view, status: 'failed' };
    const forged = { body: signEvent(w, 'evt_late_forgery', failed, w.clock.wallMs()).body, headers: {} };
    const before = (await observations(w, id)).length;
    for (let i = 0; i < 3; i++) assertProblem(await deliver(w, forged), 401, 'webhook_unauthenticated');
    const seen = await observations(w, id);
    assert.deepEqual(
      seen.slice(before).map((o) => o.missing),
      ['unauthenticated'],
      'kept once',
    );
    const { occurrence } = await w.svc.getOccurrence(id);
    assert.equal(occurrence.outcome, 'success');
    assert.equal(occurrence.conflict, false);
  });

  test(`[${engine}] a newer profile version pinning another key authenticates nothing about occurrences bound to the older one, burns no event id, and shuts the real provider out of nothing`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-pin', ['drop_response_after_apply', 'drop_webhook']);
    const id = ticket.occurrence.id;
    const attacker = generateEd25519KeyPair();
    const pin = {
      kind: 'ed25519' as const,
      kid: attacker.kid,
      publicKey: publicKeyRaw(attacker.publicKey).toString('base64url'),
    };
    await w.svc.registerProfile({
      ...w.profile.document,
      version: '2026-01-02.evil',
      statusSources: w.profile.document.statusSources.map((s) =>
        s.kind === 'webhook' ? { ...s, authentication: pin } : s,
      ),
    });
    const view = await paymentView(w, ticket.nativeKey!);
    const now = w.clock.wallMs();
    const evilKey = { kind: 'ed25519' as const, kid: attacker.kid, privateKey: attacker.privateKey };
    const forged = await deliver(w, signEvent(w, 'evt_shared', { ...view, status: 'failed' }, now, evilKey));
    assertProblem(forged, 401, 'webhook_unauthenticated');
    const { evidence } = await w.svc.getOccurrence(id);
    const last = evidence.filter((e) => e.type === 'observation_recorded').at(-1)?.body as {
      observation: { authentication: { verified: boolean; pin: string | null } };
    };
    assert.deepEqual(
      last.observation.authentication,
      { verified: false, pin: null },
      'never the foreign pin',
    );
    const stray = signEvent(w, 'evt_stray', { ...view, idempotency_key: 'no-such-key' }, now, evilKey);
    assert.equal((await deliver(w, stray)).status, 202, 'about no known occurrence: acknowledged');

    const real = await deliver(w, signEvent(w, 'evt_shared', view, now));
    assert.equal(real.status, 200, real.text);
    assert.deepEqual(real.body, { received: true, duplicate: false, recorded: true, effective: true });
    const realStray = await deliver(w, signEvent(w, 'evt_stray', view, now));
    assert.equal(realStray.status, 200, realStray.text);
    assert.equal(realStray.body['duplicate'], false, 'a foreign pin’s acknowledgement remembered no id');
    assert.equal(realStray.body['recorded'], true);
    const { occurrence } = await w.svc.getOccurrence(id);
    assert.equal(occurrence.outcome, 'success');
    assert.equal(occurrence.conflict, false);
  });

  test(`[${engine}] an authentic event naming a reference bound to another occurrence is acknowledged and kept as evidence that moves neither (AOC-CASE-007/-009)`, async (t) => {
    const w = await world(t, engine);
    const first = await pay(w, 'inv-hook-ref-a', ['drop_response_after_apply']);
    await w.sandbox.webhooksIdle();
    const a = await w.svc.getOccurrence(first.occurrence.id);
    const taken = a.occurrence.provider.providerReference;
    assert.equal(typeof taken, 'string', 'A resolved with its reference');
    const second = await pay(w, 'inv-hook-ref-b', ['drop_response_after_apply', 'drop_webhook']);
    const id = second.occurrence.id;
    const view = await paymentView(w, second.nativeKey!);
    const before = await w.svc.getOccurrence(id);
    const foreign = signEvent(w, 'evt_taken_ref', { ...view, reference: taken }, w.clock.wallMs());
    const answer = await deliver(w, foreign);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.body, { received: true, duplicate: false, recorded: true, effective: false });
    const after = await w.svc.getOccurrence(id);
    assert.deepEqual(
      [after.occurrence.phase, after.occurrence.outcome, after.occurrence.effect, after.occurrence.conflict],
      [before.occurrence.phase, before.occurrence.outcome, before.occurrence.effect, false],
    );
    assert.equal(after.occurrence.provider.providerReference, null, 'never bound a second time');
    assert.equal(after.evidence.length, before.evidence.length + 1, 'the answer is kept');
    assert.equal((await observations(w, id)).at(-1)?.missing, 'binding_mismatch');
    assert.deepEqual(await w.svc.getOccurrence(first.occurrence.id), a, 'the other occurrence is untouched');
    const again = await deliver(w, foreign);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(
      again.body,
      { received: true, duplicate: true, recorded: false },
      'its id is remembered',
    );
    const own = await deliver(w, signEvent(w, 'evt_own_ref', view, w.clock.wallMs()));
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body['effective'], true, 'its own reference still resolves it');
    assert.equal((await w.svc.getOccurrence(id)).occurrence.outcome, 'success');
  });

  test(`[${engine}] an authentic event about an occurrence in conflict is recorded with effective: false`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-conflict', ['drop_response_after_apply', 'drop_webhook']);
    const id = ticket.occurrence.id;
    const view = await paymentView(w, ticket.nativeKey!);
    const now = w.clock.wallMs();
    const ok = await deliver(w, signEvent(w, 'evt_c1', view, now));
    assert.equal(ok.body['effective'], true, ok.text);
    const contra = await deliver(w, signEvent(w, 'evt_c2', { ...view, status: 'failed' }, now));
    assert.equal(contra.status, 200, contra.text);
    assert.equal(contra.body['effective'], false, 'the contradiction is a conflict');
    const again = await deliver(w, signEvent(w, 'evt_c3', view, now));
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, { received: true, duplicate: false, recorded: true, effective: false });
    const { occurrence } = await w.svc.getOccurrence(id);
    assert.deepEqual([occurrence.outcome, occurrence.conflict], ['unknown', true], 'no side picked');
    assert.deepEqual(
      (await observations(w, id)).slice(-2).map((o) => o.missing),
      ['conflict', 'conflict'],
    );
  });

  test(`[${engine}] a delivery over the 1 MiB limit is refused 413 webhook_body_too_large and records nothing`, async (t) => {
    const w = await world(t, engine);
    const ticket = await pay(w, 'inv-hook-large', ['drop_response_after_apply', 'drop_webhook']);
    const view = await paymentView(w, ticket.nativeKey!);
    const big = signEvent(w, 'evt_big', { ...view, memo: 'x'.repeat(1_048_576) }, w.clock.wallMs());
    const before = await w.svc.getOccurrence(ticket.occurrence.id);
    const answer = await deliver(w, big);
    assertProblem(answer, 413, 'webhook_body_too_large');
    assert.equal((answer.body['details'] as { limit?: number } | undefined)?.limit, 1_048_576);
    assert.deepEqual(await w.svc.getOccurrence(ticket.occurrence.id), before);
  });

  test(`[${engine}] an authenticated body that is not an event is refused; another event type is acknowledged and nothing is written`, async (t) => {
    const w = await world(t, engine);
    const now = w.clock.wallMs();
    const key = { kind: 'hmac' as const, secretId: w.secretId, secret: w.secret };
    const sign = (body: string): Signed => ({
      body,
      headers: {
        'sandbox-signature': signSandboxMessage(
          key,
          sandboxSignedString({ method: 'POST', path: w.hookPath, body }),
          now,
        ),
      },
    });
    assertProblem(await deliver(w, sign('not json')), 400, 'webhook_event_invalid');
    const other = sign(
      JSON.stringify({ id: 'evt_other', object: 'event', type: 'account.updated', data: {} }),
    );
    const first = await deliver(w, other);
    assert.equal(first.status, 202, first.text);
    assert.deepEqual(first.body, { received: true, duplicate: false, recorded: false });
    // It names no occurrence, so no pin is an occurrence's own: its id is not remembered (a foreign
    // pin could otherwise burn a real event's id), and a re-delivery is acknowledged the same way.
    const again = await deliver(w, other);
    assert.equal(again.status, 202, again.text);
    assert.deepEqual(again.body, { received: true, duplicate: false, recorded: false });
    assert.match(await deliveries(w), /result="ignored"\} 2/);
  });
}

test('[sqlite] one delivery is ONE write transaction: the event id, the occurrence lookup and the observation (issue 13 §2)', async (t) => {
  const w = await world(t, 'sqlite');
  const ticket = await pay(w, 'inv-hook-one', ['drop_response_after_apply', 'drop_webhook']);
  const view = await paymentView(w, ticket.nativeKey!);
  const engine = w.opened.engine as SqliteStoreEngine;
  const written = (): number => engine.stats().transactions + engine.stats().rolledBack;
  const good = signEvent(w, 'evt_one_commit', view, w.clock.wallMs());
  const before = written();
  const first = await deliver(w, good);
  assert.equal(first.body['effective'], true, first.text);
  assert.equal(written() - before, 1, 'one transaction settled it and remembered the event id');
  const again = await deliver(w, good);
  assert.equal(again.body['duplicate'], true);
  assert.equal(written() - before, 2, 'the duplicate is one transaction too, and records nothing');
  assert.equal((await observations(w, ticket.occurrence.id)).length, 2, 'the lost answer, then the webhook');
});
