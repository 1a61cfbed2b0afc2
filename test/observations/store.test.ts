/**
 * Continuity records in the store, on both engines (B7 8, 10, 12, 18, 21; OBS-08, OBS-16).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { canonicalize } from '../../src/core/jcs.js';
import { isBatonError } from '../../src/core/errors.js';
import { exportEd25519PublicJwk, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import {
  AUTHORITY_UNDECIDED,
  LOCAL_PRODUCER,
  MEMORY_REASON,
  OBSERVATION_JWS_TYP,
  OBSERVATION_PROFILE,
  handoffRecordId,
  signRecord,
  verifyRecord,
  type ObservationRecord,
} from '../../src/observations/index.js';
import { ProducerKeys } from '../../src/store/index.js';
import { enginesUnderTest } from '../store/engines.js';
import { createInput, T0 } from '../occurrences/helpers.js';
import { correctionEvidence, decidedRecord, enterSome, prepare } from './support.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] B3.3 incremental projection skips fully recorded lineages (counted as existing) and still writes a new generation's record; a full one re-derives and reports an altered event as a conflict`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'A' });
    await p.svc.takeover({ lineage: 'B' });
    assert.equal((await p.continuity.project()).created, 2);
    await p.svc.takeover({ lineage: 'B' });
    const inc = await p.continuity.project('t', undefined, { incremental: true });
    assert.deepEqual([inc.created, inc.existing, inc.conflicts], [1, 2, []], 'A skipped, B re-derived');
    await p.store.tamper(
      "UPDATE evidence_events SET actor = 'someone-else' WHERE subject = ? AND type = 'generation_advanced'",
      ['lineage:A'],
    );
    const quiet = await p.continuity.project('t', undefined, { incremental: true });
    assert.deepEqual(quiet.conflicts, [], 'incremental does not re-derive A');
    const full = await p.continuity.project();
    assert.deepEqual(full.conflicts, [handoffRecordId('test-domain', 'A', 1)]);
  });

  test(`[${e.name}] B7-12 OBS-08: one handoff record per generation, however often the projector runs`, async (t) => {
    const p = await prepare(t, e);
    await enterSome(p, 'invoice-agent', 1);
    await p.svc.takeover({ lineage: 'invoice-agent' });
    const first = await p.continuity.project();
    const second = await p.continuity.project();
    assert.deepEqual([first.created, first.existing, first.conflicts], [2, 0, []]);
    assert.deepEqual([second.created, second.existing, second.conflicts], [0, 2, []]);
    const handoffs = await p.continuity.list({ eventType: 'handoff' });
    assert.equal(handoffs.length, 2);
    const g2 = handoffs.find((h) => h.record.authority_epoch === 2);
    assert.ok(g2 !== undefined);
    assert.equal(g2.record.record_id, handoffRecordId('test-domain', 'invoice-agent', 2));
    const byDim = Object.fromEntries(g2.record.invariants.map((i) => [i.dimension, i]));
    assert.equal(byDim['memory']?.status, 'UNKNOWN');
    assert.equal(byDim['memory']?.reason, MEMORY_REASON);
    assert.equal(byDim['authority']?.status, 'MATCH');
    assert.equal(byDim['lineage']?.status, 'MATCH');
    assert.equal(byDim['state']?.status, 'MATCH', 'the entered occurrence was delivered');
    assert.match(g2.record.source_runtime ?? '', /generation:1$/);
    // The signature verifies for the domain itself as audience.
    const verified = await verifyRecord(g2.record, {
      key: p.key.publicKey,
      audience: 'urn:baton:test-domain',
      now: T0 + 60_000,
    });
    assert.equal(verified.record.record_id, g2.record.record_id);
    assert.equal(OBSERVATION_JWS_TYP, 'baton-continuity-observation+json');
  });

  test(`[${e.name}] B3.3 OBS-13: an authority created by the same actor in the same millisecond just before a takeover leaves its authority UNKNOWN (transaction_unidentified), never a guessed MISMATCH`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.createAuthority({ id: 'refunds', unit: 'EUR-cents', total: 10 }, 'operator');
    await p.svc.takeover({ lineage: 'L' }, 'operator');
    const [created, advanced] = await p.store.engine
      .read((ex) =>
        ex.all<{ seq: number | string; type: string; at: number | string; actor: string }>(
          'SELECT seq, type, at, actor FROM evidence_events ORDER BY seq DESC LIMIT 2',
        ),
      )
      .then((rows) => rows.reverse());
    assert.deepEqual(
      [created?.type, advanced?.type, Number(advanced?.seq) - Number(created?.seq)],
      ['authority_created', 'generation_advanced', 1],
      'the case: adjacent events, two transactions',
    );
    assert.deepEqual([Number(created?.at), created?.actor], [Number(advanced?.at), advanced?.actor]);
    // The same instant by another actor, and a later instant: nothing shares the takeover's.
    p.clock.advance(1);
    await p.svc.createAuthority({ id: 'fees', unit: 'EUR-cents', total: 10 }, 'admin');
    await p.svc.takeover({ lineage: 'M' }, 'operator');
    p.clock.advance(1);
    await p.svc.takeover({ lineage: 'N' }, 'operator');
    await p.continuity.project();
    const authority = async (lineage: string) =>
      (
        await p.continuity.get('urn:baton:test-domain', handoffRecordId('test-domain', lineage, 1))
      )?.record.record.invariants.find((i) => i.dimension === 'authority');
    const l = await authority('L');
    assert.equal(l?.status, 'UNKNOWN');
    assert.equal(l?.reason, AUTHORITY_UNDECIDED);
    assert.equal((await authority('M'))?.status, 'MATCH');
    assert.equal((await authority('N'))?.status, 'MATCH');
  });

  test(`[${e.name}] B7-12: the same facts give the same bytes (a second store, same key and clock)`, async (t) => {
    const a = await prepare(t, e);
    await a.svc.takeover({ lineage: 'L' });
    await a.continuity.project();
    const [stored] = await a.continuity.list();
    assert.ok(stored !== undefined);
    // Re-projecting from a fresh read produces byte-identical JCS: the insert is an idempotent no-op.
    const again = await a.continuity.project();
    assert.equal(again.existing, 1);
    const [reread] = await a.continuity.list();
    assert.equal(canonicalize(reread?.record), canonicalize(stored.record));
  });

  test(`[${e.name}] B7-8 OBS-08: same record_id with other bytes is 409; a correction appends; raw UPDATE/DELETE fail`, async (t) => {
    const p = await prepare(t, e);
    const original = decidedRecord({ producer: LOCAL_PRODUCER });
    assert.equal((await p.continuity.submit(original, 'operator')).status, 'created');
    assert.equal((await p.continuity.submit(original, 'operator')).status, 'exists');
    await assert.rejects(
      p.continuity.submit({ ...original, limitations: ['changed'] }, 'operator'),
      (err: unknown) => isBatonError(err, 'observation_record_conflict') && err.status === 409,
    );
    const correction = {
      ...original,
      record_id: 'urn:example:record:handoff-42:fix-1',
      event_type: 'correction',
      supersedes: original.record_id,
      analysis_revision: 'r2',
      evidence: [...original.evidence, correctionEvidence('fix-1')],
    } as ObservationRecord;
    await p.continuity.submit(correction, 'operator');
    const chain = await p.continuity.get(LOCAL_PRODUCER, original.record_id);
    assert.ok(chain !== undefined);
    assert.equal(canonicalize(chain.record.record), canonicalize(original), 'the original is unchanged');
    assert.deepEqual(
      chain.corrections.map((c) => c.record_id),
      [correction.record_id],
    );
    const { HANDOFF_PROFILE } = await import('../../src/observations/index.js');
    await p.continuity.registerProfile({ ...HANDOFF_PROFILE, id: 'urn:example:profile' });
    const { putArtifact } = await import('../../src/store/index.js');
    await p.store.engine.transaction((tx) =>
      putArtifact(
        tx,
        { locator: 'urn:baton:a', representation: 'raw', mediaType: 'text/plain', bytes: Buffer.from('x') },
        T0,
      ),
    );
    for (const sql of [
      "UPDATE cop_records SET body = '{}'",
      'DELETE FROM cop_records',
      "UPDATE cop_profiles SET body = '{}'",
      'DELETE FROM cop_artifacts',
    ]) {
      // tamper() may throw before it returns a promise (SQLite): call it inside the async function.
      await assert.rejects(
        async () => p.store.tamper(sql),
        (err: Error) => /append-only/.test(err.message),
        sql,
      );
    }
    assert.equal((await p.continuity.list()).length, 2);
  });

  test(`[${e.name}] OBS-29: registering a profile under Baton’s reserved urn:baton: ids is refused and stores nothing`, async (t) => {
    const p = await prepare(t, e);
    const { HANDOFF_PROFILE } = await import('../../src/observations/index.js');
    for (const id of [HANDOFF_PROFILE.id, 'urn:BATON:test-domain:profile']) {
      await assert.rejects(
        p.continuity.registerProfile({ ...HANDOFF_PROFILE, id, weights_version: 'squatted' }),
        (err: unknown) => isBatonError(err, 'input_invalid') && err.details['path'] === '$.id',
        id,
      );
    }
    const rows = await p.store.engine.read((ex) =>
      ex.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM cop_profiles'),
    );
    assert.equal(Number(rows[0]?.n), 0);
    assert.equal((await p.continuity.cif()).weights_version, HANDOFF_PROFILE.weights_version);
  });

  test(`[${e.name}] B7-21: the same record_id in two namespaces is two records (the local producer, and a producer signing under its pinned key)`, async (t) => {
    const p = await prepare(t, e);
    const acme = generateEd25519KeyPair();
    const keys = [exportEd25519PublicJwk(acme.publicKey)];
    await new ProducerKeys(p.store.engine).pin({ producer: 'urn:example:acme', keys }, 'admin', T0);
    const pinned = p.continuity;
    await pinned.submit(decidedRecord(), 'operator');
    const signed = await signRecord(
      decidedRecord({
        producer: 'urn:example:acme',
        profile: OBSERVATION_PROFILE,
        audience: 'urn:baton:test-domain',
        issued_at: new Date(p.clock.wallMs()).toISOString(),
        expires_at: new Date(p.clock.wallMs() + 3_600_000).toISOString(),
      }),
      acme.privateKey,
    );
    await pinned.submit(signed, 'operator');
    assert.deepEqual((await p.continuity.list()).map((r) => r.producer).sort(), [
      'urn:baton:local',
      'urn:example:acme',
    ]);
  });

  test(`[${e.name}] B7-9 OBS-16/17: FIC_obs over the store, with and without a known universe`, async (t) => {
    const p = await prepare(t, e);
    assert.equal((await p.continuity.fic()).reason, 'undefined_n_zero');
    await enterSome(p, 'L', 3);
    const f = await p.continuity.fic();
    assert.deepEqual([f.n, f.v, f.value?.decimal], [3, 3, '1.000000']);
    assert.equal(f.global_bound, null, 'bypass paths present or unknown: no global bound');
    assert.equal(f.global_reason, 'universe_unknown');
    const q = await prepare(t, e, 'all-absent');
    await enterSome(q, 'L', 4);
    const sampled = await q.continuity.fic({ sample: { size: 2, seed: 's' } });
    assert.deepEqual([sampled.n, sampled.universe], [2, 4]);
    assert.deepEqual(sampled.sample, { size: 2, seed: 's' });
    assert.deepEqual(
      [sampled.global_bound?.lower.decimal, sampled.global_bound?.upper.decimal],
      ['0.500000', '1.000000'],
    );
  });

  test(`[${e.name}] B7-10 OBS-16: one tampered event puts its occurrence in n but not in v`, async (t) => {
    const p = await prepare(t, e);
    const [a, b] = await enterSome(p, 'L', 2);
    assert.ok(a !== undefined && b !== undefined);
    const changed = await p.store.tamper(
      `UPDATE evidence_events SET body = REPLACE(body, '"attempt":1', '"attempt":2') WHERE subject = ? AND type = 'provider_entered'`,
      [`occurrence:${a}`],
    );
    assert.equal(changed, 1);
    const f = await p.continuity.fic();
    assert.deepEqual([f.n, f.v], [2, 1]);
    assert.deepEqual(
      f.failures.map((x) => [x.occurrence, x.failed.includes('C1')]),
      [[a, true]],
    );
  });

  test(`[${e.name}] B3.5 B7-10: FIC_obs's universe comes from the evidence log: an occurrence whose row's entered_at or lineage was edited stays in n and fails C1`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'M' });
    const [a, b, c, d] = await enterSome(p, 'L', 4);
    assert.ok(a !== undefined && b !== undefined && c !== undefined && d !== undefined);
    const rows = async (sql: string, params: (string | number)[]) =>
      assert.equal(await p.store.tamper(sql, params), 1, sql);
    await rows('UPDATE aoc_occurrences SET entered_at = NULL WHERE id = ?', [a]);
    await rows('UPDATE aoc_occurrences SET entered_at = 0 WHERE id = ?', [b]);
    await rows('UPDATE aoc_occurrences SET lineage = ? WHERE id = ?', ['M', c]);
    const failures = (f: { failures: readonly { occurrence: string; failed: readonly string[] }[] }) =>
      Object.fromEntries(f.failures.map((x) => [x.occurrence, x.failed.includes('C1')]));
    const all = await p.continuity.fic();
    assert.deepEqual([all.n, all.v], [4, 1], 'every entry in the log is in n; only the untouched one in v');
    assert.deepEqual(failures(all), { [a]: true, [b]: true, [c]: true });
    const windowed = await p.continuity.fic({ from: T0, to: T0 + 3_600_000 });
    assert.deepEqual([windowed.n, windowed.v], [4, 1], 'a row moved out of the window is still in it');
    const scoped = await p.continuity.fic({ lineage: 'L' });
    assert.deepEqual([scoped.n, scoped.v], [4, 1], 'a row moved to another lineage still counts in L');
    assert.equal((await p.continuity.fic({ lineage: 'M' })).n, 1, 'and, disagreeing, in M as well');
  });

  test(`[${e.name}] B7-18: reconfiguring the domain between generations is an authorized policy update`, async (t) => {
    const p = await prepare(t, e);
    await p.svc.takeover({ lineage: 'L' });
    const { domainConfig } = await import('../occurrences/helpers.js');
    await p.svc.configureDomain(domainConfig({ maxPendingPerLineage: 5 }) as never);
    await p.svc.takeover({ lineage: 'L' });
    await p.continuity.project();
    const g2 = (await p.continuity.list()).find((r) => r.record.authority_epoch === 2);
    const policy = g2?.record.invariants.find((i) => i.dimension === 'policy');
    assert.deepEqual([policy?.status, policy?.reason], ['MATCH', 'authorized_update']);
  });

  test(`[${e.name}] B7-18: an open occurrence whose profile digest was never registered is a policy MISMATCH`, async (t) => {
    const p = await prepare(t, e);
    const g1 = await p.svc.takeover({ lineage: 'L' });
    await p.svc.create(createInput(g1.credential, 'x'));
    // Someone with database access rewrites the registration's digest: the open occurrence's own
    // chain still verifies, and its profile digest is no longer a registered one.
    const changed = await p.store.tamper(
      `UPDATE evidence_events SET body = REPLACE(body, '"digest":"sha-256:', '"digest":"sha-256:X') WHERE type = 'profile_registered'`,
    );
    assert.equal(changed, 1);
    await p.svc.takeover({ lineage: 'L' });
    await p.continuity.project();
    const g2 = (await p.continuity.list()).find((r) => r.record.authority_epoch === 2);
    const policy = g2?.record.invariants.find((i) => i.dimension === 'policy');
    assert.equal(policy?.status, 'MISMATCH');
  });

  test(`[${e.name}] OBS-13 OBS-27: state, policy and authority are UNKNOWN (evidence_chain_unverified), never MATCH, when the chains their facts come from do not verify`, async (t) => {
    const p = await prepare(t, e);
    const statuses = async (lineage: string) => {
      const got = await p.continuity.get('urn:baton:test-domain', handoffRecordId('test-domain', lineage, 2));
      return Object.fromEntries(
        (got?.record.record.invariants ?? []).map((i) => [
          i.dimension,
          `${i.status} ${i.reason ?? ''}`.trim(),
        ]),
      );
    };
    // An occurrence chain of lineage L altered (a field nothing codes): the open set still replays.
    const g1 = await p.svc.takeover({ lineage: 'L' });
    const x = await p.svc.create(createInput(g1.credential, 'x'));
    await p.store.tamper(
      `UPDATE evidence_events SET body = REPLACE(body, '"entryDeadline":', '"entryDeadline":1') WHERE subject = ? AND type = 'occurrence_created'`,
      [`occurrence:${x.occurrence.id}`],
    );
    // Lineage M's chain altered: its first takeover's actor rewritten.
    await p.svc.takeover({ lineage: 'M' });
    await p.store.tamper(
      "UPDATE evidence_events SET actor = 'someone-else' WHERE subject = 'lineage:M' AND type = 'generation_advanced'",
    );
    p.clock.advance(1_000);
    await p.svc.takeover({ lineage: 'L' });
    await p.svc.takeover({ lineage: 'M' });
    await p.continuity.project();
    assert.deepEqual(await statuses('L'), {
      state: 'UNKNOWN evidence_chain_unverified',
      memory: `UNKNOWN ${MEMORY_REASON}`,
      policy: 'UNKNOWN evidence_chain_unverified',
      authority: 'MATCH',
      lineage: 'MATCH',
    });
    assert.deepEqual(await statuses('M'), {
      state: 'UNKNOWN evidence_chain_unverified',
      memory: `UNKNOWN ${MEMORY_REASON}`,
      policy: 'UNKNOWN evidence_chain_unverified',
      authority: 'UNKNOWN evidence_chain_unverified',
      lineage: 'MISMATCH the lineage chain does not verify',
    });
  });
}
