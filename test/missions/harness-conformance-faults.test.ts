/**
 * The harness runner clears the issuer's faults after every case; a clear that fails (here: the
 * issuer refuses it, 401) fails that case with the error, never swallowed, so faults possibly
 * still armed cannot carry into later cases' verdicts unnoticed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conformanceStore } from '../../src/cli/conformance/env.js';
import { openHarnessEnv } from '../../src/cli/conformance/harness-env.js';
import { runHarnessCase } from '../../src/cli/conformance/harness-runner.js';

test('a failed fault clear fails the case with the error (faultsCleared false)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-harness-faults-'));
  const env = await openHarnessEnv(dir, conformanceStore({}));
  t.after(async () => {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const passing = {
    id: 'HAR-CASE-TEST',
    title: 'one passing check',
    requirements: [],
    inputs: {},
    run(kit: { check(name: string, ok: boolean): void }) {
      kit.check('holds', true);
      return Promise.resolve();
    },
  };
  const ok = await runHarnessCase(env, passing);
  assert.equal(ok.report.result, 'pass');
  assert.equal(ok.faultsCleared, true);
  // The same case, but the issuer refuses the clear (a wrong admin token: 401).
  const refused = await runHarnessCase(
    { ...env, issuer: { ...env.issuer, adminToken: 'wrong-token' } },
    passing,
  );
  assert.equal(refused.faultsCleared, false);
  assert.equal(refused.report.result, 'fail');
  assert.match(
    refused.report.error ?? '',
    /clearing the issuer's faults failed: .*refused to clear the faults \(401\)/,
  );
});
