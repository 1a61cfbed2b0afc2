/**
 * An executor's acknowledgements are bounded evidence (src/occurrences/service/ack-bound.ts), over
 * real HTTP on SQLite and PostgreSQL against the real sandbox: an identical report is answered and
 * not appended again (`notRecorded: repeat`); distinct unauthenticated reports past
 * ACKNOWLEDGEMENT_EVIDENCE_CAP are answered and not appended (`capped`), the first of them leaving
 * one `acknowledgement_evidence_capped` mark; each one left out is counted in
 * `baton_acknowledgement_evidence_dropped_total`. The first acknowledgement of the entry is always
 * kept (the cap before entry does not cost it), and what can move the state always is (AOC-REQ-009).
 * Status readings a caller asks for (reconcile, acknowledge-and-settle's pass) that move nothing —
 * the occurrence stays unknown, or the provider keeps answering `pending` — are kept up to the cap
 * beside the first of each reason or answer, marked once and counted in
 * `baton_reconcile_evidence_dropped_total`; a new answer always is.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { evidenceOnly } from '../../src/client/adapter.js';
import type { JsonObject } from '../../src/core/json.js';
import { ACKNOWLEDGEMENT_EVIDENCE_CAP } from '../../src/occurrences/index.js';
import { postgresForTests } from '../support/postgres.js';
import { request, type Answer } from './helpers.js';
import { enterPayment, openReconcileWorld, type EngineName, type ReconcileWorld } from './reconcile-world.js';

const db = await postgresForTests();
const engines: EngineName[] = db === undefined ? ['sqlite'] : ['sqlite', 'postgres'];

async function world(t: TestContext, engine: EngineName): Promise<ReconcileWorld> {
  return openReconcileWorld(t, {
    engine,
    webhooks: false,
    ...(engine === 'postgres' && { postgresUrl: await db!.schema() }),
  });
}

/** An executor's report of a provider answer `n` (distinct `n`: distinct responses). */
function report(w: ReconcileWorld, nativeKey: string, n: number, at = w.clock.wallMs()): JsonObject {
  return {
    observedAt: at,
    result: 'found',
    nativeStatus: 'succeeded',
    response: { id: 'pay_abcdef12', status: 'succeeded', n },
    carried: { account: w.profile.document.account, nativeKey },
  };
}

function acknowledge(w: ReconcileWorld, id: string, body: JsonObject): Promise<Answer> {
  return request(w.url, 'POST', `/v1/occurrences/${id}/acknowledgements`, { token: w.credential, body });
}

async function evidenceTypes(w: ReconcileWorld, id: string): Promise<string[]> {
  const detail = await request(w.url, 'GET', `/v1/occurrences/${id}`, { token: w.credential });
  assert.equal(detail.status, 200, detail.text);
  return (detail.body['evidence'] as JsonObject[]).map((e) => e['type'] as string);
}

