/**
 * The guarded lifecycle over HTTP (docs/api.md, docs/scale.md): a real `baton serve` process on
 * 127.0.0.1 (SQLite file, or PostgreSQL when reachable — skipped with a printed line otherwise),
 * executors using fetch (undici, keep-alive) with their takeover credentials, and the real sandbox
 * payments provider. One lifecycle = POST /v1/occurrences (create+reserve+bind), POST …/enter, the
 * executor's payment call to the provider, POST …/reconcile (the server asks the pinned status
 * source, verifies the signed answer, and the occurrence resolves). Concurrency 1 and 16 (16
 * executors, each its own lineage and budget). Prints occurrences/s and p50/p99 per Baton call;
 * the provider call is timed apart. Compare with bench/store-concurrency.bench.ts (in-process).
 *
 *   node --import tsx bench/http.bench.ts   (BENCH_ROUND_MS=2000 BENCH_ROUNDS=2; BENCH_ENGINES=sqlite,postgres)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EntryTicket } from '../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  NO_KEYS,
  sandboxDeployment,
  sandboxEntryUrl,
} from '../src/providers/index.js';
import { domain } from './occurrences-fixtures.js';
import {
  benchDatabase,
  describe,
  percentile,
  postgresBenchUrl,
  postgresProblem,
  postgresSettings,
  rate,
  redact,
  round,
  tally,
  type Lifecycle,
} from './support.js';

const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 2000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 2);
const ENGINES = (process.env['BENCH_ENGINES'] ?? 'sqlite,postgres').split(',');
const EXECUTORS = 16;
const HMAC = Buffer.alloc(32, 9);

type Json = Record<string, unknown>;

/** The `baton` CLI next to this file: TypeScript under tsx, or the compiled one under dist/. */
function cli(): string[] {
  const here = fileURLToPath(import.meta.url);
  const root = join(dirname(here), '..');
  return here.endsWith('.ts')
    ? [...process.execArgv, join(root, 'src/cli/main.ts')]
    : [join(root, 'src/cli/main.js')];
}

interface Server {
  readonly url: string;
  readonly admin: string;
  stop(): Promise<void>;
}

/** Start `baton serve` and read its first-admin token and listening line from stdout. */
function serve(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Server> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...cli(), 'serve', '--port', '0', '--log-level', 'warn', ...args],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let admin = '';
    child.once('exit', (code) => reject(new Error(`baton serve exited with ${String(code)}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      admin ||= /initial admin token[^:]*: (\S+)/.exec(out)?.[1] ?? '';
      const listening = /baton listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (listening === undefined) return;
      child.removeAllListeners('exit');
      resolve({
        url: listening,
        admin,
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

async function call(
  server: Server,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Json> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as Json;
  if (response.status >= 300)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

interface Executor {
  readonly credential: string;
  readonly authority: string;
}

async function bench(label: string, store: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const sandbox = createSandboxProvider({ hmacSecret: HMAC });
  const origin = await sandbox.listen(0, '127.0.0.1');
  const deployment = sandboxDeployment(sandbox);
  const secrets = `${deployment.hmacSecretId ?? ''}=${HMAC.toString('base64url')}`;
  const server = await serve(store, { ...env, BATON_HMAC_SECRETS: secrets });
  try {
    const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
    await call(server, 'PUT', '/v1/domain', server.admin, domain());
    await call(server, 'POST', '/v1/profiles', server.admin, profile);
    const executors: Executor[] = [];
    for (let e = 0; e < EXECUTORS; e++) {
      const authority = `payouts-${e}`;
      await call(server, 'POST', '/v1/authorities', server.admin, {
        id: authority,
        unit: 'EUR-cents',
        total: 1e12,
      });
      const t = await call(server, 'POST', `/v1/lineages/bench-agent-${e}/takeover`, server.admin);
      executors.push({ credential: String(t['credential']), authority });
    }
    const adapter = new HttpProviderAdapter(profile, { entryUrl: sandboxEntryUrl(origin), keys: NO_KEYS });
    const provider: number[] = [];
    const lifecycle: Lifecycle = async (w, n) => {
      const x = executors[w] as Executor;
      const t0 = performance.now();
      const created = await call(server, 'POST', '/v1/occurrences', x.credential, {
        creationKey: `k-${n}`,
        provider: { profileId: profile.id, profileVersion: profile.version },
        request: { amount: 100 + (n % 50), currency: 'eur', payee: `payee-${n % 97}`, invoice: `inv-${n}` },
        authority: { id: x.authority, amount: 100 },
      });
      const id = String((created['occurrence'] as Json)['id']);
      const t1 = performance.now();
      const ticket = (await call(
        server,
        'POST',
        `/v1/occurrences/${id}/enter`,
        x.credential,
      )) as unknown as EntryTicket;
      const t2 = performance.now();
      const sent = await adapter.send(ticket);
      if (sent.httpStatus === null || sent.httpStatus >= 300)
        throw new Error(`the payment call failed: ${sent.detail}`);
      const t3 = performance.now();
      const r = await call(server, 'POST', `/v1/occurrences/${id}/reconcile`, x.credential);
      if ((r['occurrence'] as Json)['outcome'] !== 'success')
        throw new Error('the lifecycle did not resolve');
      provider.push(t3 - t2);
      return [t1 - t0, t2 - t1, performance.now() - t3];
    };
    let n = 0;
    for (const c of [1, EXECUTORS]) {
      await round(lifecycle, c, 300, tally(), () => ++n);
      provider.length = 0;
      const t = tally();
      for (let r = 0; r < ROUNDS; r++) {
        const perSecond = await round(lifecycle, c, ROUND_MS, t, () => ++n);
        console.log(`  ${label} c=${c} round ${r + 1}/${ROUNDS}: ${perSecond.toFixed(0)} occurrences/s`);
      }
      console.log(`  ${label} c=${String(c).padEnd(2)} ${describe(t, false)}`);
      console.log(
        `        (the executor's payment call to the provider, not counted above: p50 ${percentile(provider, 50).toFixed(2)} ms, p99 ${percentile(provider, 99).toFixed(2)} ms; ${(rate(t) * 4).toFixed(0)} HTTP requests/s to Baton and the provider)`,
      );
    }
  } finally {
    await server.stop();
    await sandbox.close();
  }
}

async function main(): Promise<void> {
  console.log(
    `HTTP bench: baton serve on 127.0.0.1 (a child process), fetch with keep-alive, sandbox provider; ${ROUNDS} rounds of ${ROUND_MS} ms, concurrency 1 and ${EXECUTORS}; node ${process.version}`,
  );
  if (ENGINES.includes('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'baton-http-bench-'));
    try {
      console.log('SQLite (WAL, synchronous=FULL):');
      await bench('sqlite', ['--db', join(dir, 'baton.db')], {});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (ENGINES.includes('postgres')) {
    const url = postgresBenchUrl();
    const problem = await postgresProblem(url);
    if (problem !== undefined) {
      console.log(`PostgreSQL not reachable at ${redact(url)}: skipping the PostgreSQL figures (${problem})`);
      return;
    }
    console.log(`PostgreSQL at ${redact(url)}: ${await postgresSettings(url)}`);
    const db = await benchDatabase(url, 'http');
    const dir = mkdtempSync(join(tmpdir(), 'baton-http-bench-'));
    try {
      await bench('postgres', ['--postgres', db.url, '--domain-key', join(dir, 'bench.domain-key.pem')], {});
    } finally {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

await main();
