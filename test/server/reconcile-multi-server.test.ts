/**
 * The single-asker rule (issue 13 §4, §7): THREE `baton serve --reconcile-every 100ms` child
 * processes on ONE PostgreSQL database, one real sandbox in this process counting every lookup by
 * key it serves. Fifteen occurrences are entered and their answers lost; twelve can be answered,
 * three cannot (their lookups answer 503). Afterwards: each answerable occurrence was looked up
 * exactly ONCE across the three servers; no occurrence was ever looked up by two servers at once;
 * the unanswerable ones were asked no more often than one asker's backoff allows; every server
 * drains and exits 0 on SIGTERM. Skipped (once, visibly) without PostgreSQL unless CI is set.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../src/core/json.js';
import { BYPASS_PATH_KINDS, type EntryTicket } from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
  sandboxEntryUrl,
  type SandboxProvider,
} from '../../src/providers/index.js';
import { FAULT_HEADER } from '../../src/providers/sandbox/index.js';
import { spawnNode, type WatchedChild } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { postgresForTests } from '../support/postgres.js';
import { waitUntil } from '../support/wait.js';
import { request } from './helpers.js';

const SERVERS = 3;
const ANSWERABLE = 12;
const STUCK = 3;
const EVERY_MS = 100;

const db = await postgresForTests();
const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));

/** Lookups by key as the sandbox served them: when, and how many overlapped per key. */
class Lookups {
  readonly times = new Map<string, number[]>();
  readonly inFlight = new Map<string, number>();
  readonly stuck = new Set<string>();
  /** Lookups answered 200 (the payment found), per key. */
  readonly found = new Map<string, number>();
  maxOverlap = 0;

  install(sandbox: SandboxProvider): void {
    const keyOf = (url: string): string | undefined => {
      const m = /\/payments\/by-key\/([^/?]+)/.exec(url);
      return m === null ? undefined : decodeURIComponent(m[1]!);
    };
    sandbox.app.addHook('onRequest', (request, _reply, done) => {
      const key = request.method === 'GET' ? keyOf(request.url) : undefined;
      if (key !== undefined) {
        this.times.set(key, [...(this.times.get(key) ?? []), Date.now()]);
        const n = (this.inFlight.get(key) ?? 0) + 1;
        this.inFlight.set(key, n);
        this.maxOverlap = Math.max(this.maxOverlap, n);
      }
      done();
    });
    sandbox.app.addHook('onResponse', (request, reply, done) => {
      const key = request.method === 'GET' ? keyOf(request.url) : undefined;
      if (key !== undefined) {
        this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
        if (reply.statusCode === 200) this.found.set(key, (this.found.get(key) ?? 0) + 1);
      }
      done();
    });
    // The stuck occurrences cannot be answered: their lookups and every listing say 503.
    sandbox.app.addHook('onSend', async (request, reply, payload) => {
      const key = keyOf(request.url);
      const listing = /^\/v1\/accounts\/[^/]+\/payments(\?|$)/.test(request.url) && request.method === 'GET';
      if ((key !== undefined && this.stuck.has(key)) || listing) reply.code(503);
      return payload;
    });
  }
}

async function serve(
  t: TestContext,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; child: WatchedChild }> {
  const argv = [...(fromTs ? ['--import', 'tsx'] : []), mainScript, 'serve', ...args];
  const child = spawnNode('baton serve', argv, { cwd: repoRoot, env });
  t.after(() => child.kill());
  const m = await child.waitForLine(
    /^baton listening on (http:\/\/127\.0\.0\.1:\d+) \(postgres .+\)$/,
    'listening line',
  );
  return { url: m[1] ?? '', child };
}

function domainBody(): JsonObject {
  const limit = {
    maxPendingPerLineage: 100,
    maxInFlightPerLineage: 100,
    maxPendingPerDomain: 1000,
    maxInFlightPerDomain: 1000,
  };
  return {
    id: 'reconcile-multi',
    limits: { ...limit, entryWindowSeconds: 3600 },
    bypassPaths: BYPASS_PATH_KINDS.map((kind) => ({
      kind,
      status: 'unknown',
      description: 'not inventoried in tests',
    })),
  };
}

