/**
 * `baton serve --postgres` logs when PostgreSQL drops its idle pooled connections (a server
 * restart, a network cut): one warning per burst, however many connections the burst took
 * (src/server/open.ts `perBurst`; docs/operations.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { perBurst } from '../../src/server/open.js';
import { tempDir } from '../store/support.js';
import { postgresForTests, withClient } from '../support/postgres.js';
import { waitUntil } from '../support/wait.js';

const db = await postgresForTests();
const BIN = join(import.meta.dirname, '../../src/cli/main.js');
const LINE = 'PostgreSQL closed idle pooled connections';

test('perBurst tells the first error of a burst, and again after a quiet spell', async () => {
  const told: string[] = [];
  const tell = perBurst((e) => told.push(e.message), 50);
  tell(new Error('a'));
  tell(new Error('b'));
  await new Promise((resolve) => setTimeout(resolve, 80));
  tell(new Error('c'));
  assert.deepEqual(told, ['a', 'c']);
});

if (db !== undefined) {
  test('serve --postgres: idle connections terminated by the server give one warning line', async (t) => {
    const url = await db.schema();
    const key = join(tempDir(t), 'serve.domain-key.pem');
    const args = ['serve', '--postgres', url, '--domain-key', key, '--port', '0', '--log-level', 'warn'];
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill());
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => void (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => void (err += b.toString()));
    await waitUntil('serve to listen', () => /baton listening on (\S+)/.test(out), { detail: () => err });
    const base = /baton listening on (\S+)/.exec(out)?.[1] ?? '';
    // Several pooled connections, then idle.
    await Promise.all(Array.from({ length: 6 }, () => fetch(`${base}/readyz`).then((r) => r.text())));
    const killed = await withClient(url, async (c) => {
      const r = await c.query<{ n: string }>(
        "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = 'baton' AND datname = current_database() AND state = 'idle'",
      );
      return Number(r.rows[0]?.n);
    });
    assert.ok(killed >= 1, 'some idle connection was terminated');
    await waitUntil('the warning', () => err.includes(LINE), { detail: () => err, deadlineMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(err.split(LINE).length - 1, 1, `one line for ${killed} connection(s): ${err}`);
    // The pool opens new connections for the next request.
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
  });
}
