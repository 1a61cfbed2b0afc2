/**
 * B3.5, OBS-17: a seeded sample at least as large as the universe audits every entered
 * occurrence. The report said "a sample, not the universe" all the same; it now says every
 * occurrence was audited (and the FIC answer's `audited_all` says so), while a smaller
 * sample is still reported as a sample.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { enginesUnderTest } from '../store/engines.js';
import { enterSome, prepare } from './support.js';

const [e] = await enginesUnderTest();
test('B3.5: --sample N ≥ the universe reports that every entered occurrence was audited', async (t) => {
  if (e === undefined) return t.skip('no engine');
  const p = await prepare(t, e);
  await enterSome(p, 'L', 3);
  for (const size of [3, 10]) {
    const report = await p.continuity.report({ sample: { size, seed: 's' } });
    assert.equal(report.fic_obs.n, 3);
    assert.equal(report.fic_obs.audited_all, true);
    assert.doesNotMatch(report.sampling, /a sample, not the universe/, report.sampling);
    assert.match(report.sampling, /audited every entered occurrence in the window/, report.sampling);
  }
  const part = await p.continuity.report({ sample: { size: 2, seed: 's' } });
  assert.equal(part.fic_obs.audited_all, false);
  assert.match(part.sampling, /a sample, not the universe/);
});
