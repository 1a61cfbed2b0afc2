/**
 * The SET replay table `msn_sets_seen` stays bounded (C-A18; migration 030), on both engines: a
 * row whose SET's `exp` lies more than `SETS_SEEN_RETAIN_MS` back is deleted by the prune every
 * `SETS_SEEN_PRUNE_EVERY`-th new SET runs in its own transaction — such a SET is refused as
 * expired before its jti is ever looked up — while a SET still inside its acceptance window keeps
 * its row, so its replay is still a duplicate (same bytes) or a conflict (other bytes). Rows
 * written before migration 030 carry no `exp` and are kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeDefect } from '../../src/missions/jwt-parts.js';
import type { MissionsService } from '../../src/missions/index.js';
import type { SqlExecutor } from '../../src/store/engine.js';
import { migrate } from '../../src/store/migrations.js';
import { migrations } from '../../src/store/migrations/index.js';
import { IssuerRegistry } from '../../src/store/missions-issuers.js';
import {
  pruneSetsSeen,
  SETS_SEEN_PRUNE_EVERY,
  SETS_SEEN_RETAIN_MS,
} from '../../src/store/missions-sets-seen.js';
import { enginesUnderTest } from '../store/engines.js';
import { ORIGIN, T0, verifiedSignal } from './fixtures.js';
import { world } from './world.js';

const engines = await enginesUnderTest();
const T0S = Math.floor(T0 / 1000);

const results = (answers: Awaited<ReturnType<MissionsService['applyVerifiedSignals']>>) =>
  answers.map((a) => (a.ok ? a.result : 'failed'));

async function jtis(ex: SqlExecutor): Promise<string[]> {
  const rows = await ex.all<{ jti: string }>('SELECT jti FROM msn_sets_seen ORDER BY jti');
  return rows.map((r) => r.jti);
}

for (const e of engines) {
  test(`[${e.name}] C-A18: a replay row past its SET's exp + retention is pruned; one inside the window still refuses the replay`, async (t) => {
    const w = await world(t, e);
    // `old` expires a minute after T0; `live` twenty minutes after (a long-lived SET).
    const old = verifiedSignal('active', 1, T0, { jti: 'old', digest: 'sha-256:old', expiresAt: T0S + 60 });
    const live = verifiedSignal('suspended', 2, T0 + 1, {
      jti: 'live',
      digest: 'sha-256:live',
      expiresAt: T0S + 20 * 60,
    });
    assert.deepEqual(results(await w.harness.applyVerifiedSignals([old, live])), ['applied', 'applied']);

    w.clock.advance(60_000 + SETS_SEEN_RETAIN_MS + 1_000);
    const now = w.clock.wallMs();
    assert.equal(timeDefect(old.issuedAt, old.expiresAt, now)?.check, 'exp', 'old would be refused first');
    assert.equal(timeDefect(live.issuedAt, live.expiresAt, now), undefined, 'live is still accepted');
    // Enough new SETs that this process's prune runs at least once now, wherever its count stood.
    const fresh = Array.from({ length: SETS_SEEN_PRUNE_EVERY }, (_, i) =>
      verifiedSignal('active', 1, now, {
        jti: `fresh-${String(i).padStart(3, '0')}`,
        digest: `sha-256:f${i}`,
        expiresAt: Math.floor(now / 1000) + 60,
      }),
    );
    const answers = results(await w.harness.applyVerifiedSignals(fresh));
    assert.ok(
      answers.every((a) => a === 'ignored'),
      'recorded (older version than the view)',
    );

    const left = await w.store.engine.read(jtis);
    assert.ok(!left.includes('old'), 'the row past exp + retention is gone');
    assert.ok(left.includes('live'), 'the row of a SET still accepted is kept');
    assert.equal(left.length, 1 + SETS_SEEN_PRUNE_EVERY);
    assert.deepEqual(
      results(await w.harness.applyVerifiedSignals([live, { ...live, digest: 'sha-256:other' }])),
      ['duplicate', 'replay_conflict'],
      'a replay inside the window is still refused',
    );
    assert.deepEqual(
      results(await w.harness.applyVerifiedSignals([fresh[0]!])),
      ['duplicate'],
      'and so is one of a SET recorded in the pruning transaction',
    );
  });

  test(`[${e.name}] migration 30: rows from before it (no exp) are kept; stream SETs record their exp and are pruned too`, async (t) => {
    const store = await e.open(t);
    await migrate(store.engine, { list: migrations.filter((m) => m.id < 30) });
    await store.engine.transaction((tx) =>
      tx.run('INSERT INTO msn_sets_seen (iss, jti, digest, received_at) VALUES (?, ?, ?, ?)', [
        ORIGIN,
        'legacy',
        'sha-256:legacy',
        T0,
      ]),
    );
    // Up to 30 only: what this test is about is migration 30 meeting rows written before it.
    const result = await migrate(store.engine, { list: migrations.filter((m) => m.id <= 30) });
    assert.deepEqual(
      result.applied.map((m) => m.id),
      [30],
    );
    const registry = new IssuerRegistry(store.engine);
    assert.equal(await registry.recordStreamSet(ORIGIN, 'stream-1', 'sha-256:s1', T0, T0 + 60_000), 'new');
    assert.equal(await registry.recordStreamSet(ORIGIN, 'stream-2', 'sha-256:s2', T0, T0 + 3_600_000), 'new');
    const exp = await store.engine.read((ex) =>
      ex.get<{ expires_at: number | string }>('SELECT expires_at FROM msn_sets_seen WHERE jti = ?', [
        'stream-1',
      ]),
    );
    assert.equal(Number(exp?.expires_at), T0 + 60_000);

    // stream-1's exp + retention is T0 + 60 s + SETS_SEEN_RETAIN_MS: kept up to it, pruned after.
    const at = T0 + 60_000 + SETS_SEEN_RETAIN_MS + 1;
    assert.equal(await store.engine.transaction((tx) => pruneSetsSeen(tx, at - 1)), 0, 'kept at the edge');
    assert.equal(await store.engine.transaction((tx) => pruneSetsSeen(tx, at)), 1);
    assert.deepEqual(await store.engine.read(jtis), ['legacy', 'stream-2']);
    assert.equal(
      await registry.recordStreamSet(ORIGIN, 'stream-2', 'sha-256:s2', at, T0 + 3_600_000),
      'same',
    );
  });
}
