/**
 * AOC-CASE-001 … 006 (aoc-operation-continuity.txt, Conformance), at the service level on a real
 * SQLite file. The provider is SIMULATED (a call counter); the HTTP sandbox comes with src/providers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyEvidence } from '../../src/store/index.js';
import {
  acknowledgement,
  createAndEnter,
  createInput,
  entryCount,
  eventTypes,
  expectCode,
  observation,
  openHarness,
  setupDomain,
  SimulatedProvider,
  snapshot,
} from './helpers.js';

test('AOC-CASE-001 normal single-generation success (SIMULATED provider)', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const provider = new SimulatedProvider();
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const created = await h.svc.create(createInput(g1.credential, 'inv-001', 2_500));
  assert.equal(created.created, true);
  assert.equal((await h.svc.getAuthority('payouts')).reserved, 2_500);
  const ticket = await h.svc.enter({ credential: g1.credential, occurrenceId: created.occurrence.id });
  // Authority is consumed at entry, before the adapter is called (AOC-REQ-012).
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 2_500]);
  const answer = provider.send(ticket);
  await h.svc.recordAcknowledgement(acknowledgement(ticket, answer, h.clock.wallMs()));
  h.clock.advance(5_000);
  const done = await h.svc.observe(observation(ticket, 'succeeded', h.clock.wallMs()));
  assert.equal(done.occurrence.phase, 'resolved');
  assert.equal(done.occurrence.outcome, 'success');
  assert.equal(done.occurrence.effect, 'occurred');
  assert.equal(done.occurrence.provider.providerReference, answer.id);
  assert.equal(provider.totalCalls, 1);
  assert.equal(await entryCount(h, ticket.occurrence.id), 1);
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 2_500]);
  await expectCode(
    h.svc.enter({ credential: g1.credential, occurrenceId: ticket.occurrence.id }),
    'already_entered',
  );
  assert.deepEqual(await eventTypes(h, ticket.occurrence.id), [
    'occurrence_created',
    'provider_entered',
    'observation_recorded',
    'provider_reference_bound',
    'state_changed',
    'observation_recorded',
    'state_changed',
  ]);
  const report = await verifyEvidence(h.engine);
  assert.equal(report.ok, true);
  t.diagnostic(`entries=1 calls=${provider.totalCalls} events=${report.events}`);
});

test('AOC-CASE-002 crash before serialized provider entry', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const provider = new SimulatedProvider();
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const { occurrence } = await h.svc.create(createInput(g1.credential, 'inv-002', 700));
  // g1 "crashes" here. Deadline, death and silence prove nothing: the reservation stays held.
  h.clock.advance(3_600_000);
  assert.equal((await h.svc.getOccurrence(occurrence.id)).occurrence.phase, 'reserved');
  assert.equal((await h.svc.getAuthority('payouts')).reserved, 700);
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  assert.deepEqual(
    g2.reserved.map((o) => o.id),
    [occurrence.id],
  );
  await expectCode(
    h.svc.enter({ credential: g1.credential, occurrenceId: occurrence.id }),
    'generation_retired',
  );
  await expectCode(
    h.svc.enter({ credential: g2.credential, occurrenceId: occurrence.id }),
    'generation_mismatch',
  );
  const released = await h.svc.release({
    credential: g2.credential,
    occurrenceId: occurrence.id,
    requestDigest: occurrence.provider.requestDigest,
  });
  assert.equal(released.phase, 'released');
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 0]);
  // The tombstone answers the same creation binding: no new reservation, no reuse.
  const again = await h.svc.create(createInput(g2.credential, 'inv-002', 700));
  assert.equal(again.created, false);
  assert.equal(again.occurrence.id, occurrence.id);
  assert.equal(again.occurrence.phase, 'released');
  assert.equal((await h.svc.getAuthority('payouts')).reserved, 0);
  await expectCode(h.svc.enter({ credential: g2.credential, occurrenceId: occurrence.id }), 'not_reserved');
  assert.equal(provider.totalCalls, 0);
  assert.equal(await entryCount(h, occurrence.id), 0);
  assert.deepEqual(await eventTypes(h, occurrence.id), ['occurrence_created', 'released']);
});

test('AOC-CASE-003 crash after entry before acknowledgement (SIMULATED provider)', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const provider = new SimulatedProvider();
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-003', 900);
  provider.send(ticket); // …and g1 dies before it can record the answer.
  const before = await h.svc.getOccurrence(ticket.occurrence.id);
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  assert.deepEqual(
    g2.unresolved.map((o) => o.id),
    [ticket.occurrence.id],
  );
  const carried = g2.unresolved[0];
  assert.equal(carried?.phase, 'entered');
  assert.equal(carried?.effect, 'unresolved');
  assert.deepEqual(carried?.provider, before.occurrence.provider);
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 900]);
  await expectCode(
    h.svc.enter({ credential: g2.credential, occurrenceId: ticket.occurrence.id }),
    'already_entered',
  );
  await expectCode(
    h.svc.enter({ credential: g1.credential, occurrenceId: ticket.occurrence.id }),
    'generation_retired',
  );
  const retry = await h.svc.create(createInput(g2.credential, 'inv-003', 900));
  assert.equal(retry.created, false);
  assert.equal(retry.occurrence.id, ticket.occurrence.id);
  assert.equal(provider.totalCalls, 1);
  assert.equal(await entryCount(h, ticket.occurrence.id), 1);
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 900]);
});

test('AOC-CASE-004 historical response closes the predecessor attempt (SIMULATED provider)', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const provider = new SimulatedProvider();
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-004', 400);
  const answer = provider.send(ticket);
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const lineageBefore = await h.svc.getLineage('invoice-agent');
  const authorityBefore = await h.svc.getAuthority('payouts');
  // A response bound to another attempt (another native key) does not close this one.
  const foreign = await h.svc.observe(
    observation(ticket, 'succeeded', h.clock.wallMs(), {
      carried: { account: 'acct_sandbox_001', nativeKey: 'baton:test-domain:occ_other' },
    }),
  );
  assert.equal(foreign.missingKnowledge, 'binding_mismatch');
  assert.equal(foreign.occurrence.phase, 'entered');
  // The predecessor's exact answer arrives after the takeover.
  await h.svc.recordAcknowledgement(
    acknowledgement(ticket, { ...answer, status: 'succeeded' }, h.clock.wallMs()),
  );
  const after = await h.svc.getOccurrence(ticket.occurrence.id);
  assert.equal(after.occurrence.phase, 'resolved');
  assert.equal(after.occurrence.outcome, 'success');
  assert.equal(after.occurrence.enteredGeneration, 1);
  const lineageAfter = await h.svc.getLineage('invoice-agent');
  assert.equal(lineageAfter.generation, 2);
  assert.deepEqual(lineageAfter, lineageBefore);
  assert.deepEqual(await h.svc.getAuthority('payouts'), authorityBefore);
  await expectCode(h.svc.create(createInput(g1.credential, 'inv-004b')), 'generation_retired');
  await expectCode(
    h.svc.enter({ credential: g2.credential, occurrenceId: ticket.occurrence.id }),
    'already_entered',
  );
  assert.equal(await entryCount(h, ticket.occurrence.id), 1);
  assert.equal(provider.totalCalls, 1);
});

test('AOC-CASE-005 retired executor races the successor', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const pending = await h.svc.create(createInput(g1.credential, 'inv-005a'));
  const entered = await createAndEnter(h, g1.credential, 'inv-005b');
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const before = await snapshot(h);
  // Both generations race on the same occurrences at once; the store serializes them.
  const attempts = await Promise.allSettled([
    h.svc.enter({ credential: g1.credential, occurrenceId: pending.occurrence.id }),
    h.svc.enter({ credential: g2.credential, occurrenceId: pending.occurrence.id }),
    h.svc.enter({ credential: g1.credential, occurrenceId: entered.occurrence.id }),
    h.svc.enter({ credential: g2.credential, occurrenceId: entered.occurrence.id }),
    h.svc.create(createInput(g1.credential, 'inv-005c')),
    h.svc.release({
      credential: g1.credential,
      occurrenceId: pending.occurrence.id,
      requestDigest: pending.occurrence.provider.requestDigest,
    }),
  ]);
  const codes = attempts.map((a) => (a.status === 'rejected' ? (a.reason as { code: string }).code : 'ok'));
  assert.deepEqual(codes, [
    'generation_retired',
    'generation_mismatch',
    'generation_retired',
    'already_entered',
    'generation_retired',
    'generation_retired',
  ]);
  assert.equal(await snapshot(h), before);
  assert.equal(await entryCount(h, entered.occurrence.id), 1);
  // Bypass paths stay disclosed rather than falsely fenced (AOC-REQ-001, -006).
  const domain = await h.svc.getDomain();
  assert.deepEqual(domain.bypassPaths.map((p) => p.kind).sort(), [
    'administrator',
    'alternate-protocol',
    'break-glass',
    'direct',
    'queued',
    'system-of-record',
  ]);
  assert.equal(domain.bypassPaths.find((p) => p.kind === 'direct')?.status, 'present');
});

test('AOC-CASE-006 native key reset attack', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const labels = [
    { type: 'aadp_request_id', value: 'req-1' },
    { type: 'aadp_permit_id', value: 'permit-1' },
    { type: 'bcr_operation_id', value: 'op-1' },
  ] as const;
  const base = { ...createInput(g1.credential, 'inv-006'), linkedIds: [...labels] };
  const original = await h.svc.create(base);
  const key = original.occurrence.provider.nativeKey;
  assert.equal(key, `baton:test-domain:${original.occurrence.id}`);
  // Same binding, relabelled AADP/BCR ids: refused, not a new occurrence.
  await expectCode(
    h.svc.create({ ...base, linkedIds: [{ type: 'aadp_request_id', value: 'req-2' }, labels[1], labels[2]] }),
    'creation_binding_conflict',
  );
  // A new generation replays the same binding: the original, same native key.
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const replay = await h.svc.create({ ...base, credential: g2.credential });
  assert.equal(replay.created, false);
  assert.equal(replay.occurrence.provider.nativeKey, key);
  // A new creation key that reuses a single-use native identifier: refused.
  for (const reused of labels) {
    await expectCode(
      h.svc.create({ ...createInput(g2.credential, `inv-006-${reused.type}`), linkedIds: [reused] }),
      'linked_identifier_conflict',
    );
  }
  // Caller-chosen provider keys, occurrence ids, generations or digests are not accepted at all.
  await expectCode(
    h.svc.create({
      ...createInput(g2.credential, 'inv-006x'),
      linkedIds: [{ type: 'provider_key', value: 'k' }],
    } as never),
    'input_invalid',
  );
  for (const extra of ['nativeKey', 'occurrenceId', 'generation', 'requestDigest']) {
    await expectCode(
      h.svc.create({ ...createInput(g2.credential, 'inv-006y'), [extra]: 'x' }),
      'input_invalid',
    );
  }
  await expectCode(
    h.svc.enter({
      credential: g2.credential,
      occurrenceId: original.occurrence.id,
      expect: { nativeKey: 'mine' },
    }),
    'provider_binding_conflict',
  );
  // A separately intended identical action goes through the creation rule: a new occurrence and key.
  const separate = await h.svc.create(createInput(g2.credential, 'inv-006-second'));
  assert.equal(separate.created, true);
  assert.notEqual(separate.occurrence.provider.nativeKey, key);
  assert.equal(separate.occurrence.provider.requestDigest, original.occurrence.provider.requestDigest);
  const all = await h.svc.counts();
  assert.equal(all.total, 2);
});
