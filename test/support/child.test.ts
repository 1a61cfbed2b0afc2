/**
 * The deadline on waiting for a child (issue 10, part 1): a child that never gets ready, or that
 * exits first, fails the wait within its deadline with the child's stderr in the error, and the
 * never-ready child is killed rather than left behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnNode } from './child.js';

const DEADLINE_MS = 1_000;

test('a child that never gets ready fails the wait within the deadline, quoting its stderr', async () => {
  const script =
    "console.error('cannot bind: port taken (EADDRINUSE)'); console.log('starting'); setInterval(() => {}, 1000);";
  const child = spawnNode('never-ready', ['-e', script]);
  // It runs (so its stderr is written) and then never prints the line; only then the short deadline.
  await child.waitForLine(/^starting$/, 'starting line');
  await assert.rejects(
    child.waitForLine(/^listening on (\S+)$/, 'listening line', DEADLINE_MS),
    (error: Error) => {
      assert.match(error.message, /^never-ready: no listening line within 1000 ms/);
      assert.match(error.message, /--- stderr ---\ncannot bind: port taken \(EADDRINUSE\)/);
      assert.match(error.message, /--- stdout \(last lines\) ---\nstarting/);
      return true;
    },
  );
  const exit = await child.waitForExit(DEADLINE_MS * 10);
  assert.equal(exit.signal, 'SIGKILL', 'the child was killed at the deadline');
});

test('a child that exits before it is ready fails the wait with its exit code and stderr', async () => {
  const child = spawnNode('dies-early', ['-e', "console.error('config invalid: no --db'); process.exit(2);"]);
  await assert.rejects(child.waitForLine(/^listening/, 'listening line'), (error: Error) => {
    assert.match(error.message, /^dies-early: exited \(code 2, signal null\) before listening line/);
    assert.match(error.message, /config invalid: no --db/);
    return true;
  });
});

test('a ready child: the matching line is returned and later lines stay to be read', async () => {
  const child = spawnNode('ready', [
    '-e',
    "console.log('noise'); console.log('listening on http://x'); console.log('next');",
  ]);
  const m = await child.waitForLine(/^listening on (\S+)$/, 'listening line');
  assert.equal(m[1], 'http://x');
  assert.equal(await child.nextLine('the next line'), 'next');
  assert.deepEqual(await child.waitForExit(), { code: 0, signal: null });
});

test('waitForExit fails at its deadline with stderr and kills the child', async () => {
  const child = spawnNode('hangs', [
    '-e',
    "console.error('stuck in shutdown'); console.log('up'); setInterval(() => {}, 1000);",
  ]);
  await child.waitForLine(/^up$/, 'up line');
  await assert.rejects(
    child.waitForExit(DEADLINE_MS),
    /hangs: did not exit within 1000 ms[\s\S]*stuck in shutdown/,
  );
  assert.equal((await child.exited).signal, 'SIGKILL');
});
