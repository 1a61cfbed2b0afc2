/**
 * `baton conformance` and `baton demo` interrupted by SIGINT or SIGTERM: the first signal stops
 * the run and cleans up what it made — the temp folder (the demo's database, its WAL and its domain
 * key; the conformance SQLite store), the scratch PostgreSQL database `--engine postgres` created —
 * and the process exits 130 or 143, as `baton serve` does. Each child is signalled once it has
 * printed its first progress line, and runs with its own TMPDIR, so what is left there is its own.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode, type WatchedChild } from '../support/child.js';
import { postgresForTests, withClient } from '../support/postgres.js';
import { tempDir } from '../store/support.js';

const fromTs = import.meta.url.endsWith('.ts');
const mainFile = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));

function baton(args: readonly string[], tmp: string): WatchedChild {
  return spawnNode(
    `baton ${args.join(' ')}`,
    fromTs ? ['--import', 'tsx', mainFile, ...args] : [mainFile, ...args],
    {
      env: { ...process.env, TMPDIR: tmp },
    },
  );
}

/** What a run left in its TMPDIR (tsx's own cache aside). */
function leftIn(tmp: string): string[] {
  return readdirSync(tmp).filter((name) => name.startsWith('baton-'));
}

async function interrupted(
  child: WatchedChild,
  firstLine: RegExp,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; err: string }> {
  await child.waitForLine(firstLine, 'the first progress line');
  child.kill(signal);
  const exit = await child.waitForExit();
  return { code: exit.code, err: child.stderr() };
}

test('demo interrupted by SIGINT: the worker and servers stop, the temp database, WAL and domain key are removed, exit 130', async (t) => {
  const tmp = tempDir(t);
  const child = baton(['demo'], tmp);
  const first = await child.waitForLine(/; database (\S+)$/, 'the database line');
  assert.ok(first[1]?.startsWith(tmp), `the demo database is under the child's TMPDIR: ${first[1]}`);
  child.kill('SIGINT');
  const exit = await child.waitForExit();
  assert.equal(exit.code, 130, child.stderr());
  assert.match(child.stderr(), /^baton: SIGINT: stopping and removing the temporary files/m);
  assert.match(child.stderr(), /^baton: stopped by SIGINT$/m);
  assert.doesNotMatch(child.stderr(), /^error: /m, 'the stop is not reported as an error');
  assert.deepEqual(leftIn(tmp), [], 'no baton-demo-* folder (demo.db, -wal, -shm, domain key) left');
});

test('demo --missions interrupted by SIGTERM: the temp store and client key are removed, exit 143', async (t) => {
  const tmp = tempDir(t);
  const r = await interrupted(baton(['demo', '--missions'], tmp), /^reference Mission issuer/, 'SIGTERM');
  assert.equal(r.code, 143, r.err);
  assert.match(r.err, /^baton: stopped by SIGTERM$/m);
  assert.deepEqual(leftIn(tmp), [], 'no baton-demo-missions-* folder left');
});

test('conformance (SQLite) interrupted by SIGTERM after its first case: no further case, the temp store is removed, exit 143', async (t) => {
  const tmp = tempDir(t);
  const out = join(tempDir(t), 'report');
  const child = baton(['conformance', '--out', out], tmp);
  const r = await interrupted(child, /^AOC-CASE-001 /, 'SIGTERM');
  assert.equal(r.code, 143, r.err);
  assert.match(r.err, /^baton: SIGTERM: stopping and removing the scratch store/m);
  assert.ok(!child.lines.some((l) => /^AOC-CASE-012 /.test(l)), 'the run stopped before its last case');
  assert.deepEqual(leftIn(tmp), [], 'no baton-conformance-* folder left');
  assert.deepEqual(readdirSync(out), [], 'no report written for a stopped run');
});

const pg = await postgresForTests();
if (pg !== undefined) {
  test('[postgres] conformance interrupted by SIGINT after its first case: the scratch database is dropped, exit 130', async (t) => {
    const tmp = tempDir(t);
    const child = baton(
      ['conformance', '--engine', 'postgres', '--postgres', pg.url, '--out', join(tmp, 'report')],
      tmp,
    );
    const [, scratch] = await child.waitForLine(
      /^scratch database (baton_conformance_[0-9a-f]+) /,
      'the scratch database line',
    );
    const exists = async (): Promise<boolean> =>
      (await withClient(pg.url, (c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [scratch])))
        .rowCount === 1;
    assert.equal(await exists(), true, `${scratch} exists while the run goes on`);
    const r = await interrupted(child, /^AOC-CASE-001 /, 'SIGINT');
    assert.equal(r.code, 130, r.err);
    assert.match(r.err, /^baton: stopped by SIGINT$/m);
    assert.equal(await exists(), false, `${scratch} was dropped`);
    assert.deepEqual(leftIn(tmp), [], 'no baton-conformance-* folder left');
  });
}
