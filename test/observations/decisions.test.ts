/**
 * B7-17 OBS-15 OBS-28: no stored FIC/CIF value or record changes an entry or dispatch decision. The lint rule
 * refuses any import of observations from occurrences, missions or leases; behaviourally, two
 * stores that differ only in their continuity records and profiles make the same decisions.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'node:test';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { isBatonError } from '../../src/core/errors.js';
import { HANDOFF_PROFILE } from '../../src/observations/index.js';
import { repoRoot } from '../support/paths.js';
import { sqliteUnderTest } from '../store/engines.js';
import { createInput } from '../occurrences/helpers.js';
import { binding, T0, verifiedSignal } from '../missions/fixtures.js';
import { governedWorld, reserveGoverned, type GovernedWorld } from './governed.js';
import { decidedRecord, prepare, type Prepared } from './support.js';

const { boundaries } = (await import(pathToFileURL(join(repoRoot, 'eslint.boundaries.js')).href)) as {
  boundaries: unknown[];
};
const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfigFile: true,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
    ...(boundaries as []),
  ],
});

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  assert.ok(result);
  return result.messages.map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

for (const ctx of ['occurrences', 'missions', 'leases']) {
  test(`B7-17 OBS-15 lint: src/${ctx} may not import observations, even its index`, async () => {
    for (const code of [
      "import { cif } from '../observations/index.js';",
      "import { ficObs } from '../observations/metrics.js';",
      "import { cif } from '../../observations/index.js';",
    ]) {
      const ids = await ruleIds(`src/${ctx}/machine/fixture.ts`, code);
      assert.ok(ids.length > 0 && ids.every((id) => id === 'no-restricted-imports'), code);
    }
  });
}

test('B7-17 lint: observations itself may read occurrences through its index (reports only)', async () => {
  assert.deepEqual(
    await ruleIds(
      'src/observations/fixture.ts',
      "import type { BypassPath } from '../occurrences/index.js';",
    ),
    [],
  );
});

/** One command sequence: create, enter, a refused entry, a takeover and an entry by the retired generation. */
async function decisions(p: Prepared): Promise<string[]> {
  const out: string[] = [];
  const g1 = await p.svc.takeover({ lineage: 'L' });
  const a = await p.svc.create(createInput(g1.credential, 'a'));
  const t = await p.svc.enter({ credential: g1.credential, occurrenceId: a.occurrence.id });
  out.push(`enter ${t.occurrence.phase}`);
  for (const attempt of [
    () => p.svc.enter({ credential: g1.credential, occurrenceId: a.occurrence.id }),
    async () => {
      const b = await p.svc.create(createInput(g1.credential, 'b'));
      await p.svc.takeover({ lineage: 'L' });
      return p.svc.enter({ credential: g1.credential, occurrenceId: b.occurrence.id });
    },
  ]) {
    try {
      await attempt();
      out.push('admitted');
    } catch (err) {
      out.push(isBatonError(err) ? err.code : 'non-baton error');
    }
  }
  return out;
}

test('B7-17 OBS-15 behaviour: a store full of MISMATCH records and a hostile profile decides exactly like a clean one', async (t) => {
  const clean = await prepare(t, sqliteUnderTest);
  const noisy = await prepare(t, sqliteUnderTest);
  const bad = ['state', 'policy', 'authority', 'lineage'].map((dimension) => ({
    dimension,
    status: 'MISMATCH' as const,
    reference: 'urn:baton:r',
    reason: 'x',
  }));
  for (let i = 0; i < 5; i++) {
    await noisy.continuity.submit(decidedRecord({ record_id: `r${i}`, invariants: bad }), 'operator');
  }
  await noisy.continuity.registerProfile({
    ...HANDOFF_PROFILE,
    id: 'urn:example:hostile',
    required: ['lineage'],
    weights: { lineage: '1' },
  });
  const cifBefore = await noisy.continuity.cif();
  assert.equal(cifBefore.value?.decimal, '1.000000', 'the noisy store really has the worst CIF');
  const [x, y] = [await decisions(clean), await decisions(noisy)];
  assert.deepEqual(y, x);
  assert.deepEqual(x, ['enter entered', 'already_entered', 'generation_retired']);
});

/** Governed work: dispatch and gated entry before and after a revocation (A3.1, A3.6). */
async function governedDecisions(w: GovernedWorld, noisy: boolean): Promise<string[]> {
  const out: string[] = [];
  const outcome = async (label: string, fn: () => Promise<string>) => {
    try {
      out.push(`${label} ${await fn()}`);
    } catch (err) {
      out.push(`${label} ${isBatonError(err) ? err.code : 'non-baton error'}`);
    }
    if (noisy) await w.continuity.project(); // records (handoff, barrier) land between decisions
  };
  await w.harness.applyVerifiedSignal(verifiedSignal('active', 1, T0));
  const { ids, enter } = await reserveGoverned(w, ['a', 'b']);
  const [a, b] = ids as [string, string];
  await outcome('enter a', async () => (await enter(a)).occurrence.phase);
  w.clock.advance(70_000);
  await outcome('enter b late', async () => (await enter(b)).occurrence.phase);
  await outcome('revoke', async () =>
    String((await w.harness.applyVerifiedSignal(verifiedSignal('revoked', 2, T0))).stopped),
  );
  const g = await w.occurrences.takeover({ lineage: 'invoice-agent' });
  const item = await w.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'consequential_write',
      lineage: 'invoice-agent',
      mission_binding: binding,
      idempotency_key: 'c',
    },
    'executor',
  );
  out.push(`create c ${item.state}`);
  await outcome(
    'dispatch c',
    async () => (await w.harness.dispatch(item.id, 'executor', g.generation)).item.state,
  );
  return out;
}

test('B7-17 OBS-15 behaviour: dispatch and gated entry decide the same beside MISMATCH records, a MISMATCH barrier record and a hostile profile', async (t) => {
  const clean = await governedWorld(t, sqliteUnderTest);
  const noisy = await governedWorld(t, sqliteUnderTest);
  for (let i = 0; i < 3; i++)
    await noisy.continuity.submit(
      decidedRecord({
        record_id: `r${i}`,
        invariants: [{ dimension: 'authority', status: 'MISMATCH', reference: 'urn:baton:r', reason: 'x' }],
      }),
      'operator',
    );
  await noisy.continuity.registerProfile({
    ...HANDOFF_PROFILE,
    id: 'urn:example:hostile',
    required: ['authority'],
    weights: { authority: '1' },
  });
  const [x, y] = [await governedDecisions(clean, false), await governedDecisions(noisy, true)];
  assert.deepEqual(y, x);
  assert.equal(x[0], 'enter a entered');
  // Work created under the revoked Mission is suppressed at once, evidenced, never queued (HAR-13).
  assert.deepEqual(x.slice(-2), ['create c suppressed', 'dispatch c work_item_not_dispatchable']);
  const barriers = await noisy.continuity.list({ eventType: 'revocation_barrier' });
  assert.ok(barriers.length >= 1, 'the noisy store really holds barrier records');
  assert.equal((await noisy.continuity.cif({ profile: 'urn:example:hostile' })).complete, false);
});
