/**
 * AOC-CASE-007 … 012 (aoc-operation-continuity.txt, Conformance), at the service level on a real
 * SQLite file. The provider is SIMULATED (a call counter); the HTTP sandbox comes with src/providers.
 */
import { test } from 'node:test';
import { digestJcs } from '../../src/core/digest.js';
import assert from 'node:assert/strict';
import {
  ACCOUNT,
  createAndEnter,
  createInput,
  entryCount,
  eventTypes,
  expectCode,
  observation,
  openHarness,
  paymentsProfile,
  setupDomain,
  SimulatedProvider,
  snapshot,
  ENVIRONMENT,
  WEBHOOK_KID,
} from './helpers.js';

test('AOC-CASE-007 provider binding substitution', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  await h.svc.registerProfile(paymentsProfile({ version: '2026-02-01', account: 'acct_other' }));
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const reserved = await h.svc.create(createInput(g1.credential, 'inv-007a'));
  const ticket = await createAndEnter(h, g1.credential, 'inv-007b');
  await h.svc.observe(
    observation(ticket, 'pending', h.clock.wallMs(), { response: { id: 'pay_ref0001', status: 'pending' } }),
  );
  const before = await snapshot(h);
  const wrongDigest = digestJcs({ amount: 1, currency: 'EUR', destination: 'acct_mallory' });
  const other = { ...createInput(g1.credential, 'inv-007a') };
  await expectCode(
    h.svc.create({ ...other, provider: { ...other.provider, profileVersion: '2026-02-01' } }),
    'creation_binding_conflict',
  );
  await expectCode(
    h.svc.create({ ...other, request: { ...other.request, destination: 'acct_mallory' } }),
    'creation_binding_conflict',
  );
  await expectCode(
    h.svc.create({ ...other, provider: { ...other.provider, account: 'acct_other' } }),
    'provider_binding_conflict',
  );
  const swaps = [
    { profileVersion: '2026-02-01' },
    { account: 'acct_other' },
    { environment: 'production' },
    { requestDigest: wrongDigest },
    { nativeKey: ticket.nativeKey ?? '' },
  ];
  for (const expect of swaps) {
    await expectCode(
      h.svc.enter({ credential: g1.credential, occurrenceId: reserved.occurrence.id, expect }),
      'provider_binding_conflict',
    );
  }
  await expectCode(
    h.svc.release({
      credential: g1.credential,
      occurrenceId: reserved.occurrence.id,
      requestDigest: wrongDigest,
    }),
    'provider_binding_conflict',
  );
  assert.equal(await snapshot(h), before);
  const carried = { account: ACCOUNT, environment: ENVIRONMENT, nativeKey: ticket.nativeKey ?? undefined };
  const substitutions = [
    { carried: { ...carried, account: 'acct_other' } },
    { carried: { ...carried, environment: 'production' } },
    { carried: { ...carried, nativeKey: 'baton:test-domain:occ_else' } },
    { carried: { ...carried, requestDigest: reserved.occurrence.provider.requestDigest.replace(/.$/, 'A') } },
    { carried: { ...carried, providerReference: 'pay_ref9999' } },
    { source: 'unpinned-status-source' },
    { carried: { environment: ENVIRONMENT, nativeKey: ticket.nativeKey ?? undefined } },
  ];
  for (const swap of substitutions) {
    const r = await h.svc.observe(observation(ticket, 'succeeded', h.clock.wallMs(), swap));
    assert.equal(r.missingKnowledge, 'binding_mismatch', JSON.stringify(swap));
    assert.equal(r.occurrence.phase, 'entered');
    assert.equal(r.occurrence.provider.providerReference, 'pay_ref0001');
  }
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [1_000, 1_000]);
  t.diagnostic(`checked ${swaps.length + substitutions.length + 4} substitutions`);
});

test('AOC-CASE-008 missing retention or incomplete lookup', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-008', 1_200);
  const now = () => h.clock.wallMs();
  const seen = [
    await h.svc.observe(observation(ticket, null, now(), { source: 'listing', complete: false })),
    await h.svc.observe(
      observation(ticket, null, now(), {
        source: 'webhook',
        authentication: { verified: true, pin: WEBHOOK_KID },
        complete: true,
      }),
    ),
    await h.svc.observe(observation(ticket, null, now(), { source: 'by-key' })),
  ];
  assert.deepEqual(
    seen.map((s) => s.missingKnowledge),
    ['incomplete_listing', 'incomplete_listing', 'not_found'],
  );
  h.clock.advance(8 * 86_400_000); // beyond the by-key source's 7-day retention
  const late = await h.svc.observe(observation(ticket, null, now(), { source: 'by-key' }));
  assert.equal(late.missingKnowledge, 'not_found_beyond_retention');
  const listing = await h.svc.observe(
    observation(ticket, null, now(), { source: 'listing', complete: true }),
  );
  assert.equal(listing.missingKnowledge, 'not_found');
  const o = (await h.svc.getOccurrence(ticket.occurrence.id)).occurrence;
  assert.equal(o.phase, 'entered');
  assert.equal(o.unresolved, true);
  // No refund and no retry right.
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 1_200]);
  await expectCode(h.svc.enter({ credential: g1.credential, occurrenceId: o.id }), 'already_entered');
  await expectCode(
    h.svc.release({ credential: g1.credential, occurrenceId: o.id, requestDigest: o.provider.requestDigest }),
    'already_entered',
  );
  assert.equal(await entryCount(h, o.id), 1);
});

