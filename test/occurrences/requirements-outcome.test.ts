/** AOC-REQ-007 … 013 (aoc-operation-continuity.txt, Continuity Requirements), on a real SQLite file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from '../../src/core/json.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import {
  acknowledgement,
  createAndEnter,
  createInput,
  entryCount,
  expectCode,
  observation,
  openHarness,
  paymentsProfile,
  setupDomain,
  SimulatedProvider,
  snapshot,
} from './helpers.js';

test('AOC-REQ-007 historical responses are evidence, not authority', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-7');
  await h.svc.takeover({ lineage: 'invoice-agent' });
  const lineageRows = () =>
    h.engine.read((ex) =>
      ex.all('SELECT * FROM aoc_lineages UNION ALL SELECT * FROM aoc_credentials ORDER BY 1'),
    );
  const fenced = JSON.stringify(await lineageRows());
  const authority = await h.svc.getAuthority('payouts');
  // Unbindable: the answer names no key or reference of this attempt.
  const unbound = await h.svc.observe(
    observation(ticket, 'succeeded', h.clock.wallMs(), { carried: { account: 'acct_sandbox_001' } }),
  );
  assert.equal(unbound.missingKnowledge, 'binding_mismatch');
  assert.equal(unbound.occurrence.unresolved, true);
  // Bound to the exact predecessor attempt: it may close the outcome, nothing more.
  const bound = await h.svc.recordAcknowledgement(
    acknowledgement(ticket, { id: 'pay_hist0001', status: 'succeeded' }, h.clock.wallMs()),
  );
  assert.equal(bound.occurrence.phase, 'resolved');
  assert.equal(JSON.stringify(await lineageRows()), fenced);
  assert.deepEqual(await h.svc.getAuthority('payouts'), authority);
  await expectCode(h.svc.create(createInput(g1.credential, 'inv-7b')), 'generation_retired');
  assert.equal(await entryCount(h, ticket.occurrence.id), 1);
});

test('AOC-REQ-008 pre-entry release requires serialized non-entry', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const other = await h.svc.takeover({ lineage: 'refund-agent' });
  const { occurrence: o } = await h.svc.create(createInput(g1.credential, 'inv-8', 600));
  const entered = await createAndEnter(h, g1.credential, 'inv-8b', 100);
  const rel = (credential: string, id = o.id, requestDigest: string = o.provider.requestDigest) =>
    h.svc.release({ credential, occurrenceId: id, requestDigest });
  h.clock.advance(10 * 60_000); // past the entry deadline: still no proof of non-entry by itself
  assert.equal((await h.svc.getOccurrence(o.id)).occurrence.phase, 'reserved');
  await expectCode(h.svc.enter({ credential: g1.credential, occurrenceId: o.id }), 'entry_deadline_passed');
  const before = await snapshot(h);
  await expectCode(rel(other.credential), 'release_not_owner');
  await expectCode(rel(g1.credential, entered.occurrence.id, entered.requestDigest), 'already_entered');
  assert.equal(await snapshot(h), before);
  const released = await rel(g1.credential);
  assert.equal(released.phase, 'released');
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 100]);
  await expectCode(rel(g1.credential), 'not_reserved');
  const again = await h.svc.create(createInput(g1.credential, 'inv-8', 600));
  assert.deepEqual([again.created, again.occurrence.phase], [false, 'released']);
  assert.equal((await h.svc.getAuthority('payouts')).reserved, 0);
  // The re-issue is a NEW occurrence the domain mints, linked to the tombstone.
  const re = await h.svc.reissue({
    credential: g1.credential,
    occurrenceId: o.id,
    creationKey: 'inv-8-reissue',
  });
  assert.deepEqual([re.created, re.occurrence.reissueOf, re.occurrence.phase], [true, o.id, 'reserved']);
  assert.notEqual(re.occurrence.provider.nativeKey, o.provider.nativeKey);
  assert.equal(re.occurrence.provider.requestDigest, o.provider.requestDigest);
  await expectCode(
    h.svc.reissue({ credential: g1.credential, occurrenceId: entered.occurrence.id, creationKey: 'x' }),
    'reissue_invalid',
  );
  // One tombstone, one successor: a second reissue under another key is refused, state unchanged.
  const once = await snapshot(h);
  await expectCode(
    h.svc.reissue({ credential: g1.credential, occurrenceId: o.id, creationKey: 'inv-8-reissue-2' }),
    'reissue_invalid',
  );
  assert.equal(await snapshot(h), once);
  const tomb = await h.svc.getOccurrence(o.id);
  assert.deepEqual(
    tomb.evidence.map((e) => e.type),
    ['occurrence_created', 'released', 'reissued_as'],
  );
});

test('AOC-REQ-009 status-source truth and missing knowledge', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  await h.svc.registerProfile(
    paymentsProfile({
      version: 'private-1',
      request: { members: ['amount', 'currency', 'destination'], required: ['amount'], private: true },
    }),
  );
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-9');
  const at = () => h.clock.wallMs();
  const unmapped = await h.svc.observe(observation(ticket, 'processing', at()));
  const unavailable = await h.svc.observe(observation(ticket, null, at(), { result: 'unavailable' }));
  h.clock.advance(600_000);
  const stale = await h.svc.observe(observation(ticket, 'succeeded', at() - 301_000));
  const beforeEntry = await h.svc.observe(observation(ticket, 'succeeded', at() - 700_000));
  assert.equal(beforeEntry.missingKnowledge, 'binding_mismatch');
  assert.deepEqual(
    [unmapped, unavailable, stale].map((r) => r.missingKnowledge),
    ['unmapped_status', 'unavailable', 'stale'],
  );
  assert.equal(stale.occurrence.phase, 'entered');
  // Native response and interpretation are kept apart.
  const answer = { id: 'pay_native01', status: 'processing', amount: 1000 };
  await h.svc.observe(observation(ticket, 'processing', at(), { response: answer }));
  const last = (await h.svc.getOccurrence(ticket.occurrence.id)).evidence
    .filter((e) => e.type === 'observation_recorded')
    .at(-1);
  const body = last?.body as {
    observation: { response: unknown; nativeStatus: string };
    interpretation: { missingKnowledge: string };
  };
  assert.deepEqual(body.observation.response, answer);
  assert.equal(body.interpretation.missingKnowledge, 'unmapped_status');
  // A private profile keeps only the digest of the provider's answer.
  const priv = await h.svc.create({
    ...createInput(g1.credential, 'inv-9p'),
    provider: { profileId: 'sandbox-payments', profileVersion: 'private-1' },
  });
  const pt = await h.svc.enter({ credential: g1.credential, occurrenceId: priv.occurrence.id });
  await h.svc.observe(
    observation(pt, 'succeeded', at(), { response: { id: 'pay_private1', status: 'succeeded' } }),
  );
  const pe = (await h.svc.getOccurrence(pt.occurrence.id)).evidence.find(
    (e) => e.type === 'observation_recorded',
  );
  const pbody = pe?.body as { observation: Record<string, unknown> };
  assert.equal('response' in pbody.observation, false);
  assert.match(String(pbody.observation['responseDigest']), /^sha-256:/);
  // observe refuses malformed input and answers from the future.
  await expectCode(
    h.svc.observe({ ...observation(ticket, 'succeeded', at()), extra: 1 } as never),
    'observation_invalid',
  );
  await expectCode(h.svc.observe(observation(ticket, 'succeeded', at() + 3_600_000)), 'observation_invalid');
});

test('AOC-REQ-010 refuse rebinding and duplicate attempts (SIMULATED provider)', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const provider = new SimulatedProvider();
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-10');
  provider.send(ticket);
  const results = await Promise.allSettled(
    Array.from({ length: 8 }, () =>
      h.svc.enter({ credential: g1.credential, occurrenceId: ticket.occurrence.id }),
    ),
  );
  assert.ok(
    results.every(
      (r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'already_entered',
    ),
  );
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  await expectCode(
    h.svc.enter({ credential: g2.credential, occurrenceId: ticket.occurrence.id }),
    'already_entered',
  );
  await h.svc.observe(observation(ticket, 'succeeded', h.clock.wallMs()));
  await expectCode(
    h.svc.enter({ credential: g2.credential, occurrenceId: ticket.occurrence.id }),
    'already_entered',
  );
  const same = await h.svc.create(createInput(g2.credential, 'inv-10'));
  assert.equal(same.occurrence.id, ticket.occurrence.id);
  await expectCode(h.svc.create(createInput(g2.credential, 'inv-10', 999)), 'creation_binding_conflict');
  assert.equal(await entryCount(h, ticket.occurrence.id), 1);
  assert.equal(provider.totalCalls, 1);
});

test('AOC-REQ-011 provider-specific terminal interpretation', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const expectations: [string, string, string, string][] = [
    ['pending', 'accepted', 'unresolved', 'entered'],
    ['succeeded', 'success', 'occurred', 'resolved'],
    ['failed', 'final_failure', 'unresolved', 'entered'],
    ['canceled_before_processing', 'not_accepted', 'none_confirmed', 'resolved'],
    ['FAILED', 'unknown', 'unresolved', 'entered'],
  ];
  for (const [status, outcome, effect, phase] of expectations) {
    const ticket = await createAndEnter(h, g1.credential, `inv-11-${status}`, 10);
    const r = await h.svc.observe(observation(ticket, status, h.clock.wallMs()));
    assert.deepEqual(
      [r.occurrence.outcome, r.occurrence.effect, r.occurrence.phase],
      [outcome, effect, phase],
      status,
    );
  }
  const bads: JsonObject[] = [
    { succeeded: { interpretation: 'success', establishesNoEffect: true } },
    { failed: { interpretation: 'final_failure' } },
    { failed: { interpretation: 'failed', establishesNoEffect: false } },
  ];
  for (const bad of bads) {
    await expectCode(
      h.svc.registerProfile(paymentsProfile({ version: 'bad', statuses: bad })),
      'profile_invalid',
    );
  }
  t.diagnostic(`checked ${expectations.length} native statuses`);
});

test('AOC-REQ-012 provider entry consumes authority', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h, { total: 3_000 });
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const created = await h.svc.create(createInput(g1.credential, 'inv-12', 2_000));
  await expectCode(
    h.svc.create(createInput(g1.credential, 'inv-12-too-much', 1_001)),
    'authority_insufficient',
  );
  const ticket = await h.svc.enter({ credential: g1.credential, occurrenceId: created.occurrence.id });
  // Consumed before anything is sent.
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 2_000]);
  const r = await h.svc.observe(observation(ticket, 'canceled_before_processing', h.clock.wallMs()));
  assert.equal(r.occurrence.effect, 'none_confirmed');
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [0, 2_000]);
  await expectCode(
    h.svc.release({
      credential: g1.credential,
      occurrenceId: ticket.occurrence.id,
      requestDigest: ticket.requestDigest,
    }),
    'already_entered',
  );
  // A new attempt needs its own authority: only 1,000 is left.
  await expectCode(
    h.svc.remedy({
      ...createInput(g1.credential, 'inv-12-replacement', 2_000),
      remedyOf: ticket.occurrence.id,
      kind: 'replacement',
    }),
    'authority_insufficient',
  );
  const small = await h.svc.remedy({
    ...createInput(g1.credential, 'inv-12-replacement', 1_000),
    remedyOf: ticket.occurrence.id,
    kind: 'replacement',
  });
  assert.equal(small.occurrence.authority.amount, 1_000);
  assert.deepEqual(await h.svc.getAuthority('payouts').then((a) => [a.reserved, a.consumed]), [1_000, 2_000]);
});

test('AOC-REQ-013 no migration or format-equivalence claim', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  // No command accepts a copied record: ids, states, generations and bindings are the domain's.
  const base = createInput(g1.credential, 'inv-13');
  for (const copied of [
    { id: 'occ_x' },
    { phase: 'entered' },
    { capturedGeneration: 1 },
    { providerBinding: {} },
    { consumed: 0 },
  ]) {
    await expectCode(h.svc.create({ ...base, ...copied }), 'input_invalid');
  }
  const names = Object.getOwnPropertyNames(OccurrencesService.prototype);
  assert.equal(
    names.some((n) => /import|migrat|copy|transfer|adopt/i.test(n)),
    false,
  );
  // Stored together, native identifiers keep their own types; equal text is not equivalence.
  const o = await h.svc.create({
    ...base,
    linkedIds: [
      { type: 'aadp_permit_id', value: 'X-1' },
      { type: 'bcr_operation_id', value: 'X-1' },
    ],
  });
  assert.deepEqual(
    o.occurrence.linkedIds.filter((l) => l.value === 'X-1').map((l) => l.type),
    ['aadp_permit_id', 'bcr_operation_id'],
  );
  const rows = await h.engine.read((ex) =>
    ex.all<{ type: string }>("SELECT type FROM aoc_linked_ids WHERE value = 'X-1' ORDER BY type"),
  );
  assert.deepEqual(
    rows.map((r) => r.type),
    ['aadp_permit_id', 'bcr_operation_id'],
  );
});
