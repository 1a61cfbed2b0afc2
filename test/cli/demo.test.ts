/**
 * `baton demo` around the story itself: a `--db` it cannot use is refused and the process ends
 * (nothing left listening), and the follow-up hint names a database only when one is kept.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode } from '../support/child.js';
import { baton, tempDir } from '../config/support.js';

const fromTs = import.meta.url.endsWith('.ts');
const mainFile = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));

/** A refused demo ends at once; a leaked listener would keep the process alive past this. */
const EXIT_DEADLINE_MS = 30_000;

async function demoProcess(args: string[]): Promise<{ code: number | null; err: string }> {
  const child = spawnNode(
    'baton demo',
    fromTs ? ['--import', 'tsx', mainFile, 'demo', ...args] : [mainFile, 'demo', ...args],
  );
  const { code } = await child.waitForExit(EXIT_DEADLINE_MS);
  return { code, err: child.stderr() };
}

test('demo --db in a folder that does not exist: exit 2 (usage) naming the folder, and the process ends', async (t) => {
  const dir = join(tempDir(t, 'baton-demo-db-'), 'missing');
  const db = join(dir, 'd.db');
  const r = await demoProcess(['--db', db]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /^error: usage: no folder .*missing for the SQLite database .*d\.db$/m);
  assert.equal(existsSync(dir), false, 'nothing created');
});

test('demo --db whose store fails to open (a domain key other users can read): refused, and the process ends', async (t) => {
  const dir = tempDir(t, 'baton-demo-db-');
  const db = join(dir, 'd.db');
  writeFileSync(`${db}.domain-key.pem`, 'not a key', { mode: 0o644 });
  const r = await demoProcess(['--db', db]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /key_invalid: the domain key file is readable by other users/);
});

test('demo without --db: no hint pointing at the temporary database it deletes; with --db: the hint names it', async (t) => {
  const temp = await baton(['demo']);
  assert.equal(temp.code, 0, temp.out + temp.err);
  const tempDb = /; database (\S+demo\.db)$/m.exec(temp.out)?.[1];
  assert.ok(tempDb !== undefined, temp.out);
  assert.equal(existsSync(tempDb), false, 'the temporary database is gone');
  const hint = /^continuity: .*$/m.exec(temp.out)?.[0] ?? '';
  assert.match(hint, /^continuity: 4 signed handoff record\(s\)/, temp.out);
  assert.ok(!hint.includes(tempDb), `no command on the deleted database: ${hint}`);
  assert.doesNotMatch(hint, /--db (?!FILE)/);
  assert.match(hint, /the database is deleted when the demo ends: run `baton demo --db FILE` to keep it/);

  const db = join(tempDir(t, 'baton-demo-db-'), 'kept.db');
  const kept = await baton(['demo', '--db', db]);
  assert.equal(kept.code, 0, kept.out + kept.err);
  assert.ok(existsSync(db), 'the database is kept');
  assert.ok(kept.out.includes(`\`baton report --db ${db}\` counts them`), kept.out);
  assert.ok(kept.out.includes(`\`baton observe export --db ${db}\``), kept.out);
  assert.doesNotMatch(kept.out, /--db FILE|deleted when the demo ends/);
});