test('AOC-CASE-009 conflicting or unauthenticated evidence', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-009');
  const at = h.clock.wallMs();
  const unsigned = await h.svc.observe(
    observation(ticket, 'succeeded', at, { authentication: { verified: false } }),
  );
  const wrongPin = await h.svc.observe(
    observation(ticket, 'succeeded', at, { authentication: { verified: true, pin: 'attacker' } }),
  );
  assert.deepEqual(
    [unsigned.missingKnowledge, wrongPin.missingKnowledge],
    ['unauthenticated', 'unauthenticated'],
  );
  assert.equal(wrongPin.occurrence.phase, 'entered');
  const ok = await h.svc.observe(observation(ticket, 'succeeded', at));
  assert.equal(ok.occurrence.phase, 'resolved');
  const contra = await h.svc.observe(observation(ticket, 'failed', at, { source: 'listing' }));
  assert.equal(contra.missingKnowledge, 'conflict');
  assert.equal(contra.occurrence.conflict, true);
  assert.equal(contra.occurrence.phase, 'entered');
  assert.equal(contra.occurrence.outcome, 'unknown');
  assert.equal(contra.occurrence.unresolved, true);
  // A further favourable answer does not pick a side.
  const again = await h.svc.observe(observation(ticket, 'succeeded', at));
  assert.equal(again.occurrence.conflict, true);
  assert.equal(again.occurrence.phase, 'entered');
  const evidence = (await h.svc.getOccurrence(ticket.occurrence.id)).evidence;
  const observed = evidence.filter((e) => e.type === 'observation_recorded');
  assert.equal(observed.length, 5);
  assert.deepEqual(
    observed.map((e) => (e.body as { observation: { nativeStatus: string } }).observation.nativeStatus),
    ['succeeded', 'succeeded', 'succeeded', 'failed', 'succeeded'],
  );
  assert.equal((await h.svc.listUnresolved('invoice-agent')).length, 1);
});

test('AOC-CASE-010 terminal provider failure after entry (SIMULATED provider)', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const provider = new SimulatedProvider();
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const generic = await createAndEnter(h, g1.credential, 'inv-010a', 300);
  const noEffect = await createAndEnter(h, g1.credential, 'inv-010b', 500);
  provider.send(generic);
  provider.send(noEffect);
  const failed = await h.svc.observe(observation(generic, 'failed', h.clock.wallMs()));
  assert.deepEqual(
    [failed.occurrence.outcome, failed.occurrence.effect, failed.occurrence.phase],
    ['final_failure', 'unresolved', 'entered'],
  );
  const canceled = await h.svc.observe(observation(noEffect, 'canceled_before_processing', h.clock.wallMs()));
  assert.deepEqual(
    [canceled.occurrence.outcome, canceled.occurrence.effect, canceled.occurrence.phase],
    ['not_accepted', 'none_confirmed', 'resolved'],
  );
  // Entered authority stays consumed in both branches.
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 800]);
  for (const id of [generic.occurrence.id, noEffect.occurrence.id]) {
    await expectCode(h.svc.enter({ credential: g1.credential, occurrenceId: id }), 'already_entered');
  }
  // A new attempt is separately authorized: its own occurrence, reservation and key.
  const replacement = await h.svc.remedy({
    ...createInput(g1.credential, 'inv-010b-replacement', 500),
    remedyOf: noEffect.occurrence.id,
    kind: 'replacement',
  });
  assert.equal(replacement.occurrence.remedyOf, noEffect.occurrence.id);
  assert.notEqual(replacement.occurrence.provider.nativeKey, noEffect.nativeKey);
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [500, 800]);
  assert.equal(provider.totalCalls, 2);
});

