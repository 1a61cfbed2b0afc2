/**
 * `baton serve --config FILE`: the config is applied in process before the server serves anything,
 * so the ready line means "configured"; a restart with the same file changes nothing ("unchanged"); a
 * conflicting file stops the start (exit 1) before anything listens, and applies nothing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { AdminClient } from '../../src/client/index.js';
import { exampleConfig, serveInProcess, startSandbox, tempDir, writeConfig } from './support.js';

/** The operator token `serve --config` wrote beside the config. */
function operatorToken(dir: string): string {
  const file = JSON.parse(readFileSync(join(dir, 'first-call.tokens.json'), 'utf8')) as {
    tokens: { token: string }[];
  };
  return file.tokens[0]?.token ?? '';
}

interface Running {
  readonly url: string;
  readonly out: () => string;
  readonly err: () => string;
  stop(): Promise<number>;
}

/** Start `serve` in process and wait (at most 20 s) for its listening line, or its early exit. */
async function serve(argv: string[]): Promise<Running | { code: number; out: string; err: string }> {
  const listening = (out: string) => /baton listening on (http:\/\/\S+)/.exec(out)?.[1];
  const s = await serveInProcess([...argv, '--port', '0'], (out) => listening(out) !== undefined);
  const url = listening(s.out());
  const code = s.exited();
  if (url === undefined && code !== undefined) return { code, out: s.out(), err: s.err() };
  return { url: url ?? '', out: s.out, err: s.err, stop: s.stop };
}

test('serve --config applies the config before it is ready, and a restart with it says unchanged', async (t) => {
  const sandbox = await startSandbox(t);
  const dir = tempDir(t);
  const file = writeConfig(dir, exampleConfig(sandbox.url));
  const db = join(dir, 'baton.db');

  const first = await serve(['--db', db, '--config', file]);
  assert.ok('url' in first, `serve exited: ${'err' in first ? String(first.err) : ''}`);
  assert.match(first.err(), /^domain first-call: created$/m);
  assert.match(first.err(), /^applied: 4 changes$/m);
  const admin = new AdminClient({ baseUrl: first.url, token: operatorToken(dir) });
  assert.equal((await admin.getDomain()).id, 'first-call', 'configured by the time it listens');
  assert.equal((await admin.getAuthority('first-call-payments')).total, 100000);
  assert.equal(await first.stop(), 0);

  const second = await serve(['--db', db, '--config', file]);
  assert.ok('url' in second);
  assert.match(second.err(), /^unchanged: nothing to apply$/m);
  assert.ok(!second.out().includes('btk.'), 'no token minted or printed on restart');
  assert.equal(await second.stop(), 0);
});

test('serve --config with a conflicting file exits 1 before it is ready and applies nothing', async (t) => {
  const sandbox = await startSandbox(t);
  const dir = tempDir(t);
  const config = exampleConfig(sandbox.url);
  const db = join(dir, 'baton.db');
  const first = await serve(['--db', db, '--config', writeConfig(dir, config)]);
  assert.ok('url' in first);
  await first.stop();

  const conflicting = writeConfig(
    dir,
    {
      ...config,
      authorities: [
        { id: 'first-call-payments', unit: 'EUR-cents', total: 5 },
        { id: 'extra', unit: 'u', total: 1 },
      ],
    },
    'conflict.json',
  );
  const r = await serve(['--db', db, '--config', conflicting]);
  assert.ok('code' in r, 'it must not listen');
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /error: config_conflict: nothing applied: authority first-call-payments: exists with total 100000/,
  );
  assert.ok(!r.out.includes('listening'));

  // Nothing was applied: the extra budget does not exist.
  const again = await serve(['--db', db, '--config', writeConfig(dir, config, 'same.json')]);
  assert.ok('url' in again);
  assert.match(again.err(), /^unchanged: nothing to apply$/m);
  const op = operatorToken(dir);
  const ids = (await new AdminClient({ baseUrl: again.url, token: op }).listAuthorities()).authorities.map(
    (a) => a.id,
  );
  assert.deepEqual(ids, ['first-call-payments']);
  await again.stop();
});
