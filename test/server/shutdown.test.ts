/**
 * `baton serve` as a real child process over a real SQLite file (docs/operations.md): on SIGTERM it
 * stops accepting, answers every request in flight in full, then closes the store and exits 0; a
 * second signal cuts the drain short (exit 143), as does the --shutdown-timeout deadline (exit 1).
 * In-flight requests are made deterministic with a real client behaviour: `Expect: 100-continue`,
 * whose `100 Continue` proves the server has the request before the signal is sent, the body
 * following only once the server says it is draining.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../src/core/json.js';
import { openBaton } from '../../src/server/open.js';
import { repoRoot } from '../support/paths.js';
import { createBody, domainConfig, paymentsProfile, request } from './helpers.js';

const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));
const DEADLINE_MS = 60_000;

function node(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const argv = fromTs ? ['--import', 'tsx', mainScript, ...args] : [mainScript, ...args];
  return spawn(process.execPath, argv, {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
}

/** Reject after the deadline: no test waits for a child forever. */
function within<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

interface Server {
  readonly proc: ChildProcess;
  readonly url: string;
  readonly admin: string;
  readonly exited: Promise<number | null>;
  /** Resolves when stderr shows a line matching `re`. */
  stderrLine(re: RegExp): Promise<string>;
  stderr(): string;
}

async function serve(t: TestContext, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const proc = node(['serve', '--port', '0', '--log-level', 'silent', ...args], env);
  t.after(() => proc.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let err = '';
  const waiters: { re: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: proc.stderr! }).on('line', (line) => {
    err += `${line}\n`;
    for (const w of waiters.filter((x) => x.re.test(line))) w.resolve(line);
  });
  const stderrLine = (re: RegExp): Promise<string> => {
    const seen = err.split('\n').find((l) => re.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return within(`stderr ${re}`, new Promise((resolve) => waiters.push({ re, resolve })));
  };
  let admin = '';
  const lines = createInterface({ input: proc.stdout! });
  const url = await within(
    'serve start',
    (async () => {
      for await (const line of lines) {
        admin = /admin token .*: (btk\.\S+)$/.exec(line)?.[1] ?? admin;
        const m = /^baton listening on (http:\/\/127\.0\.0\.1:\d+) /.exec(line);
        if (m !== null) return m[1] ?? '';
      }
      throw new Error(`serve exited before listening: ${err}`);
    })(),
  );
  return { proc, url, admin, exited, stderrLine, stderr: () => err };
}

/** Domain, profile, a budget and an executor credential, over HTTP with the one-time admin token. */
async function setUp(s: Server): Promise<string> {
  const token = s.admin;
  const limits = {
    maxPendingPerLineage: 500,
    maxInFlightPerLineage: 500,
    maxPendingPerDomain: 1000,
    maxInFlightPerDomain: 1000,
  };
  for (const [method, path, body] of [
    ['PUT', '/v1/domain', domainConfig(limits)],
    ['POST', '/v1/profiles', paymentsProfile()],
    ['POST', '/v1/authorities', { id: 'payouts', unit: 'EUR-cents', total: 100_000 }],
  ] as const) {
    const a = await request(s.url, method, path, { token, body });
    assert.equal(a.status, 200, a.text);
  }
  const r = await request(s.url, 'POST', '/v1/lineages/drained/takeover', { token });
  assert.equal(r.status, 201, r.text);
  return r.body['credential'] as string;
}

async function createMany(s: Server, cred: string, n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await request(s.url, 'POST', '/v1/occurrences', {
      token: cred,
      body: createBody(`${prefix}-${i}`, 10),
    });
    assert.equal(r.status, 201, r.text);
    ids.push(((r.body['occurrence'] as JsonObject)['id'] as string) ?? '');
  }
  return ids;
}

interface Held {
  /** Send the rest of the request; resolves with the complete answer, or rejects if cut. */
  finish(): Promise<{ status: number; body: JsonObject }>;
  /** The answer (or failure) of the request, whatever happens. */
  readonly answer: Promise<{ status: number; body: JsonObject }>;
}

