/**
 * FIC_obs criterion C5 over a governed store, on both engines (C-B7 C5, B7-10): an occurrence
 * gated to a Mission (its harness gate row) counts in v only when a `mission_checked` answering
 * `continue` for that Mission precedes its entry. An entry that went around the gate — here a
 * second occurrences service on the same store whose Mission gate checks nothing (as a broken or
 * older build's would; Baton's own ungoverned gate refuses instead) — is in n, not v.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import { occurrencesUnitOfWork, type MissionGate } from '../../src/store/index.js';
import { heldWorkItems } from '../../src/store/missions-gate.js';
import { verifiedSignal, T0 } from '../missions/fixtures.js';
import { enginesUnderTest } from '../store/engines.js';
import { governedWorld, reserveGoverned } from './governed.js';

const engines = await enginesUnderTest();

for (const e of engines) {
  test(`[${e.name}] B7-10 C5: a Mission-gated occurrence entered without a Mission check is in n but not in v`, async (t) => {
    const w = await governedWorld(t, e);
    await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
    const { ids, enter, credential } = await reserveGoverned(w, ['checked', 'bypassed']);
    const [checked, bypassed] = ids as [string, string];
    w.clock.advance(1_000);
    await enter(checked);
    // The same store, entered through a gate that checks nothing: no `mission_checked` is written.
    const checksNothing: MissionGate = {
      check: () => Promise.resolve(undefined),
      link: () => Promise.resolve(),
      held: (tx, lineage) => heldWorkItems(tx, lineage),
    };
    const ungated = new OccurrencesService({
      uow: occurrencesUnitOfWork(w.store.engine, checksNothing),
      domainKey: { kid: w.key.kid, publicKey: publicKeyRaw(w.key.publicKey).toString('base64url') },
      clock: w.clock,
    });
    await ungated.enter({ credential, occurrenceId: bypassed });

    const f = await w.continuity.fic();
    assert.deepEqual([f.n, f.v], [2, 1]);
    assert.deepEqual(
      f.failures.map((x) => [x.occurrence, x.failed]),
      [[bypassed, ['C5']]],
    );
  });
}