async function dropped(w: ReconcileWorld): Promise<string> {
  const text = await (await fetch(`${w.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('baton_acknowledgement_evidence_dropped_total'))
    .join('\n');
}

const CAP = ACKNOWLEDGEMENT_EVIDENCE_CAP;

for (const engine of engines) {
  test(`[${engine}] identical acknowledgements are kept once, distinct ones up to the cap; the rest are answered, marked once and counted`, async (t) => {
    const w = await world(t, engine);
    const ticket = await enterPayment(w, 'inv-ack-cap');
    const id = ticket.occurrence.id;
    const key = ticket.nativeKey!;
    assert.match(await dropped(w), /cause="repeat"\} 0/, 'the series exist before the first drop');
    const start = (await evidenceTypes(w, id)).length;

    const first = await acknowledge(w, id, report(w, key, 0));
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body['notRecorded'], undefined, 'the first acknowledgement is recorded');
    assert.equal(first.body['missingKnowledge'], 'unauthenticated');
    for (let i = 1; i <= 4; i++) {
      // The same report again, later: only its observedAt differs.
      const again = await acknowledge(w, id, report(w, key, 0, w.clock.wallMs() + i));
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body['notRecorded'], 'repeat');
      assert.equal(again.body['missingKnowledge'], 'unauthenticated', 'answered as before');
      assert.equal(again.body['changed'], false);
    }
    assert.equal((await evidenceTypes(w, id)).length, start + 1, 'an identical report is appended once');

    const answers: unknown[] = [];
    for (let n = 1; n <= 40; n++)
      answers.push((await acknowledge(w, id, report(w, key, n))).body['notRecorded']);
    assert.deepEqual(
      answers,
      Array.from({ length: 40 }, (_, i) => (i < CAP - 1 ? undefined : 'capped')),
      'distinct reports are recorded up to the cap, then answered as capped',
    );
    let types = await evidenceTypes(w, id);
    assert.equal(types.length, start + CAP + 1, 'the cap, then one mark');
    assert.equal(types.filter((x) => x === 'observation_recorded').length, CAP);
    assert.equal(types.at(-1), 'acknowledgement_evidence_capped');
    const metric = await dropped(w);
    assert.match(metric, /cause="repeat"\} 4\b/);
    assert.match(metric, new RegExp(`cause="cap"\\} ${40 - (CAP - 1)}\\b`));

    // What can move the state is never held back: the real answer and the pinned status pass.
    const { acknowledgement } = await w.adapter.send(ticket);
    const { occurrenceId: _, ...body } = evidenceOnly(acknowledgement);
    const settled = await request(w.url, 'POST', `/v1/occurrences/${id}/acknowledge-and-settle`, {
      token: w.credential,
      body,
    });
    assert.equal(settled.status, 200, settled.text);
    assert.equal((settled.body['acknowledgement'] as JsonObject)['notRecorded'], 'capped');
    const occurrence = settled.body['occurrence'] as JsonObject;
    assert.equal(occurrence['outcome'], 'success', 'the authenticated status answer resolved it');
    types = await evidenceTypes(w, id);
    assert.deepEqual(
      types.slice(start + CAP + 1),
      ['observation_recorded', 'provider_reference_bound', 'state_changed'],
      'the status answer is appended whole; the capped report is not',
    );
    assert.equal(types.filter((x) => x === 'acknowledgement_evidence_capped').length, 1, 'marked once');
    assert.match(await dropped(w), new RegExp(`cause="cap"\\} ${40 - (CAP - 1) + 1}\\b`));
  });

  test(`[${engine}] the cap before entry never costs the first acknowledgement of the entry`, async (t) => {
    const w = await world(t, engine);
    const { occurrence } = await w.svc.create({
      credential: w.credential,
      creationKey: 'inv-ack-early',
      provider: { profileId: w.profile.id, profileVersion: w.profile.version },
      request: { amount: 1250, currency: 'eur', payee: 'acme-supplies', invoice: 'inv-ack-early' },
      authority: { id: 'payouts', amount: 1250 },
    });
    const id = occurrence.id;
    const key = occurrence.provider.nativeKey!;
    for (let n = 0; n <= CAP; n++) {
      const early = await acknowledge(w, id, report(w, key, n));
      assert.equal(early.body['missingKnowledge'], 'no_attempt');
      assert.equal(early.body['notRecorded'], n < CAP ? undefined : 'capped');
    }
    await w.svc.enter({ credential: w.credential, occurrenceId: id });
    const after = await acknowledge(w, id, report(w, key, 0));
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body['notRecorded'], undefined, 'the entry’s first acknowledgement is recorded');
    assert.equal(after.body['missingKnowledge'], 'unauthenticated');
    const types = await evidenceTypes(w, id);
    assert.equal(types.at(-1), 'observation_recorded');
  });
}

for (const engine of engines) {
  test(`[${engine}] repeated unanswered reconciles are kept up to the cap and marked once; a new reason and the answer always are`, async (t) => {
    const w = await world(t, engine);
    const ticket = await enterPayment(w, 'inv-reconcile-cap');
    const id = ticket.occurrence.id;
    const reconcile = () =>
      request(w.url, 'POST', `/v1/occurrences/${id}/reconcile`, { token: w.credential, body: {} });
    const first = await reconcile();
    assert.equal(first.status, 200, first.text);
    assert.notEqual(first.body['missingKnowledge'], null, 'nothing was sent: the sources find nothing');
    const asked = (first.body['report'] as JsonObject)['observations'] as number;
    assert.ok(asked >= 1);
    const calls = Math.ceil((CAP + asked) / asked) + 3;
    for (let i = 1; i < calls; i++) {
      w.clock.advance(1000); // each answer is stamped anew: no two are identical
      const again = await reconcile();
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body['missingKnowledge'], first.body['missingKnowledge'], 'answered as before');
    }
    const types = await evidenceTypes(w, id);
    const kept = types.filter((x) => x === 'observation_recorded').length;
    // The first reading of each source with its reason, then CAP more, then the one mark.
    assert.equal(kept, asked + CAP, 'readings are kept up to the cap');
    assert.equal(types.filter((x) => x === 'reconcile_evidence_capped').length, 1, 'marked once');
    const text = await (await fetch(`${w.url}/metrics`)).text();
    const dropped = calls * asked - asked - CAP;
    assert.match(text, new RegExp(`baton_reconcile_evidence_dropped_total\\{cause="cap"\\} ${dropped}\\b`));

    // Past the provider's retention the same ask has a new reason: kept although the cap is reached.
    const retention = Math.max(...w.profile.document.statusSources.map((s) => s.retentionSeconds));
    w.clock.advance(retention * 1000 + 1000);
    const late = await reconcile();
    assert.equal(late.body['missingKnowledge'], 'not_found_beyond_retention', late.text);
    const reasons = (await w.svc.getOccurrence(id)).evidence
      .slice(types.length)
      .map(
        (e) =>
          (e.body as { interpretation?: { missingKnowledge?: string } }).interpretation?.missingKnowledge,
      );
    assert.ok(reasons.includes('not_found_beyond_retention'), 'a new reason is never capped');

    // The payment now exists: the reading that answers is appended and resolves it.
    const before = (await evidenceTypes(w, id)).length;
    await w.adapter.send(ticket);
    const settled = await reconcile();
    assert.equal((settled.body['occurrence'] as JsonObject)['outcome'], 'success', settled.text);
    assert.ok((await evidenceTypes(w, id)).slice(before).includes('state_changed'));
  });
}

for (const engine of engines) {
  test(`[${engine}] a provider that keeps answering pending: readings kept up to the cap over reconcile and acknowledge-and-settle; the new answer always is`, async (t) => {
    const w = await world(t, engine);
    // The payment's status reads `pending` for its first PENDING lookups, then `succeeded`.
    const PENDING = CAP + 8;
    w.sandbox.addFault('next', `status_changes_later:pending:${PENDING}`);
    const ticket = await enterPayment(w, 'inv-pending-cap');
    const id = ticket.occurrence.id;
    const { acknowledgement } = await w.adapter.send(ticket);
    const { occurrenceId: _, ...ack } = evidenceOnly(acknowledgement);
    const start = (await evidenceTypes(w, id)).length;
    const reconcile = () =>
      request(w.url, 'POST', `/v1/occurrences/${id}/reconcile`, { token: w.credential, body: {} });
    const settle = () =>
      request(w.url, 'POST', `/v1/occurrences/${id}/acknowledge-and-settle`, {
        token: w.credential,
        body: ack,
      });
    const outcomes: unknown[] = [];
    for (let call = 1; call <= PENDING + 1; call++) {
      w.clock.advance(1000); // each answer is stamped anew: no two are identical
      // Alternate: the executor's acknowledge-and-settle, an operator's-style reconcile by the executor.
      const r = call % 2 === 1 ? await settle() : await reconcile();
      assert.equal(r.status, 200, r.text);
      assert.equal((r.body['report'] as JsonObject)['observations'], 1, `call ${call} read one source`);
      outcomes.push((r.body['occurrence'] as JsonObject)['outcome']);
    }
    assert.deepEqual(
      outcomes,
      [...Array.from({ length: PENDING }, () => 'accepted'), 'success'],
      'every call is answered from the reading, kept or not',
    );
    const types = (await evidenceTypes(w, id)).slice(start);
    const acks = 1; // the same acknowledgement again is a repeat
    // Reading 1 moved the state, reading 2 is the first of its answer, then CAP more: kept. The
    // rest of the pending ones are dropped; the last, `succeeded`, moves the state: kept.
    const kept = 2 + CAP + 1;
    assert.equal(types.filter((x) => x === 'observation_recorded').length, acks + kept);
    assert.equal(types.filter((x) => x === 'reconcile_evidence_capped').length, 1, 'marked once');
    assert.deepEqual(types.slice(-2), ['observation_recorded', 'state_changed'], 'the new answer is kept');
    const text = await (await fetch(`${w.url}/metrics`)).text();
    const dropped = PENDING - (2 + CAP);
    assert.match(text, new RegExp(`baton_reconcile_evidence_dropped_total\\{cause="cap"\\} ${dropped}\\b`));
    const settles = Math.ceil((PENDING + 1) / 2);
    assert.match(
      text,
      new RegExp(`baton_acknowledgement_evidence_dropped_total\\{cause="repeat"\\} ${settles - 1}\\b`),
    );
  });
}
