/**
 * Crash tests: a child process runs the lifecycle on a real SQLite file and is killed with SIGKILL
 * right after it reports a committed step; the parent then opens the same file as the successor.
 * The chains must verify, the occurrence must be in the state of the last committed step, the
 * takeover must hand over what is open, and the rules must hold (AOC-REQ-004, -005, -006, -008,
 * -010, -012; AOC-CASE-002, -003).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openOccurrencesOnSqlite, verifyEvidence } from '../../src/store/index.js';
import { entryCount, expectCode, snapshot, type Harness } from './helpers.js';
import { ManualClock } from '../../src/core/clock.js';
import { spawnNode, type WatchedChild } from '../support/child.js';

const fromTs = import.meta.url.endsWith('.ts');
const child = fileURLToPath(new URL(`./fixtures/crash-child.${fromTs ? 'ts' : 'js'}`, import.meta.url));

interface Line {
  step: string;
  id?: string;
  credential?: string;
  reference?: string;
}

function start(path: string, mode: 'step' | 'loop'): WatchedChild {
  const args = fromTs ? ['--import', 'tsx', child, path, mode] : [child, path, mode];
  return spawnNode(`crash-child (${mode})`, args, { stdin: true });
}

async function killed(proc: WatchedChild): Promise<void> {
  proc.kill('SIGKILL');
  await proc.waitForExit();
}

/** Run the child until it reports `until`, then SIGKILL it; returns every line it committed. */
async function crashAt(path: string, until: string): Promise<Line[]> {
  const proc = start(path, 'step');
  const seen: Line[] = [];
  for (;;) {
    const line = JSON.parse(await proc.nextLine(`the "${until}" step`)) as Line;
    seen.push(line);
    if (line.step === until) break;
    proc.proc.stdin!.write('go\n');
  }
  await killed(proc);
  return seen;
}

async function successor(t: { after: (fn: () => Promise<void>) => void }, path: string) {
  const opened = await openOccurrencesOnSqlite(path, { clock: new ManualClock(Date.now() + 1_000) });
  t.after(() => opened.close());
  return { ...opened, svc: opened.service } as unknown as Harness;
}

const EXPECT: Record<
  string,
  { phase: string; outcome: string; open: 'reserved' | 'unresolved' | 'none'; consumed: number }
> = {
  created: { phase: 'reserved', outcome: 'unknown', open: 'reserved', consumed: 0 },
  entered: { phase: 'entered', outcome: 'unknown', open: 'unresolved', consumed: 100 },
  acknowledged: { phase: 'entered', outcome: 'accepted', open: 'unresolved', consumed: 100 },
  resolved: { phase: 'resolved', outcome: 'success', open: 'none', consumed: 100 },
};

for (const [step, want] of Object.entries(EXPECT)) {
  test(`crash: SIGKILL right after the "${step}" commit, then a successor opens the file`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-crash-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'baton.db');
    const seen = await crashAt(path, step);
    const id = seen.at(-1)?.id ?? '';
    const g1 = seen[0]?.credential ?? '';
    const h = await successor(t, path);
    const report = await verifyEvidence(h.engine);
    assert.equal(report.ok, true, JSON.stringify(report.firstBroken));
    const o = (await h.svc.getOccurrence(id)).occurrence;
    assert.deepEqual([o.phase, o.outcome], [want.phase, want.outcome]);
    const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
    assert.deepEqual(
      g2.reserved.map((x) => x.id),
      want.open === 'reserved' ? [id] : [],
    );
    assert.deepEqual(
      g2.unresolved.map((x) => x.id),
      want.open === 'unresolved' ? [id] : [],
    );
    assert.equal((await h.svc.getAuthority('payouts')).consumed, want.consumed);
    await expectCode(h.svc.enter({ credential: g1, occurrenceId: id }), 'generation_retired');
    const before = await snapshot(h);
    await expectCode(
      h.svc.enter({ credential: g2.credential, occurrenceId: id }),
      want.phase === 'reserved' ? 'generation_mismatch' : 'already_entered',
    );
    assert.equal(await snapshot(h), before);
    if (want.phase === 'reserved') {
      // AOC-CASE-002: the successor proves non-entry serially and releases.
      await h.svc.release({
        credential: g2.credential,
        occurrenceId: id,
        requestDigest: o.provider.requestDigest,
      });
      assert.equal((await h.svc.getAuthority('payouts')).reserved, 0);
    }
    if (step === 'acknowledged') assert.equal(o.provider.providerReference, seen.at(-1)?.reference);
    assert.ok((await entryCount(h, id)) <= 1);
    assert.equal((await verifyEvidence(h.engine)).ok, true);
  });
}

test('crash: SIGKILL at an arbitrary moment of a busy loop keeps every rule', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'baton.db');
  const proc = start(path, 'loop');
  const target = 20 + Math.floor(Math.random() * 40);
  for (let n = 0; n < target; n++) await proc.nextLine(`committed step ${n + 1} of ${target}`);
  await killed(proc); // lands between or inside transactions
  const h = await successor(t, path);
  const report = await verifyEvidence(h.engine);
  assert.equal(report.ok, true, JSON.stringify(report.firstBroken));
  const rows = await h.engine.read((ex) =>
    ex.all<{ id: string; phase: string; authority_amount: number }>(
      'SELECT id, phase, authority_amount FROM aoc_occurrences',
    ),
  );
  const a = await h.svc.getAuthority('payouts');
  const sum = (phases: string[]) =>
    rows.filter((r) => phases.includes(r.phase)).reduce((s, r) => s + Number(r.authority_amount), 0);
  assert.equal(a.reserved, sum(['reserved']));
  assert.equal(a.consumed, sum(['entered', 'resolved']));
  for (const r of rows) assert.ok((await entryCount(h, r.id)) <= (r.phase === 'reserved' ? 0 : 1));
  const g2 = await h.svc.takeover({ lineage: 'invoice-agent' });
  assert.equal(
    g2.reserved.length + g2.unresolved.length,
    rows.filter((r) => r.phase === 'reserved' || r.phase === 'entered').length,
  );
  assert.ok(g2.reserved.length + g2.unresolved.length <= 1);
  t.diagnostic(
    `killed after ${target} committed steps; ${rows.length} occurrences, ${report.events} events verified`,
  );
});
