/**
 * `baton conformance` end to end: twelve of twelve cases pass against the real service and the
 * sandbox over HTTP, the report carries the fields the AOC Conformance section lists, and it holds
 * no credential, HMAC secret, admin token or raw request body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conformanceCommand } from '../../src/cli/commands/conformance.js';
import { runConformance } from '../../src/cli/conformance/runner.js';
import type { CliIo } from '../../src/cli/io.js';
import { postgresForTests, withClient } from '../support/postgres.js';

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-conf-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('12 of 12 cases pass; the report is complete, labelled, and leaks no secret', async (t) => {
  const out = tempDir(t);
  const lines: string[] = [];
  const run = await runConformance({ out, onProgress: (l) => lines.push(l) });
  assert.equal(run.passed, true, lines.join('\n'));
  assert.equal(lines.length, 12, 'one progress line per case');
  const json = readFileSync(join(out, 'report.json'), 'utf8');
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  const report = JSON.parse(json) as {
    label: string;
    cases: {
      id: string;
      result: string;
      requirements: string[];
      checks: { ok: boolean }[];
      occurrences: Record<string, unknown>[];
    }[];
    implementation: { version: string };
    profiles: { version: string; digest: string }[];
    testInputDigest: string;
    bypassPaths: unknown[];
    untestedProviderSemantics: unknown[];
    missingStatusKnowledge: unknown[];
    unsupportedCases: unknown[];
    labels: Record<string, string>;
  };
  assert.equal(report.label, 'same-team runner, synthetic provider');
  assert.equal(run.report.format, 'baton.aoc-conformance-report/1');
  assert.equal(run.report.suite, 'aoc');
  assert.equal(run.report.summary.notRun, 0);
  assert.match(md, /same-team runner, synthetic provider/);
  // B7-16 OBS-06: the continuity observation profile's labels.
  assert.deepEqual(report.labels, {
    provider: 'SIMULATED',
    independent_reproduction: 'NOT_RUN',
    runner: 'same-team',
  });
  assert.match(
    md,
    /provider results \*\*SIMULATED\*\* \(synthetic sandbox\); independent reproduction \*\*NOT_RUN\*\*; runner \*\*same-team\*\*/,
  );
  assert.doesNotMatch(md, /Mission issuer/, 'the AOC suite runs no Mission issuer');
  assert.deepEqual(
    report.cases.map((c) => [c.id, c.result]),
    Array.from({ length: 12 }, (_, i) => [`AOC-CASE-${String(i + 1).padStart(3, '0')}`, 'pass']),
  );
  for (const c of report.cases) {
    assert.ok(c.requirements.length > 0 && c.requirements.every((r) => /^AOC-REQ-0\d\d$/.test(r)), c.id);
    assert.ok(c.checks.length > 0 && c.checks.every((x) => x.ok), c.id);
    for (const o of c.occurrences) {
      for (const field of [
        'occurrenceId',
        'executorGeneration',
        'providerBindingDigest',
        'state',
        'entry',
        'authority',
        'evidence',
        'providerEffects',
      ]) {
        assert.ok(Object.hasOwn(o, field), `${c.id} ${field}`);
      }
    }
  }
  assert.match(report.testInputDigest, /^sha-256:/);
  assert.equal(report.profiles.length, 2);
  assert.equal(report.bypassPaths.length, 6);
  assert.ok(report.untestedProviderSemantics.length > 0 && report.missingStatusKnowledge.length > 0);
  assert.deepEqual(report.unsupportedCases, []);
  const secrets = run.secrets.filter((s) => s.length >= 8);
  assert.ok(
    secrets.length >= 12 + 4,
    'credentials, HMAC secret, admin token and request bodies are all audited',
  );
  for (const secret of secrets) {
    assert.ok(!json.includes(secret) && !md.includes(secret), 'a secret leaked into the report');
  }
  t.diagnostic(`checked ${report.cases.length} cases and ${secrets.length} secrets`);
});

test('the command: one case, a progress line, exit 0; an unsupported engine or a missing URL is a usage error', async (t) => {
  const out = tempDir(t);
  const printed: string[] = [];
  const io: CliIo = {
    stdout: (s) => void printed.push(s),
    stderr: (s) => void printed.push(s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  assert.equal(await conformanceCommand.run(['--out', out, '--case', 'AOC-CASE-002'], io), 0);
  assert.match(printed.join(''), /AOC-CASE-002 pass/);
  assert.equal(await conformanceCommand.run(['--engine', 'postgres'], io), 2);
  assert.equal(await conformanceCommand.run(['--engine', 'mysql'], io), 2);
  assert.equal(await conformanceCommand.run(['--postgres', 'postgres://127.0.0.1/x'], io), 2);
  assert.equal(await conformanceCommand.run(['--engine', 'postgres', '--postgres', 'http://x'], io), 2);
  assert.equal(await conformanceCommand.run(['--case', 'AOC-CASE-099'], io), 2);
});

// The same twelve cases with the service on PostgreSQL (a scratch database the run creates and drops).
const pg = await postgresForTests();
if (pg !== undefined) {
  test('[postgres] 12 of 12 cases pass on a scratch database, the report names the engine, and the database is gone afterwards', async (t) => {
    const out = tempDir(t);
    const lines: string[] = [];
    const scratch: string[] = [];
    const run = await runConformance({
      out,
      engine: 'postgres',
      postgresUrl: pg.url,
      onProgress: (l) => lines.push(l),
      onScratch: (name) => scratch.push(name),
    });
    assert.equal(run.passed, true, lines.join('\n'));
    assert.equal(lines.length, 12);
    assert.equal(run.report.engine, 'postgres');
    assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /Only the PostgreSQL engine was exercised/);
    assert.equal(scratch.length, 1, 'the run named its scratch database');
    assert.match(scratch[0] ?? '', /^baton_conformance_[0-9a-f]+$/);
    // Its own database, by name: another file's run may have one of its own at this moment.
    const left = await withClient(pg.url, (c) =>
      c.query('SELECT datname FROM pg_database WHERE datname = $1', [scratch[0]]),
    );
    assert.deepEqual(left.rows, [], 'the scratch database was dropped');
  });
}
