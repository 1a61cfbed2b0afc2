/**
 * DESIGN.md §10 under load: THREE `baton serve` child processes on ONE PostgreSQL database (one
 * domain key), the real sandbox provider in this process, and sixteen executors (HttpBatonClient,
 * round-robin over the servers) paying through the sandbox while lineages are taken over and one
 * server is SIGKILLed. Afterwards: no duplicate effect, authority consumed = entries × amount, every
 * unresolved occurrence queryable, every evidence chain valid, no occurrence entered twice
 * (AOC-REQ-002, -006, -010, -012). Skipped (once, visibly) without PostgreSQL unless CI is set.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  HttpBatonClient,
  perform,
  type Executor,
  type ExecutorBinding,
  type Operation,
  type PerformResult,
  type ProviderAdapter,
} from '../../src/client/index.js';
import type { JsonObject } from '../../src/core/json.js';
import { BYPASS_PATH_KINDS, type EntryTicket, type OccurrenceView } from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  type SandboxProvider,
} from '../../src/providers/index.js';
import { spawnNode } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { postgresForTests, withClient } from '../support/postgres.js';
import { request } from './helpers.js';

const SERVERS = 3;
const EXECUTORS = 16;
const OPS_PER_EXECUTOR = 20; // 320 operations in all
/** Every LEFT_UNRESOLVED-th operation is performed without reconciling, and left so. */
const LEFT_UNRESOLVED = 7;
const TAKEOVERS = 12;
const KILL_AFTER = Math.floor((EXECUTORS * OPS_PER_EXECUTOR) / 3);
/** A bound on the run, not an assertion: past it, executors start no new operation. */
const RUN_LIMIT_MS = 240_000;
const AUTHORITIES = [
  { id: 'payouts-a', amount: 1_250 },
  { id: 'payouts-b', amount: 700 },
] as const;

const db = await postgresForTests();

const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));
interface Server {
  readonly url: string;
  readonly proc: ChildProcess;
  readonly lines: string[];
  dead: boolean;
}

/** `baton serve` as a child, up to its listening line (a deadline, then its stderr: test/support/child.ts). */
async function serve(t: TestContext, args: string[], env: NodeJS.ProcessEnv): Promise<Server> {
  const argv = [...(fromTs ? ['--import', 'tsx'] : []), mainScript, 'serve', ...args];
  const child = spawnNode('baton serve', argv, { cwd: repoRoot, env });
  t.after(() => child.kill());
  const m = await child.waitForLine(
    /^baton listening on (http:\/\/127\.0\.0\.1:\d+) \(postgres .+\)$/,
    'listening line',
  );
  return { url: m[1] ?? '', proc: child.proc, lines: child.lines, dead: false };
}

/** Counts every send per native key: the sandbox must see each key at most once (AOC-REQ-010). */
class CountingAdapter implements ProviderAdapter {
  readonly sends = new Map<string, number>();
  constructor(readonly inner: HttpProviderAdapter) {}

  send(ticket: EntryTicket): ReturnType<ProviderAdapter['send']> {
    const key = ticket.nativeKey ?? `(no key) ${ticket.occurrence.id}`;
    this.sends.set(key, (this.sends.get(key) ?? 0) + 1);
    return this.inner.send(ticket);
  }
}

interface Provider {
  readonly sandbox: SandboxProvider;
  readonly profile: JsonObject;
  readonly adapter: CountingAdapter;
  /** BATON_HMAC_SECRETS for the servers, so their reconcile can verify the sandbox's answers. */
  readonly hmacEnv: string;
}

async function startProvider(t: TestContext): Promise<Provider> {
  const secret = randomBytes(32);
  const sandbox = createSandboxProvider({ signing: 'hmac', hmacSecret: secret });
  await sandbox.listen(0, '127.0.0.1');
  t.after(() => sandbox.close());
  const deployment = sandboxDeployment(sandbox);
  const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
  const secretId = deployment.hmacSecretId ?? '';
  const keys = staticKeys({ [secretId]: secret });
  const inner = new HttpProviderAdapter(profile, {
    entryUrl: sandboxEntryUrl(sandbox.url),
    keys,
    timeoutMs: 30_000,
  });
  const hmacEnv = `${secretId}=${secret.toString('base64url')}`;
  return { sandbox, profile: profile as unknown as JsonObject, adapter: new CountingAdapter(inner), hmacEnv };
}

function domainBody(): JsonObject {
  return {
    id: 'multi-server',
    limits: {
      maxPendingPerLineage: 100,
      maxInFlightPerLineage: 100,
      maxPendingPerDomain: 10_000,
      maxInFlightPerDomain: 10_000,
      entryWindowSeconds: 3_600,
    },
    bypassPaths: BYPASS_PATH_KINDS.map((kind) => ({
      kind,
      status: 'unknown',
      description: 'not inventoried in tests',
    })),
  };
}