/** An enter whose server has the headers (it sent `100 Continue`) and waits for the body. */
function heldEnter(url: string, cred: string, id: string): Promise<Held> {
  return within(
    '100 Continue',
    new Promise((resolve, reject) => {
      const body = '{}';
      const req = http.request(`${url}/v1/occurrences/${id}/enter`, {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${cred}`,
          'content-type': 'application/json',
          'content-length': String(body.length),
          expect: '100-continue',
        },
      });
      const answer = new Promise<{ status: number; body: JsonObject }>((done, fail) => {
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('error', fail);
          res.on('end', () => {
            try {
              done({ status: res.statusCode ?? 0, body: JSON.parse(text) as JsonObject });
            } catch (error) {
              fail(error instanceof Error ? error : new Error(String(error)));
            }
          });
        });
        req.on('error', fail);
      });
      answer.catch(() => undefined);
      req.on('continue', () =>
        resolve({
          answer,
          finish: () => {
            req.end(body);
            return answer;
          },
        }),
      );
      req.on('error', reject);
      req.flushHeaders();
    }),
  );
}

function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const proc = node(args);
  let out = '';
  let err = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  return within(
    args.join(' '),
    new Promise((resolve) => proc.once('exit', (code) => resolve({ code, out, err }))),
  );
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-shutdown-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Phases of the occurrences, read from the file after the server exited. */
async function phases(db: string, ids: readonly string[]): Promise<string[]> {
  const opened = await openBaton({ kind: 'sqlite', path: db });
  try {
    return await Promise.all(
      ids.map(async (id) => (await opened.service.getOccurrence(id)).occurrence.phase),
    );
  } finally {
    await opened.close();
  }
}

test('SIGTERM: every request in flight gets its full answer, then the store closes and serve exits 0', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  const s = await serve(t, ['--db', db]);
  const cred = await setUp(s);
  const heldIds = await createMany(s, cred, 3, 'held');
  const burstIds = await createMany(s, cred, 60, 'burst');
  const held = await Promise.all(heldIds.map((id) => heldEnter(s.url, cred, id)));

  // A burst of enters; SIGTERM as soon as the first one is answered, the rest still on their way.
  let signalled = false;
  const burst = burstIds.map((id) =>
    request(s.url, 'POST', `/v1/occurrences/${id}/enter`, { token: cred }).then(
      (a) => {
        if (!signalled) {
          signalled = true;
          s.proc.kill('SIGTERM');
        }
        return { ok: true as const, status: a.status, body: a.body };
      },
      (error: unknown) => ({ ok: false as const, error }),
    ),
  );
  const burstAnswers = await within('burst', Promise.all(burst));
  await s.stderrLine(/^baton: SIGTERM: draining/);
  // The held requests were in flight when the signal came: each completes and is answered.
  const heldAnswers = await within('held answers', Promise.all(held.map((h) => h.finish())));
  for (const a of heldAnswers) {
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(typeof a.body['nativeKey'], 'string', 'a full entry ticket');
  }
  assert.equal(await within('exit', s.exited), 0, s.stderr());
  assert.match(s.stderr(), /^baton: stopped$/m);

  // Every burst request either got a complete JSON answer or never reached the service: the
  // database says so (an answered enter is entered; a refused or reset one changed nothing).
  const burstPhases = await phases(db, burstIds);
  let answered = 0;
  burstAnswers.forEach((a, i) => {
    if (a.ok) {
      answered++;
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(burstPhases[i], 'entered', 'an answered enter happened');
    } else {
      assert.equal(burstPhases[i], 'reserved', `a failed request (${String(a.error)}) changed nothing`);
    }
  });
  assert.deepEqual(await phases(db, heldIds), ['entered', 'entered', 'entered']);
  t.diagnostic(`${answered} of ${burstIds.length} burst enters answered, the rest never accepted`);
  const verified = await run(['log', 'verify', '--db', db]);
  assert.equal(verified.code, 0, verified.out + verified.err);
});

test('a second SIGTERM during the drain cuts the requests still in flight and exits 143', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  const s = await serve(t, ['--db', db]);
  const cred = await setUp(s);
  const [id] = await createMany(s, cred, 1, 'cut');
  const held = await heldEnter(s.url, cred, id ?? '');
  s.proc.kill('SIGTERM');
  await s.stderrLine(/^baton: SIGTERM: draining/);
  s.proc.kill('SIGTERM');
  await assert.rejects(within('cut answer', held.answer), 'the held request is cut, not answered');
  assert.equal(await within('exit', s.exited), 143);
  assert.match(s.stderr(), /^baton: SIGTERM again: closing the remaining connections now$/m);
  assert.deepEqual(await phases(db, [id ?? '']), ['reserved'], 'its body never arrived: nothing entered');
  assert.equal((await run(['log', 'verify', '--db', db])).code, 0);
});

test('past --shutdown-timeout the drain gives up on what is left and exits 1', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  const s = await serve(t, ['--db', db, '--shutdown-timeout', '0.2']);
  const cred = await setUp(s);
  const [id] = await createMany(s, cred, 1, 'late');
  const held = await heldEnter(s.url, cred, id ?? '');
  s.proc.kill('SIGTERM');
  await assert.rejects(within('late answer', held.answer));
  assert.equal(await within('exit', s.exited), 1);
  assert.match(s.stderr(), /requests still in flight after 0\.2 s were cut/);
  assert.equal((await run(['log', 'verify', '--db', db])).code, 0);
});
