/**
 * `baton conformance --suite harness` end to end (issue 11 §6, issue 12 §4): the 25 A7 cases run
 * against the reference issuer on loopback and the harness on each engine; none fails, each one
 * not fully run is NOT_RUN with a reason (never a pass), the report is the AOC suite's format with
 * the harness's labels (SIMULATED issuer and provider, independent reproduction NOT_RUN,
 * same-team runner), and it carries no secret.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conformanceCommand } from '../../src/cli/commands/conformance.js';
import { HARNESS_CASES, runHarnessConformance } from '../../src/cli/conformance/harness-runner.js';
import type { ConformanceReport } from '../../src/cli/conformance/report.js';
import type { CliIo } from '../../src/cli/io.js';
import { postgresForTests, withClient } from '../support/postgres.js';

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-harness-conf-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function assertHarnessReport(
  report: ConformanceReport,
  md: string,
  json: string,
  secrets: readonly string[],
) {
  assert.equal(report.format, 'baton.harness-conformance-report/1');
  assert.equal(report.suite, 'harness');
  assert.equal(report.label, 'same-team runner, SIMULATED issuer');
  assert.deepEqual(report.labels, {
    provider: 'SIMULATED',
    independent_reproduction: 'NOT_RUN',
    runner: 'same-team',
    issuer: 'SIMULATED',
  });
  assert.match(md, /^# Harness \(Mission-aware\) conformance report — same-team runner, SIMULATED issuer/);
  assert.match(
    md,
    /Mission issuer \*\*SIMULATED\*\*.*independent reproduction \*\*NOT_RUN\*\*; runner \*\*same-team\*\*/,
  );
  assert.deepEqual(
    report.cases.map((c) => c.id),
    Array.from({ length: 25 }, (_, i) => `HAR-CASE-${String(i + 1).padStart(3, '0')}`),
  );
  for (const c of report.cases) {
    assert.notEqual(
      c.result,
      'fail',
      `${c.id}: ${JSON.stringify(c.checks.filter((x) => !x.ok))} ${c.error ?? ''}`,
    );
    if (c.result === 'not_run') {
      assert.ok((c.notRun ?? []).length > 0, `${c.id} NOT_RUN without a reason`);
      assert.match(md, new RegExp(`\\| ${c.id} \\| \\*\\*NOT_RUN\\*\\*`));
    } else {
      assert.equal(c.result, 'pass');
      assert.ok(c.checks.length > 0 && c.checks.every((x) => x.ok), c.id);
      assert.equal(c.notRun, undefined);
    }
  }
  const s = report.summary;
  assert.equal(s.pass + s.notRun, 25);
  // Every A7 part runs here since the rebind, taint and cache work (issue 11): none NOT_RUN.
  assert.equal(s.pass, 25, `every case fully run (${s.pass})`);
  assert.deepEqual(
    report.unsupportedCases,
    report.cases.filter((c) => c.result === 'not_run').map((c) => c.id),
  );
  for (const secret of secrets.filter((x) => x.length >= 8)) {
    assert.ok(!json.includes(secret) && !md.includes(secret), 'a secret leaked into the report');
  }
}

test('HAR-27 A7 the harness suite on SQLite: 25 cases, none failed, NOT_RUN with reasons, labelled, no secret', async (t) => {
  const out = tempDir(t);
  const lines: string[] = [];
  const run = await runHarnessConformance({ out, onProgress: (l) => lines.push(l) });
  assert.equal(run.passed, true, lines.join('\n'));
  assert.equal(lines.length, 25);
  const json = readFileSync(join(out, 'report.json'), 'utf8');
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assertHarnessReport(JSON.parse(json) as ConformanceReport, md, json, run.secrets);
  assert.ok(run.secrets.length >= 3, 'the issuer admin token, the stream bearer and credentials are audited');
  assert.equal(run.report.engine, 'sqlite');
});

test('the command: --suite harness with one case; an unknown suite or a case of the other suite is a usage error', async (t) => {
  const out = tempDir(t);
  const printed: string[] = [];
  const io: CliIo = {
    stdout: (s) => void printed.push(s),
    stderr: (s) => void printed.push(s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  assert.equal(
    await conformanceCommand.run(['--suite', 'harness', '--out', out, '--case', 'HAR-CASE-001'], io),
    0,
  );
  assert.match(printed.join(''), /SIMULATED issuer/);
  assert.match(printed.join(''), /HAR-CASE-001 pass/);
  assert.equal(await conformanceCommand.run(['--suite', 'nope'], io), 2);
  assert.equal(await conformanceCommand.run(['--suite', 'harness', '--case', 'AOC-CASE-001'], io), 2);
  assert.equal(await conformanceCommand.run(['--case', 'HAR-CASE-001'], io), 2);
  assert.equal(HARNESS_CASES.length, 25);
});

const pg = await postgresForTests();
if (pg !== undefined) {
  test('[postgres] HAR-27 A7 the harness suite on a scratch database: none failed, labelled, database dropped', async (t) => {
    const out = tempDir(t);
    const lines: string[] = [];
    const run = await runHarnessConformance({
      out,
      engine: 'postgres',
      postgresUrl: pg.url,
      onProgress: (l) => lines.push(l),
    });
    assert.equal(run.passed, true, lines.join('\n'));
    const json = readFileSync(join(out, 'report.json'), 'utf8');
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    assertHarnessReport(run.report, md, json, run.secrets);
    assert.equal(run.report.engine, 'postgres');
    assert.match(md, /Only the PostgreSQL engine was exercised/);
    const left = await withClient(pg.url, (c) =>
      c.query("SELECT datname FROM pg_database WHERE datname LIKE 'baton_harness_conformance_%'"),
    );
    assert.deepEqual(left.rows, [], 'the scratch database was dropped');
  });
}
