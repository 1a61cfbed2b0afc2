/**
 * `serve --config` listens before it applies the file (src/server/starting.ts): meanwhile every
 * request but /healthz is answered 503 and reaches no route; once ready, the routes answer.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildServer } from '../../src/server/index.js';
import { openBaton } from '../../src/server/open.js';
import { answerStartingUntil } from '../../src/server/starting.js';

test('a starting server answers 503 unavailable (all but /healthz) until it is ready', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-starting-'));
  const opened = await openBaton({ kind: 'sqlite', path: join(dir, 'baton.db') });
  const app = buildServer({ engine: opened.engine, service: opened.service, harness: opened.harness });
  const ready = answerStartingUntil(app, 'its --config is being applied');
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const get = (path: string): Promise<Response> => fetch(`${url}${path}`);

  const refused = await get('/v1/domain');
  assert.equal(refused.status, 503);
  const problem = (await refused.json()) as { code?: string; detail?: string };
  assert.deepEqual(
    [problem.code, problem.detail],
    ['unavailable', 'the server is starting: its --config is being applied'],
  );
  assert.equal((await get('/readyz')).status, 503);
  assert.equal((await get('/healthz')).status, 200, 'liveness answers while starting');
  assert.equal((await get('/healthz?probe=1')).status, 200, 'with a query string too');

  ready();
  assert.equal((await get('/v1/domain')).status, 401, 'the route (its bearer check) answers now');
  assert.equal((await get('/readyz')).status, 200);
});
