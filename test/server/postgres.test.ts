/**
 * DESIGN.md §10 over HTTP: two servers share one PostgreSQL database (and one domain key file).
 * Tokens, credentials, retirement and the at-most-once entry hold across them, because they live
 * in the database, never in a process. Skipped (once, with a notice) where PostgreSQL is absent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runServe } from '../../src/cli/commands/serve.js';
import type { JsonObject } from '../../src/core/json.js';
import { buildServer } from '../../src/server/index.js';
import { openBaton } from '../../src/server/open.js';
import { createToken } from '../../src/server/tokens.js';
import { postgresForTests } from '../support/postgres.js';
import { waitUntil } from '../support/wait.js';
import { assertProblem, createBody, domainConfig, paymentsProfile, request, str } from './helpers.js';

const db = await postgresForTests();

async function server(t: TestContext, url: string, keyFile: string): Promise<string> {
  const opened = await openBaton({ kind: 'postgres', url, domainKeyFile: keyFile });
  const app = buildServer({ engine: opened.engine, service: opened.service });
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  return app.listen({ port: 0, host: '127.0.0.1' });
}

function keyDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-pg-key-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

if (db !== undefined) {
  test('two servers over one PostgreSQL database act as one coordination boundary', async (t) => {
    const url = await db.schema();
    const keyFile = join(keyDir(t), 'shared.domain-key.pem');
    const a = await server(t, url, keyFile);
    const b = await server(t, url, keyFile);
    const opened = await openBaton({ kind: 'postgres', url, domainKeyFile: keyFile });
    const deps = { clock: { wallMs: () => Date.now(), monotonicMs: () => performance.now() }, actor: 'test' };
    const admin = (await createToken(opened.engine, { role: 'admin' }, deps)).token;
    await opened.close();

    assert.equal((await request(b, 'PUT', '/v1/domain', { token: admin, body: domainConfig() })).status, 200);
    assert.equal(
      (await request(a, 'POST', '/v1/profiles', { token: admin, body: paymentsProfile() })).status,
      200,
    );
    const budget = { id: 'payouts', unit: 'EUR-cents', total: 10_000 };
    assert.equal((await request(b, 'POST', '/v1/authorities', { token: admin, body: budget })).status, 200);
    const first = await request(a, 'POST', '/v1/lineages/shared/takeover', { token: admin });
    const cred = str(first.body, 'credential');
    const created = await request(b, 'POST', '/v1/occurrences', { token: cred, body: createBody('pg-1') });
    assert.equal(created.status, 201, created.text);
    const id = str(created.body['occurrence'] as JsonObject);
    assert.equal((await request(a, 'POST', `/v1/occurrences/${id}/enter`, { token: cred })).status, 200);
    assertProblem(
      await request(b, 'POST', `/v1/occurrences/${id}/enter`, { token: cred }),
      409,
      'already_entered',
    );

    await request(b, 'POST', '/v1/lineages/shared/takeover', { token: admin });
    for (const base of [a, b]) {
      assertProblem(
        await request(base, 'GET', `/v1/occurrences/${id}`, { token: cred }),
        409,
        'generation_retired',
      );
    }
    const counts = await request(a, 'GET', '/v1/counts', { token: admin });
    assert.equal(counts.body['unresolved'], 1);
    assert.equal((await request(b, 'GET', '/readyz')).status, 200);
  });

  test('baton serve --postgres prints where it listens, never the password', async (t) => {
    const url = await db.schema();
    const keyFile = join(keyDir(t), 'serve.domain-key.pem');
    let out = '';
    const stop = new AbortController();
    let err = '';
    const io = {
      stdout: (s: string) => void (out += s),
      stderr: (s: string) => void (err += s),
      readStdin: () => Promise.resolve(Buffer.alloc(0)),
    };
    const done = runServe(
      ['--postgres', url, '--domain-key', keyFile, '--port', '0', '--log-level', 'silent'],
      io,
      stop.signal,
    );
    t.after(() => stop.abort());
    await waitUntil('baton serve to listen', () => out.includes('baton listening'), {
      running: done,
      detail: () => `stdout: ${out}\nstderr: ${err}`,
    });
    const m =
      /baton listening on (http:\/\/127\.0\.0\.1:\d+) \(postgres (.+)\)\n(?:console at \S+ \(sign in with an operator or admin token\)\n)?$/.exec(
        out,
      );
    assert.ok(m !== null, out);
    const password = new URL(url).password;
    if (password !== '') assert.ok(!out.includes(password), 'the password is not printed');
    assert.match(out, /^initial admin token \(shown once; only its digest is stored\): btk\./);
    assert.equal((await request(m[1] ?? '', 'GET', '/readyz')).status, 200);
    stop.abort();
    assert.equal(await done, 0);
  });
}