async function setup(url: string, admin: string, profile: JsonObject): Promise<void> {
  const d = await request(url, 'PUT', '/v1/domain', { token: admin, body: domainBody() });
  assert.equal(d.status, 200, d.text);
  const p = await request(url, 'POST', '/v1/profiles', { token: admin, body: profile });
  assert.equal(p.status, 200, p.text);
  for (const a of AUTHORITIES) {
    const body = { id: a.id, unit: 'EUR-cents', total: 100_000_000 };
    const r = await request(url, 'POST', '/v1/authorities', { token: admin, body });
    assert.equal(r.status, 200, r.text);
  }
}

/** What the run shares: servers, the current generation of every lineage, and the tallies. */
class Run {
  readonly clients: HttpBatonClient[];
  readonly current = new Map<string, ExecutorBinding>();
  readonly refusals = new Map<string, number>();
  readonly results = new Map<string, number>();
  readonly occurrenceIds = new Set<string>();
  done = 0;
  workersLeft = EXECUTORS;
  reconciled = 0;
  retiredChecks = 0;
  /** Set when the run ends, also on failure, so no loop outlives the test. */
  stopped = false;
  readonly deadline = Date.now() + RUN_LIMIT_MS;

  constructor(
    readonly servers: Server[],
    readonly admin: string,
    readonly provider: Provider,
  ) {
    this.clients = servers.map((s) => new HttpBatonClient({ baseUrl: s.url, token: admin }));
  }

  live(preferred: number): number {
    for (let i = 0; i < SERVERS; i++) {
      const n = (preferred + i) % SERVERS;
      if (!this.servers[n]!.dead) return n;
    }
    throw new Error('no server left');
  }

  tally(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }
}

function operation(lineage: string, n: number, profile: JsonObject): Operation {
  const a = AUTHORITIES[n % AUTHORITIES.length]!;
  return {
    creationKey: `${lineage}-op-${n}`,
    provider: { profileId: profile['id'] as string, profileVersion: profile['version'] as string },
    request: { amount: a.amount, currency: 'eur', payee: 'acme-supplies', invoice: `inv-${lineage}-${n}` },
    authority: { id: a.id, amount: a.amount },
  };
}

const code = (r: PerformResult): string | undefined => r.errorCode ?? r.reason;

/** The server asks the sandbox's signed status sources (the only way an outcome moves, AOC-REQ-009). */
async function reconcile(run: Run, server: number, id: string): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const url = run.servers[run.live(server)]!.url;
    let r: Awaited<ReturnType<typeof request>>;
    try {
      r = await request(url, 'POST', `/v1/occurrences/${id}/reconcile`, { token: run.admin });
    } catch (error) {
      // No answer: the server was killed under this call (it is marked dead before the kill).
      if (run.servers.some((s) => s.dead && s.url === url)) continue;
      throw error;
    }
    if (r.status === 200) run.reconciled += 1;
    else
      run.tally(run.refusals, `reconcile:${typeof r.body['code'] === 'string' ? r.body['code'] : r.status}`);
    return;
  }
}

/** A generation_retired answer: wait for the takeover's credential, then act as the successor. */
async function successor(run: Run, lineage: string, generation: number): Promise<ExecutorBinding> {
  for (;;) {
    const b = run.current.get(lineage);
    if (b !== undefined && b.generation > generation) return b;
    if (run.stopped || Date.now() > run.deadline + 60_000) throw new Error(`no successor for ${lineage}`);
    await sleep(20);
  }
}

async function worker(run: Run, index: number): Promise<void> {
  try {
    await operations(run, index);
  } finally {
    run.workersLeft -= 1;
  }
}

/**
 * The executor's steps without its status-source pass: the acknowledgement alone is recorded (the
 * single-step route), no source is asked, and perform stops at awaiting_status.
 */
function withoutReconcile(exec: Executor): Parameters<typeof perform>[0] {
  return {
    createAndEnter: (o, expect) => exec.createAndEnter(o, expect),
    acknowledgeAndSettle: async (a) => {
      const acknowledgement = await exec.acknowledge(a);
      const { occurrence } = acknowledgement;
      const unresolved = occurrence.unresolved ? [occurrence.id] : [];
      const report = {
        passes: 0,
        visited: 0,
        observations: 0,
        effective: 0,
        resolved: [],
        unresolved,
        byReason: {},
      };
      return { occurrence, acknowledgement, report, missingKnowledge: null };
    },
  };
}

