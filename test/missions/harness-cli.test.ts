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
