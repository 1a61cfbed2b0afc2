/**
 * A reader of stdout that goes away (`baton log export | head -1`): the write's EPIPE ends the
 * process quietly with exit 141 (docs/cli.md "Exit codes"), never an unhandled 'error' event with
 * a Node stack, and never a success line after the failed write. A real child process, whose
 * stdout pipe's read end is closed before it writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { EXIT_CLOSED_PIPE, guardStdout } from '../../src/cli/io.js';
import { openOccurrencesOnSqlite } from '../../src/store/occurrences.js';
import { domainConfig } from '../client/support.js';
import { tempDir } from '../store/support.js';
import { repoRoot } from '../support/paths.js';

/** `baton ARGV…` as a process whose stdout nobody reads: the pipe's read end is closed at once. */
function runClosed(argv: string[]): Promise<{ code: number | null; err: string }> {
  const bin = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  const child = spawn(process.execPath, [bin, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, err });
    }),
  );
}

test(
  'log export and --help into a closed pipe: exit 141, nothing on stderr (no stack, no success line)',
  { skip: !import.meta.url.endsWith('.js') && 'runs from the compiled tree only' },
  async (t) => {
    const db = join(tempDir(t), 'baton.db');
    const opened = await openOccurrencesOnSqlite(db);
    try {
      await opened.service.configureDomain(domainConfig() as never);
    } finally {
      await opened.close();
    }
    for (const argv of [
      ['log', 'export', '--db', db],
      ['log', '--help'],
    ]) {
      const r = await runClosed(argv);
      assert.equal(r.code, EXIT_CLOSED_PIPE, `${argv.join(' ')}: ${r.err}`);
      assert.equal(r.err, '', `${argv.join(' ')}: quiet`);
    }
  },
);

test('guardStdout: EPIPE exits 141 quietly; any other write failure is error: internal, exit 1', () => {
  const exits: number[] = [];
  const said: string[] = [];
  const out = new EventEmitter();
  guardStdout(
    out,
    (code) => exits.push(code),
    (text) => said.push(text),
  );
  out.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  out.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' }));
  assert.deepEqual(exits, [141, 1]);
  assert.deepEqual(said, ['error: internal: cannot write to stdout: EIO\n']);
});