async function operations(run: Run, index: number): Promise<void> {
  const lineage = `lineage-${index}`;
  let server = index % SERVERS;
  let exec: Executor = run.clients[server]!.resume(run.current.get(lineage)!);
  for (let n = 0; n < OPS_PER_EXECUTOR && Date.now() < run.deadline && !run.stopped; n++) {
    const op = operation(lineage, n, run.provider.profile);
    let last: PerformResult | undefined;
    for (let attempt = 0; attempt < 6; attempt++) {
      // Some stay awaiting status on purpose, so the unresolved ones are there to be queried.
      const r =
        n % LEFT_UNRESOLVED === 3
          ? await perform(withoutReconcile(exec), op, run.provider.adapter)
          : await exec.perform(op, run.provider.adapter);
      last = r;
      if (r.occurrenceId !== null) run.occurrenceIds.add(r.occurrenceId);
      if (r.status === 'refused' || r.errorCode !== undefined) run.tally(run.refusals, code(r) ?? '?');
      if (code(r) === 'generation_retired') {
        exec = run.clients[server]!.resume(await successor(run, lineage, exec.generation));
      } else if (r.errorCode === 'unavailable' || r.reason === 'entry_unconfirmed') {
        // The server may be gone: carry on against a surviving one (the creation binding makes
        // the repeated create return the same occurrence; an entered one is never sent again).
        if (run.servers[server]!.dead) server = run.live(server + 1);
        else await sleep(50);
        exec = run.clients[server]!.resume(run.current.get(lineage)!);
      } else break;
    }
    if (last !== undefined) run.tally(run.results, last.status);
    if (last?.status === 'unresolved' && last.occurrenceId !== null && n % LEFT_UNRESOLVED !== 3) {
      await reconcile(run, server, last.occurrenceId);
    }
    run.done += 1;
  }
}

async function takeover(run: Run, lineage: string, server: number): Promise<ExecutorBinding> {
  const r = await request(run.servers[server]!.url, 'POST', `/v1/lineages/${lineage}/takeover`, {
    token: run.admin,
  });
  assert.equal(r.status, 201, r.text);
  const b = {
    lineage,
    generation: r.body['generation'] as number,
    credential: r.body['credential'] as string,
  };
  run.current.set(lineage, b);
  return b;
}

/** Mid-run takeovers, each checked: the retired generation is refused on a live server (AOC-REQ-006). */
async function controller(run: Run): Promise<void> {
  let killed = false;
  for (let k = 0; run.workersLeft > 0 && !run.stopped;) {
    await sleep(25);
    if (!killed && run.done >= KILL_AFTER) {
      killed = true;
      run.servers[SERVERS - 1]!.dead = true;
      run.servers[SERVERS - 1]!.proc.kill('SIGKILL');
    }
    if (k >= TAKEOVERS || run.done < ((k + 1) * EXECUTORS * OPS_PER_EXECUTOR) / (TAKEOVERS + 2)) continue;
    const lineage = `lineage-${(k * 5) % EXECUTORS}`;
    const old = run.current.get(lineage)!;
    await takeover(run, lineage, run.live(k));
    const stale = operation(lineage, 1_000 + k, run.provider.profile);
    const r = await request(run.servers[run.live(k + 1)]!.url, 'POST', '/v1/occurrences', {
      token: old.credential,
      body: stale,
    });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.body['code'], 'generation_retired');
    run.retiredChecks += 1;
    k += 1;
  }
}

interface Seen {
  readonly occurrence: OccurrenceView;
  readonly entries: number;
  readonly evidence: number;
}

async function readAll(run: Run, ids: readonly string[]): Promise<Seen[]> {
  const client = run.clients[run.live(0)]!;
  const seen: Seen[] = [];
  for (const id of ids) {
    const { occurrence, evidence } = await client.getOccurrence(id);
    const entries = evidence.filter((e) => e.type === 'provider_entered').length;
    seen.push({ occurrence, entries, evidence: evidence.length });
  }
  return seen;
}

async function authorityConsumed(run: Run, id: string): Promise<number> {
  const r = await request(run.servers[run.live(1)]!.url, 'GET', `/v1/authorities/${id}`, {
    token: run.admin,
  });
  assert.equal(r.status, 200, r.text);
  return r.body['consumed'] as number;
}

