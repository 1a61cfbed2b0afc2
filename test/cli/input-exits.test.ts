/**
 * Bad input exits 2 on the store commands too (docs/cli.md "Exit codes"): a value the service
 * refuses as input_invalid (`tokens create --name ''`, `harness stop --decision bogus`) and an
 * unknown or empty `harness list --state`, checked as GET /v1/harness/items?state= checks it;
 * a refusal that depends on what the store holds (an unknown item) still exits 1. A verb command
 * refuses an unknown verb with --help too. `tokens create` on a missing --db refuses as list and
 * revoke do, instead of minting into a new database nobody will serve.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { openBaton } from '../../src/server/open.js';
import { captureIo, tempDir } from '../store/support.js';
import { binding, verifiedSignal } from '../missions/fixtures.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

test('tokens create with an invalid --name exits 2 (input_invalid is bad input) and creates no database', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  // An empty --name is refused as an empty flag value (usage, test/cli/flags.test.ts), not here.
  for (const name of [' leading-space', 'x'.repeat(129)]) {
    const r = await run(['tokens', 'create', '--role', 'operator', '--name', name, '--db', db]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /^error: input_invalid: /);
    assert.equal(r.out, '');
  }
  const missingRole = await run(['tokens', 'create', '--db', db]);
  assert.equal(missingRole.code, 2, missingRole.err);
  assert.match(missingRole.err, /^error: usage: create needs --role/);
  assert.deepEqual(readdirSync(dir), [], 'refused before the store was opened');
});

test('tokens create on a missing --db (a typo) refuses, as list and revoke do, and creates no database', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'TYPO.db');
  const r = await run(['tokens', 'create', '--role', 'admin', '--db', db]);
  assert.equal(r.code, 2, r.err);
  assert.match(
    r.err,
    new RegExp(`^error: usage: no database at ${db} \\(baton migrate or baton serve creates one`),
  );
  assert.equal(r.out, '', 'no token minted');
  assert.deepEqual(readdirSync(dir), [], 'no database, -wal, -shm or key file created');
  // A store brought into being on purpose takes the token.
  assert.equal((await run(['migrate', '--db', db])).code, 0);
  const created = await run(['tokens', 'create', '--role', 'admin', '--db', db]);
  assert.equal(created.code, 0, created.err);
  assert.match(created.out, /^btk\./);
});

/** A SQLite store holding one queued item under an active Mission (then superseded, if asked), closed again. */
async function storeWithItem(t: TestContext, superseded = false) {
  const db = join(tempDir(t), 'baton.db');
  const opened = await openBaton({ kind: 'sqlite', path: db });
  await opened.harness.applyVerifiedSignal(verifiedSignal('active', 1, Date.now()));
  const item = await opened.harness.createItem(
    { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
    'test',
  );
  if (superseded)
    await opened.harness.applyVerifiedSignal(verifiedSignal('superseded', 2, Date.now() + 1000));
  await opened.close();
  return { db, item };
}

test('harness stop --decision bogus exits 2; an unknown item exits 1', async (t) => {
  const { db, item } = await storeWithItem(t);

  const bogus = await run(['harness', 'stop', item.id, '--decision', 'bogus', '--db', db]);
  assert.equal(bogus.code, 2, bogus.err);
  assert.match(bogus.err, /^error: input_invalid: /);
  const unknown = await run(['harness', 'stop', 'wi_nobody', '--decision', 'pause', '--db', db]);
  assert.equal(unknown.code, 1, unknown.err);
  const stopped = await run(['harness', 'stop', item.id, '--decision', 'pause', '--db', db]);
  assert.equal(stopped.code, 0, stopped.err);
});

test('harness list --state refuses an unknown or empty state (exit 2) and filters by known ones', async (t) => {
  const { db, item } = await storeWithItem(t);

  for (const state of ['bogus', '', 'queued,', ',queued', 'queued,,done', 'QUEUED', 'queued,nope']) {
    const r = await run(['harness', 'list', '--state', state, '--db', db]);
    assert.equal(r.code, 2, `--state '${state}': ${r.err}`);
    assert.equal(r.out, '', `--state '${state}'`);
    assert.match(
      r.err,
      /^error: usage: --state (names an (unknown|empty) state|needs a value)/,
      `--state '${state}'`,
    );
  }
  const queued = await run(['harness', 'list', '--state', 'queued,done', '--db', db]);
  assert.equal(queued.code, 0, queued.err);
  assert.deepEqual(
    queued.out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id),
    [item.id],
  );
  const done = await run(['harness', 'list', '--state', 'done', '--db', db]);
  assert.deepEqual([done.code, done.out], [0, '']);
});

test('tokens and stop-matrix refuse an unknown verb with --help too (exit 2, not the usage)', async () => {
  for (const argv of [
    ['tokens', 'bogus', '--help'],
    ['stop-matrix', 'bogus', '--help'],
  ]) {
    const r = await run(argv);
    assert.equal(r.code, 2, argv.join(' '));
    assert.equal(r.out, '', argv.join(' '));
    assert.match(r.err, new RegExp(`^error: usage: unknown ${argv[0]} verb 'bogus'`), argv.join(' '));
  }
  assert.equal((await run(['tokens', 'create', '--help'])).code, 0);
  assert.equal((await run(['stop-matrix', 'check', '--help'])).code, 0);
});

test('harness requeue of a superseded Mission’s item exits 1 with successor_binding_required (a state, not bad input)', async (t) => {
  const { db, item } = await storeWithItem(t, true);
  const r = await run(['harness', 'requeue', item.id, '--db', db]);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /successor_binding_required/);
});
