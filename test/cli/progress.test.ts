/**
 * The commands that can run long on a large store say on stderr what they are doing, so a user
 * does not stare at nothing: `migrate` names each migration as it starts, `report` and `observe
 * export|metrics` say the projection of the evidence log runs. stdout stays the answer alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { main } from '../../src/cli/baton.js';
import { openBaton } from '../../src/server/open.js';
import { migrations } from '../../src/store/migrations/index.js';
import { domainConfig } from '../client/support.js';
import { captureIo, tempDir } from '../store/support.js';

async function run(argv: string[]) {
  const io = captureIo();
  const code = await main(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

test('migrate names each migration it applies on stderr, and none when the schema is current', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  const first = await run(['migrate', '--db', db, '--json']);
  assert.equal(first.code, 0, first.err);
  assert.deepEqual(
    first.err.trimEnd().split('\n'),
    migrations.map((m) => `applying migration ${m.id} ${m.name}…`),
  );
  assert.equal(
    (JSON.parse(first.out) as { version: number }).version,
    Math.max(...migrations.map((m) => m.id)),
  );
  const again = await run(['migrate', '--db', db]);
  assert.deepEqual([again.code, again.err], [0, '']);
});

test('report and observe export|metrics say the projection runs on stderr; stdout is the answer', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  const opened = await openBaton({ kind: 'sqlite', path: db });
  await opened.service.configureDomain(domainConfig() as never);
  await opened.close();
  const line = `projecting the evidence log of sqlite ${db} into handoff records…\n`;
  for (const argv of [['report'], ['observe', 'metrics'], ['observe', 'export']]) {
    const r = await run([...argv, '--db', db]);
    assert.equal(r.code, 0, `${argv.join(' ')}: ${r.err}`);
    assert.equal(r.err, line, argv.join(' '));
    if (argv[1] !== 'export') assert.equal(typeof JSON.parse(r.out), 'object', argv.join(' '));
  }
});