async function check(t: TestContext, run: Run, url: string): Promise<void> {
  const rows = await withClient(url, (c) => c.query<{ id: string }>('SELECT id FROM aoc_occurrences'));
  const ids = rows.rows.map((r) => r.id);
  for (const id of run.occurrenceIds) assert.ok(ids.includes(id), `${id} is in the database`);
  const seen = await readAll(run, ids);
  const sandbox = run.provider.sandbox;
  for (const e of sandbox.effects()) assert.ok(sandbox.effectCount(e.key) <= 1, `one effect for ${e.key}`);
  for (const [key, n] of run.provider.adapter.sends) assert.equal(n, 1, `${key} was sent once`);
  const enteredKeys = new Set<string>();
  let succeeded = 0;
  let unresolved = 0;
  for (const s of seen) {
    const o = s.occurrence;
    assert.ok(s.entries <= 1, `${o.id} entered at most once`);
    assert.equal(s.entries === 1, o.enteredAt !== null, `${o.id}: entry evidence matches the record`);
    if (o.enteredAt !== null && o.provider.nativeKey !== null) enteredKeys.add(o.provider.nativeKey);
    if (o.phase === 'resolved' && o.effect === 'occurred') {
      succeeded += 1;
      assert.equal(sandbox.effectCount(o.provider.nativeKey ?? ''), 1, `${o.id} has exactly one effect`);
    }
    if (o.phase === 'entered' || o.conflict) {
      unresolved += 1;
      assert.ok(s.evidence > 0, `${o.id} (unresolved) answers with its evidence`);
    }
  }
  for (const e of sandbox.effects()) assert.ok(enteredKeys.has(e.key), `effect ${e.key} was entered`);
  const entered = seen.filter((s) => s.occurrence.enteredAt !== null);
  for (const a of AUTHORITIES) {
    const n = entered.filter((s) => s.occurrence.authority.id === a.id).length;
    assert.equal(await authorityConsumed(run, a.id), n * a.amount, `${a.id}: consumed = entries × amount`);
  }
  const verify = await request(run.servers[run.live(0)]!.url, 'GET', '/v1/evidence/verify', {
    token: run.admin,
  });
  assert.equal(verify.status, 200, verify.text);
  assert.equal(verify.body['ok'], true, verify.text);
  assert.ok(succeeded > 0, 'some payments reached success');
  assert.ok(unresolved > 0, 'some occurrences were left unresolved, and each was queried');
  t.diagnostic(
    `occurrences ${seen.length}, entries ${entered.length}, succeeded ${succeeded}, unresolved ${unresolved}, ` +
      `sandbox effects ${sandbox.effects().length}, evidence events ${JSON.stringify(verify.body['events'])}`,
  );
}

if (db !== undefined) {
  test(
    'three baton serve processes, sixteen executors, takeovers and a SIGKILL: no duplicate effect',
    {
      timeout: 600_000,
    },
    async (t) => {
      const started = Date.now();
      const url = await db.schema();
      const dir = mkdtempSync(join(tmpdir(), 'baton-multi-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const provider = await startProvider(t);
      const env = { ...process.env, BATON_HMAC_SECRETS: provider.hmacEnv };
      const key = join(dir, 'shared.domain-key.pem');
      // --pool 8: sixteen executors over three servers, each server's pool smaller than its share.
      const args = ['--postgres', url, '--domain-key', key, '--port', '0', '--pool', '8'];
      const servers: Server[] = [];
      // One after another: the first creates the key file and prints the one admin token.
      for (let i = 0; i < SERVERS; i++) servers.push(await serve(t, [...args, '--log-level', 'silent'], env));
      const admin = /^initial admin token .*: (btk\.\S+)$/.exec(servers[0]!.lines[0] ?? '')?.[1];
      assert.ok(admin !== undefined, 'the first server printed the admin token');
      await setup(servers[1]!.url, admin, provider.profile);

      const run = new Run(servers, admin, provider);
      for (let i = 0; i < EXECUTORS; i++) await takeover(run, `lineage-${i}`, i % SERVERS);
      try {
        await Promise.all([controller(run), ...Array.from({ length: EXECUTORS }, (_, i) => worker(run, i))]);
      } finally {
        run.stopped = true;
      }
      assert.equal(run.retiredChecks, TAKEOVERS, 'every mid-run takeover was made and checked');
      assert.ok(servers[SERVERS - 1]!.dead, 'one server was killed mid-run');

      await check(t, run, url);
      const refusals = [...run.refusals].map(([k, v]) => `${k}=${v}`).join(' ');
      const results = [...run.results].map(([k, v]) => `${k}=${v}`).join(' ');
      t.diagnostic(`operations ${run.done} (perform results: ${results}), reconciled ${run.reconciled}`);
      t.diagnostic(`takeovers ${TAKEOVERS} mid-run, refusals by code: ${refusals || 'none'}`);
      t.diagnostic(`elapsed ${Date.now() - started} ms`);
    },
  );
}
