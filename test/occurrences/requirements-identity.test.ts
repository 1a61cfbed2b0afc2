/** AOC-REQ-001 … 006 (aoc-operation-continuity.txt, Continuity Requirements), on a real SQLite file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { digestBytes } from '../../src/core/digest.js';
import {
  ed25519Kid,
  exportPrivatePem,
  generateEd25519KeyPair,
  importEd25519PrivateKey,
  publicKeyRaw,
} from '../../src/core/ed25519.js';
import { openOccurrencesOnSqlite, verifyEvidence } from '../../src/store/index.js';
import {
  acknowledgement,
  createAndEnter,
  createInput,
  domainConfig,
  eventTypes,
  expectCode,
  observation,
  openHarness,
  paymentsProfile,
  setupDomain,
  SimulatedProvider,
  snapshot,
} from './helpers.js';

test('AOC-REQ-001 one authoritative coordination domain, bypass paths disclosed', async (t) => {
  const h = await openHarness(t);
  const domain = await h.svc.configureDomain(domainConfig() as never);
  const pem = readFileSync(`${h.path}.domain-key.pem`, 'utf8');
  assert.equal(statSync(`${h.path}.domain-key.pem`).mode & 0o777, 0o600);
  const key = importEd25519PrivateKey({ pem });
  assert.equal(domain.kid, ed25519Kid(key));
  assert.equal(domain.publicKey, publicKeyRaw(key).toString('base64url'));
  assert.equal(await snapshot(h).then((s) => s.includes(pem.slice(40, 80))), false);
  assert.equal(domain.bypassPaths.length, 6);
  // A second domain id on the same store is refused; so is an incomplete disclosure.
  await expectCode(
    h.svc.configureDomain({ ...domainConfig(), id: 'other-domain' } as never),
    'domain_conflict',
  );
  const partial = domainConfig();
  await expectCode(
    h.svc.configureDomain({
      ...partial,
      bypassPaths: (partial['bypassPaths'] as unknown[]).slice(1),
    } as never),
    'input_invalid',
  );
  const dup = domainConfig();
  const paths = dup['bypassPaths'] as { kind: string }[];
  await expectCode(
    h.svc.configureDomain({ ...dup, bypassPaths: [...paths.slice(0, 5), { ...paths[0] }] } as never),
    'input_invalid',
  );
  // Changing limits is a recorded domain transition; the key and id stay.
  const changed = await h.svc.configureDomain(domainConfig({ maxPendingPerLineage: 3 }) as never);
  assert.equal(changed.limits.maxPendingPerLineage, 3);
  assert.equal(changed.kid, domain.kid);
  // The key file is part of the domain: another key, or a key others can read, is refused at open.
  const keyFile = `${h.path}.domain-key.pem`;
  chmodSync(keyFile, 0o644);
  await expectCode(openOccurrencesOnSqlite(h.path), 'key_invalid');
  writeFileSync(keyFile, exportPrivatePem(generateEd25519KeyPair().privateKey), { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  await expectCode(openOccurrencesOnSqlite(h.path), 'domain_conflict');
});

test('AOC-REQ-002 stable occurrence identity without a new namespace', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const input = {
    ...createInput(g1.credential, 'business-key-1'),
    linkedIds: [
      { type: 'aadp_request_id', value: 'same-text' },
      { type: 'bcr_operation_id', value: 'same-text' },
      { type: 'succession_receipt_id', value: 'sr-1' },
    ] as const,
  };
  const first = await h.svc.create(input);
  const id = first.occurrence.id;
  assert.notEqual(id, 'business-key-1'); // the domain assigns the identifier
  assert.match(id, /^occ_[0-9a-f]{32}$/);
  // Equal text under two types stays two typed identifiers, never one.
  assert.deepEqual(
    first.occurrence.linkedIds.map((l) => l.type),
    ['aadp_request_id', 'bcr_operation_id', 'succession_receipt_id', 'provider_key'],
  );
  // A Succession Receipt may carry several commitments; AADP ids are single-use.
  const second = await h.svc.create({
    ...createInput(g1.credential, 'business-key-2'),
    linkedIds: [{ type: 'succession_receipt_id', value: 'sr-1' }],
  });
  assert.equal(second.created, true);
  await expectCode(
    h.svc.create({
      ...createInput(g1.credential, 'business-key-3'),
      linkedIds: [{ type: 'aadp_request_id', value: 'same-text' }],
    }),
    'linked_identifier_conflict',
  );
  const ticket = await h.svc.enter({ credential: g1.credential, occurrenceId: id });
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  await h.svc.observe(observation(ticket, 'succeeded', h.clock.wallMs()));
  const replay = await h.svc.create({ ...input, credential: g2.credential });
  assert.deepEqual([replay.created, replay.occurrence.id, replay.occurrence.phase], [false, id, 'resolved']);
  await expectCode(h.svc.create({ ...input, id: 'occ_mine' } as never), 'input_invalid');
});

test('AOC-REQ-003 immutable provider binding', async (t) => {
  const h = await openHarness(t);
  const registered = await setupDomain(h);
  await expectCode(h.svc.registerProfile(paymentsProfile({ account: 'acct_changed' })), 'profile_conflict');
  assert.equal((await h.svc.registerProfile(paymentsProfile())).digest, registered.digest);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const created = await h.svc.create(createInput(g1.credential, 'inv-3'));
  const bound = created.occurrence.provider;
  assert.equal(bound.profileDigest, registered.digest);
  assert.equal(bound.providerReference, null);
  assert.ok(bound.nativeKey !== null && bound.requestDigest.startsWith('sha-256:'));
  const ticket = await h.svc.enter({ credential: g1.credential, occurrenceId: created.occurrence.id });
  assert.deepEqual({ ...bound }, { ...ticket.occurrence.provider }, 'entry does not touch the binding');
  await h.svc.recordAcknowledgement(
    acknowledgement(ticket, { id: 'pay_first001', status: 'pending' }, h.clock.wallMs()),
  );
  // The reference is written once; a different one later is a binding mismatch.
  const later = await h.svc.recordAcknowledgement(
    acknowledgement(ticket, { id: 'pay_second02', status: 'succeeded' }, h.clock.wallMs()),
  );
  assert.equal(later.missingKnowledge, 'binding_mismatch');
  const final = (await h.svc.getOccurrence(ticket.occurrence.id)).occurrence;
  assert.deepEqual(final.provider, { ...bound, providerReference: 'pay_first001' });
  assert.equal(final.phase, 'entered');
});

test('AOC-REQ-004 append-only attempt evidence', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const created = await h.svc.create(createInput(g1.credential, 'inv-4'));
  const stages: (readonly unknown[])[] = [(await h.svc.getOccurrence(created.occurrence.id)).evidence];
  const ticket = await h.svc.enter({ credential: g1.credential, occurrenceId: created.occurrence.id });
  stages.push((await h.svc.getOccurrence(ticket.occurrence.id)).evidence);
  await h.svc.recordAcknowledgement(
    acknowledgement(ticket, { id: 'pay_ack00001', status: 'pending' }, h.clock.wallMs()),
  );
  stages.push((await h.svc.getOccurrence(ticket.occurrence.id)).evidence);
  await h.svc.observe(observation(ticket, 'succeeded', h.clock.wallMs()));
  stages.push((await h.svc.getOccurrence(ticket.occurrence.id)).evidence);
  // Each stage's evidence is a prefix of the next: nothing is overwritten.
  for (let i = 1; i < stages.length; i++) {
    assert.deepEqual(stages[i]?.slice(0, stages[i - 1]?.length), stages[i - 1]);
  }
  assert.deepEqual(await eventTypes(h, ticket.occurrence.id), [
    'occurrence_created', // preparation, no provider entry
    'provider_entered', // serialized entry, no acknowledgement yet
    'observation_recorded', // the acknowledgement …
    'provider_reference_bound', // … and its native reference
    'state_changed',
    'observation_recorded', // a status observation
    'state_changed', // the terminal decision
  ]);
  const report = await verifyEvidence(h.engine);
  assert.equal(report.ok, true);
  t.diagnostic(`verified ${report.events} events in ${report.subjects} chains`);
});

test('AOC-REQ-005 preserve uncertainty through replacement', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const ticket = await createAndEnter(h, g1.credential, 'inv-5', 1_500);
  const detailBefore = await h.svc.getOccurrence(ticket.occurrence.id);
  const authorityBefore = await h.svc.getAuthority('payouts');
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const handed = g2.unresolved[0];
  assert.equal(g2.unresolved.length, 1);
  assert.deepEqual(handed, detailBefore.occurrence);
  const detailAfter = await h.svc.getOccurrence(ticket.occurrence.id);
  assert.deepEqual(detailAfter.occurrence, detailBefore.occurrence);
  assert.deepEqual(detailAfter.evidence, detailBefore.evidence);
  assert.deepEqual(await h.svc.getAuthority('payouts'), authorityBefore);
  assert.deepEqual(
    (await h.svc.listUnresolved('invoice-agent')).map((o) => o.id),
    [ticket.occurrence.id],
  );
  await expectCode(
    h.svc.enter({ credential: g2.credential, occurrenceId: ticket.occurrence.id }),
    'already_entered',
  );
  // The delivery itself is evidence on the lineage's chain.
  const lineage = await h.svc.getLineage('invoice-agent');
  const delivered = lineage.evidence.at(-1)?.body as { delivered: { unresolved: string[] } };
  assert.deepEqual(delivered.delivered.unresolved, [ticket.occurrence.id]);
});

test('AOC-REQ-006 fence retired executors', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const provider = new SimulatedProvider();
  const gens = [];
  for (let i = 0; i < 3; i++) gens.push(await h.svc.takeover({ lineage: 'invoice-agent' }));
  assert.deepEqual(
    gens.map((g) => g.generation),
    [1, 2, 3],
  );
  assert.deepEqual(
    gens.map((g) => g.retiredGeneration),
    [null, 1, 2],
  );
  const [g1, g2, g3] = gens as [(typeof gens)[0], (typeof gens)[0], (typeof gens)[0]];
  const mine = await h.svc.create(createInput(g3.credential, 'inv-6'));
  const before = await snapshot(h);
  for (const stale of [g1, g2]) {
    await expectCode(h.svc.create(createInput(stale.credential, 'inv-6-stale')), 'generation_retired');
    await expectCode(
      h.svc.enter({ credential: stale.credential, occurrenceId: mine.occurrence.id }),
      'generation_retired',
    );
    await expectCode(
      h.svc.release({
        credential: stale.credential,
        occurrenceId: mine.occurrence.id,
        requestDigest: mine.occurrence.provider.requestDigest,
      }),
      'generation_retired',
    );
    await expectCode(
      h.svc.reissue({ credential: stale.credential, occurrenceId: mine.occurrence.id, creationKey: 'x' }),
      'generation_retired',
    );
    await expectCode(
      h.svc.remedy({ ...createInput(stale.credential, 'r'), remedyOf: mine.occurrence.id, kind: 'refund' }),
      'generation_retired',
    );
  }
  await expectCode(
    h.svc.enter({ credential: 'A'.repeat(43), occurrenceId: mine.occurrence.id }),
    'unauthenticated',
  );
  assert.equal(await snapshot(h), before);
  provider.send(await h.svc.enter({ credential: g3.credential, occurrenceId: mine.occurrence.id }));
  // Only digests of the credentials are stored, one per (lineage, generation).
  const rows = await h.engine.read((ex) =>
    ex.all<{ secret_digest: string; generation: number }>('SELECT * FROM aoc_credentials'),
  );
  assert.deepEqual(rows.map((r) => Number(r.generation)).sort(), [1, 2, 3]);
  assert.deepEqual(
    rows.map((r) => r.secret_digest).sort(),
    gens.map((g) => digestBytes(g.credential)).sort(),
  );
  const dump = await snapshot(h);
  for (const g of gens) assert.equal(dump.includes(g.credential), false);
  // Limits must be finite: a domain without them is refused.
  const bad = domainConfig();
  await expectCode(
    h.svc.configureDomain({
      ...bad,
      limits: { ...(bad['limits'] as object), maxInFlightPerDomain: 0 },
    } as never),
    'input_invalid',
  );
  assert.equal(provider.totalCalls, 1);
});

test('AOC-REQ-005 an occurrence is queryable alone (getOccurrenceView) exactly as in its detail', async (t) => {
  const h = await openHarness(t);
  await setupDomain(h);
  const g1 = await h.svc.takeover({ lineage: 'invoice-agent' });
  const { occurrence } = await h.svc.create(createInput(g1.credential, 'inv-view', 1_000));
  const detail = await h.svc.getOccurrence(occurrence.id);
  assert.deepEqual(await h.svc.getOccurrenceView(occurrence.id), detail.occurrence);
  assert.ok(detail.evidence.length > 0, 'the detail carries the evidence the view leaves out');
  await expectCode(h.svc.getOccurrenceView('occ_missing'), 'occurrence_not_found');
  await expectCode(h.svc.getOccurrenceView(''), 'input_invalid');
});
