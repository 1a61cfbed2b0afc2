/** A7#24 `baton harness rebind ITEM --binding FILE` on a real SQLite file (views pre-verified, fixtures.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { openBaton } from '../../src/server/open.js';
import { captureIo, tempDir } from '../store/support.js';
import { binding, verifiedSignal } from './fixtures.js';

const SUCCESSOR = 'msn_successor_Q3x9vT2pL7mN4kR8sB1yZ';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

test('A7#24 baton harness rebind: refused while the successor is unknown, then rebound to the active successor', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const opened = await openBaton({ kind: 'sqlite', path: db });
  const now = Date.now();
  await opened.harness.applyVerifiedSignal(verifiedSignal('active', 1, now));
  const item = await opened.harness.createItem(
    { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
    'test',
  );
  await opened.harness.applyVerifiedSignal(verifiedSignal('superseded', 2, now + 1));
  const file = join(dir, 'successor.json');
  writeFileSync(file, JSON.stringify({ ...binding, mission_id: SUCCESSOR }));
  await opened.close();

  const unknown = await run(['harness', 'rebind', item.id, '--binding', file, '--db', db]);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.err, /^error: mission_status_unavailable: /);
  const missing = await run(['harness', 'rebind', item.id, '--db', db]);
  assert.equal(missing.code, 2);

  const again = await openBaton({ kind: 'sqlite', path: db });
  await again.harness.applyVerifiedSignal(
    verifiedSignal('active', 1, Date.now(), { missionId: SUCCESSOR, jti: 'succ_1' }),
  );
  await again.close();
  const ok = await run(['harness', 'rebind', item.id, '--binding', file, '--db', db]);
  assert.equal(ok.code, 0, ok.err);
  const rebound = JSON.parse(ok.out) as { state: string; binding: { mission_id: string } };
  assert.deepEqual([rebound.state, rebound.binding.mission_id], ['queued', SUCCESSOR]);
  const shown = await run(['harness', 'show', item.id, '--db', db]);
  const types = (JSON.parse(shown.out) as { evidence: { type: string }[] }).evidence.map((e) => e.type);
  assert.ok(types.includes('rebound'));
});

test('HAR-29 baton harness taint SESSION --source: sticky, suppresses the egress item, shown by baton harness session', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const opened = await openBaton({ kind: 'sqlite', path: db });
  await opened.harness.applyVerifiedSignal(verifiedSignal('active', 1, Date.now()));
  const s = await opened.harness.createSession(
    { mission_binding: binding, lineage: 'invoice-agent', session_id: 'sess_cli_taint' },
    'test',
  );
  const pay = await opened.harness.createItem(
    {
      kind: 'queue_item',
      action_class: 'external_commitment',
      mission_binding: binding,
      session_id: s.id,
    },
    'test',
  );
  await opened.close();

  const noSource = await run(['harness', 'taint', s.id, '--db', db]);
  assert.equal(noSource.code, 2);
  assert.match(noSource.err, /taint needs --source/);
  const badSource = await run(['harness', 'taint', s.id, '--source', 'a b', '--db', db]);
  assert.notEqual(badSource.code, 0);
  assert.match(badSource.err, /input_invalid/);
  const unknown = await run(['harness', 'taint', 'sess_nobody', '--source', 'tool_result', '--db', db]);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.err, /session_not_found/);
  // Nothing above changed the session.
  const before = JSON.parse((await run(['harness', 'session', s.id, '--db', db])).out) as {
    session: { tainted: boolean; version: number };
  };
  assert.deepEqual([before.session.tainted, before.session.version], [false, 1]);

  const ok = await run(['harness', 'taint', s.id, '--source', 'tool_result', '--db', db]);
  assert.equal(ok.code, 0, ok.err);
  const tainted = JSON.parse(ok.out) as { tainted: boolean; version: number };
  assert.deepEqual([tainted.tainted, tainted.version], [true, 2]);
  const shown = JSON.parse((await run(['harness', 'show', pay.id, '--db', db])).out) as {
    item: { state: string };
  };
  assert.equal(shown.item.state, 'suppressed');
  const again = await run(['harness', 'taint', s.id, '--source', 'inbound_email', '--db', db]);
  assert.equal((JSON.parse(again.out) as { version: number }).version, 2);
  const session = JSON.parse((await run(['harness', 'session', s.id, '--db', db])).out) as {
    session: { tainted: boolean };
    evidence: { type: string; body: { source: string } }[];
  };
  assert.equal(session.session.tainted, true);
  assert.deepEqual(
    session.evidence.filter((e) => e.type === 'session_tainted').map((e) => e.body.source),
    ['tool_result', 'inbound_email'],
  );
});

test('baton harness list pages through every item (more than one CLI page of 500), each once', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const opened = await openBaton({ kind: 'sqlite', path: db });
  await opened.harness.applyVerifiedSignal(verifiedSignal('active', 1, Date.now()));
  const made = new Set<string>();
  for (let i = 0; i < 503; i++) {
    const item = await opened.harness.createItem(
      { kind: 'queue_item', action_class: 'consequential_write', mission_binding: binding },
      'test',
    );
    made.add(item.id);
  }
  await opened.close();
  const listed = await run(['harness', 'list', '--db', db]);
  assert.equal(listed.code, 0, listed.err);
  const ids = listed.out
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { id: string }).id);
  assert.equal(ids.length, 503);
  assert.deepEqual(new Set(ids), made);
});