test('AOC-CASE-011 compensation does not rewrite the occurrence', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  await h.svc.createAuthority({ id: 'refunds', unit: 'EUR-cents', total: 10_000 });
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const original = await createAndEnter(h, g1.credential, 'inv-011', 2_000);
  await h.svc.observe(observation(original, 'succeeded', h.clock.wallMs()));
  const before = await h.svc.getOccurrence(original.occurrence.id);
  const input = {
    ...createInput(g1.credential, 'refund-011', 2_000),
    authority: { id: 'refunds', amount: 2_000 },
    remedyOf: original.occurrence.id,
    kind: 'refund' as const,
  };
  const refund = await h.svc.remedy(input);
  assert.equal(refund.created, true);
  assert.notEqual(refund.occurrence.id, original.occurrence.id);
  assert.equal((await h.svc.remedy(input)).occurrence.id, refund.occurrence.id); // replay-protected
  const rt = await h.svc.enter({ credential: g1.credential, occurrenceId: refund.occurrence.id });
  await h.svc.observe(observation(rt, 'succeeded', h.clock.wallMs()));
  const after = await h.svc.getOccurrence(original.occurrence.id);
  assert.deepEqual(after.occurrence, before.occurrence);
  assert.deepEqual(after.evidence.slice(0, before.evidence.length), before.evidence);
  assert.deepEqual(
    after.evidence.slice(before.evidence.length).map((e) => e.type),
    ['remedy_linked'],
  );
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 2_000]);
  assert.deepEqual(await h.svc.getAuthority('refunds').then((a) => [a.reserved, a.consumed]), [0, 2_000]);
  assert.equal((await h.svc.getOccurrence(refund.occurrence.id)).occurrence.outcome, 'success');
  const reserved = await h.svc.create(createInput(g1.credential, 'inv-011-pending'));
  await expectCode(
    h.svc.remedy({ ...input, creationKey: 'refund-x', remedyOf: reserved.occurrence.id }),
    'remedy_invalid',
  );
  assert.deepEqual(await eventTypes(h, refund.occurrence.id), [
    'occurrence_created',
    'provider_entered',
    'observation_recorded',
    'state_changed',
  ]);
});

test('AOC-CASE-012 pending and in-flight limit under replacement', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h, {
    limits: { maxPendingPerLineage: 2, maxInFlightPerLineage: 1, maxPendingPerDomain: 3 },
  });
  const provider = new SimulatedProvider();
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const a = await h.svc.create(createInput(g1.credential, 'a'));
  await h.svc.create(createInput(g1.credential, 'b'));
  await expectCode(h.svc.create(createInput(g1.credential, 'c')), 'limit_pending_exceeded');
  provider.send(await h.svc.enter({ credential: g1.credential, occurrenceId: a.occurrence.id }));
  const held = await snapshot(h);
  await expectCode(h.svc.create(createInput(g1.credential, 'c')), 'limit_in_flight_exceeded');
  assert.equal(await snapshot(h), held);
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  assert.equal(g2.unresolved.length, 1);
  assert.equal(g2.reserved.length, 1);
  // Replacement does not reset the limit: the successor inherits the held state.
  const afterTakeover = await snapshot(h);
  await expectCode(h.svc.create(createInput(g2.credential, 'c')), 'limit_in_flight_exceeded');
  assert.equal(await snapshot(h), afterTakeover);
  const b = g2.reserved[0];
  assert.ok(b !== undefined);
  await h.svc.release({
    credential: g2.credential,
    occurrenceId: b.id,
    requestDigest: b.provider.requestDigest,
  });
  await expectCode(h.svc.create(createInput(g2.credential, 'c')), 'limit_in_flight_exceeded');
  // The domain-wide pending limit binds other lineages too (3 reserved across the domain).
  const refunds = await h.svc.takeover({ lineage: 'refund-agent' });
  const ops = await h.svc.takeover({ lineage: 'ops-agent' });
  for (const key of ['r1', 'r2']) await h.svc.create(createInput(refunds.credential, key));
  await h.svc.create(createInput(ops.credential, 'o1'));
  await assert.rejects(
    h.svc.create(createInput(ops.credential, 'o2')),
    (e: { code: string; details: { scope: string } }) => {
      assert.deepEqual([e.code, e.details.scope], ['limit_pending_exceeded', 'domain']);
      return true;
    },
  );
  assert.equal((await h.svc.counts()).byPhase.reserved, 3);
  // Existing unresolved records stay queryable and unchanged.
  const aNow = (await h.svc.getOccurrence(a.occurrence.id)).occurrence;
  assert.equal(aNow.phase, 'entered');
  assert.equal(aNow.version, 2);
  assert.equal(provider.totalCalls, 1);
  assert.equal(await entryCount(h, a.occurrence.id), 1);
});
