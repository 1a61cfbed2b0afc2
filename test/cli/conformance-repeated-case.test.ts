/**
 * A `--case` named twice runs that case once, in both suites, and the run's verdict counts it once:
 * every case passed ⇒ exit 0 (a repeated id must not make the run expect a second report).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { baton, tempDir } from '../config/support.js';

for (const [suite, id] of [
  ['aoc', 'AOC-CASE-002'],
  ['harness', 'HAR-CASE-001'],
] as const) {
  test(`conformance --suite ${suite} --case ${id} --case ${id}: one case run, exit 0`, async (t) => {
    const out = tempDir(t, 'baton-conf-repeat-');
    const r = await baton(['conformance', '--suite', suite, '--out', out, '--case', id, '--case', id]);
    assert.equal(r.code, 0, r.out + r.err);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
      cases: { id: string; result: string }[];
      summary: { total: number; pass: number };
    };
    assert.deepEqual(
      report.cases.map((c) => [c.id, c.result]),
      [[id, 'pass']],
    );
    assert.equal(report.summary.total, 1);
    assert.match(r.out, /1\/1 passed, 0 failed/);
  });
}
