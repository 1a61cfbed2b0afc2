/** A3.10 HAR-25 A7#23: `baton stop-matrix check` and `baton serve --stop-matrix` refuse bad matrices (exit 2). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { DEFAULT_MATRIX } from '../../src/missions/index.js';
import { captureIo, tempDir } from '../store/support.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

function revokedPause(): string {
  const m = JSON.parse(JSON.stringify(DEFAULT_MATRIX.matrix)) as {
    rows: Record<string, Record<string, string>>;
  };
  m.rows['revoked']!['irreversible'] = 'pause';
  return JSON.stringify(m);
}

test('A3.10 baton stop-matrix check prints ref and digest for a valid matrix, exit 2 for revoked → pause', async (t) => {
  const dir = tempDir(t);
  const good = join(dir, 'good.json');
  const bad = join(dir, 'bad.json');
  writeFileSync(good, JSON.stringify(DEFAULT_MATRIX.matrix));
  writeFileSync(bad, revokedPause());
  const ok = await run(['stop-matrix', 'check', good]);
  assert.deepEqual([ok.code, ok.out], [0, `baton-default@1 ${DEFAULT_MATRIX.digest}\n`]);
  const refused = await run(['stop-matrix', 'check', bad]);
  assert.equal(refused.code, 2);
  assert.equal(refused.out, '');
  assert.match(refused.err, /^error: stop_matrix_invalid: .*\(revoked irreversible\)/);
});

test('HAR-25 A7#23 baton serve --stop-matrix with an invalid matrix exits 2 before the store is created', async (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, revokedPause());
  const db = join(dir, 'baton.db');
  const r = await run(['serve', '--db', db, '--port', '0', '--stop-matrix', bad]);
  assert.equal(r.code, 2);
  assert.match(r.err, /stop_matrix_invalid/);
  assert.equal(existsSync(db), false);
});