async function ok(
  url: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<JsonObject> {
  const r = await request(url, method, path, { token, ...(body !== undefined && { body }) });
  assert.ok(r.status === 200 || r.status === 201, `${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

if (db !== undefined) {
  test(
    'three servers on one PostgreSQL: each unresolved occurrence is asked by one server at a time',
    { timeout: 300_000 },
    async (t) => {
      const url = await db.schema();
      const dir = mkdtempSync(join(tmpdir(), 'baton-reconcile-multi-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const secret = randomBytes(32);
      const sandbox = createSandboxProvider({ signing: 'hmac', hmacSecret: secret });
      const lookups = new Lookups();
      lookups.install(sandbox);
      await sandbox.listen(0, '127.0.0.1');
      t.after(() => sandbox.close());
      const deployment = sandboxDeployment(sandbox);
      const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
      const secretId = deployment.hmacSecretId ?? '';
      const env = { ...process.env, BATON_HMAC_SECRETS: `${secretId}=${secret.toString('base64url')}` };
      const key = join(dir, 'shared.domain-key.pem');
      const args = ['--postgres', url, '--domain-key', key, '--port', '0', '--log-level', 'silent'];
      const reconcile = ['--reconcile-every', `${EVERY_MS}ms`, '--reconcile-concurrency', '4'];
      const servers = [];
      for (let i = 0; i < SERVERS; i++) servers.push(await serve(t, [...args, ...reconcile], env));
      const admin = /^initial admin token .*: (btk\.\S+)$/.exec(servers[0]!.child.lines[0] ?? '')?.[1];
      assert.ok(admin !== undefined, 'the first server printed the admin token');
      const api = servers[1]!.url;
      await ok(api, 'PUT', '/v1/domain', admin, domainBody());
      await ok(api, 'POST', '/v1/profiles', admin, profile);
      await ok(api, 'POST', '/v1/authorities', admin, {
        id: 'payouts',
        unit: 'EUR-cents',
        total: 10_000_000,
      });
      const cred = (await ok(api, 'POST', '/v1/lineages/invoice-agent/takeover', admin))[
        'credential'
      ] as string;
      // The payment is applied and its answer dropped. The fault rides on the entry request's own
      // header: an admin fault rule keyed by the native key could be taken by a background
      // reconciler's lookup of the same key, which runs as soon as the occurrence is entered.
      const sendLosingAnswer = async (ticket: EntryTicket): Promise<boolean> => {
        const url = sandboxEntryUrl(sandbox.url).replace('{account}', encodeURIComponent(ticket.account));
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          [FAULT_HEADER]: 'drop_response_after_apply',
        };
        if (ticket.nativeKeyHeader !== null && ticket.nativeKey !== null)
          headers[ticket.nativeKeyHeader.toLowerCase()] = ticket.nativeKey;
        const body = JSON.stringify(ticket.request);
        return fetch(url, { method: 'POST', headers, body }).then(
          () => false,
          () => true,
        );
      };

      const answerable: string[] = [];
      const ids: string[] = [];
      for (let i = 0; i < ANSWERABLE + STUCK; i++) {
        const body = {
          creationKey: `inv-multi-${i}`,
          provider: { profileId: profile.id, profileVersion: profile.version },
          request: { amount: 100, currency: 'eur', payee: 'acme-supplies', invoice: `inv-multi-${i}` },
          authority: { id: 'payouts', amount: 100 },
        };
        const created = await ok(servers[i % SERVERS]!.url, 'POST', '/v1/occurrences', cred, body);
        const id = (created['occurrence'] as JsonObject)['id'] as string;
        const ticket = (await ok(
          servers[i % SERVERS]!.url,
          'POST',
          `/v1/occurrences/${id}/enter`,
          cred,
        )) as unknown as EntryTicket;
        const native = ticket.nativeKey!;
        if (i >= ANSWERABLE) lookups.stuck.add(native);
        else answerable.push(native);
        ids.push(id);
        assert.equal(await sendLosingAnswer(ticket), true, 'the answer was lost');
      }

      const state = async (id: string): Promise<JsonObject> =>
        (await ok(api, 'GET', `/v1/occurrences/${id}`, admin))['occurrence'] as JsonObject;
      await waitUntil(
        'the answerable occurrences to be resolved by the background reconcilers',
        async () => {
          for (const id of ids.slice(0, ANSWERABLE))
            if ((await state(id))['unresolved'] !== false) return false;
          return true;
        },
        { deadlineMs: 120_000, pollMs: 200 },
      );
      await sleep(2_000); // the stuck ones keep being asked, with backoff

      // A reconciler may ask as soon as the occurrence is entered, before this test's payment
      // reaches the sandbox (404, unresolved, asked again after backoff): that ask is legitimate.
      // Once one ask found the payment, the occurrence is resolved and nobody asks again (a later
      // ask would find it too). How often the stuck ones are asked bounds the backoff, below.
      for (const k of answerable) {
        assert.equal(lookups.found.get(k), 1, `${k}: found by exactly one lookup`);
      }
      const early = answerable.filter((k) => (lookups.times.get(k)?.length ?? 0) > 1).length;
      t.diagnostic(
        `${early} of ${answerable.length} answerable occurrences were asked before their payment landed`,
      );
      assert.equal(lookups.maxOverlap, 1, 'no occurrence was ever looked up by two servers at once');
      for (const k of lookups.stuck) {
        const times = lookups.times.get(k) ?? [];
        assert.ok(times.length >= 2, `${k}: asked again after backing off`);
        const window = times.at(-1)! - times[0]!;
        // One asker: the n-th gap is at least EVERY_MS/2 · 2^(n-1), so n gaps need 50·(2^n - 1) ms.
        const bound = 1 + Math.floor(Math.log2(window / (EVERY_MS / 2) + 1));
        assert.ok(
          times.length <= bound,
          `${k}: ${times.length} asks in ${window} ms (one asker allows ${bound})`,
        );
      }
      for (const id of ids.slice(ANSWERABLE)) assert.equal((await state(id))['unresolved'], true);
      const total = [...lookups.times.values()].reduce((n, x) => n + x.length, 0);
      t.diagnostic(`${total} lookups by key for ${ids.length} occurrences over ${SERVERS} servers`);

      for (const s of servers) s.child.proc.kill('SIGTERM');
      for (const s of servers)
        assert.equal((await s.child.waitForExit()).code, 0, 'drained and stopped cleanly');
    },
  );
}
