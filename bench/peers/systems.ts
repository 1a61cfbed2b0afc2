/**
 * The systems of the peer bench (issue 16 §7), each doing the same job: ONE payment call to the
 * same sandbox provider process that a crash must never duplicate, with durable settings.
 * - Baton: `executor.perform` (create-and-enter → the payment → acknowledge-and-settle), in process
 *   (InProcessBatonClient) or over HTTP (HttpBatonClient against a `baton serve` child), on SQLite
 *   (synchronous=FULL, WAL) or PostgreSQL; one lineage and one authority per worker.
 * - DBOS Transact: a workflow with one step that makes the payment call under a key derived from
 *   the workflow id, its system database on the local PostgreSQL.
 * - Restate: a service whose handler makes the payment in `ctx.run`, invoked through the ingress
 *   of a restate-server child on loopback, with an idempotency key per invocation.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { HttpBatonClient, type Executor, type Operation } from '../../src/client/index.js';
import { InProcessBatonClient } from '../../src/client/in-process.js';
import type { RegisteredProfile } from '../../src/occurrences/index.js';
import {
  DEFAULT_ACCOUNT,
  hmacSecretId,
  HttpProviderAdapter,
  sandboxEntryUrl,
  staticKeys,
  StatusSources,
  type SandboxProvider,
} from '../../src/providers/index.js';
import { openOccurrencesOn, openPostgresEngine, openSqliteEngine } from '../../src/store/index.js';
import { openPostgresFloor, openSqliteFloor } from '../floor.js';
import { domain } from '../occurrences-fixtures.js';
import { childCpuMs } from './procs.js';

export interface System {
  readonly name: string;
  /** One job by worker `w`, number `n`. Resolves when the payment is durably settled. */
  job(w: number, n: number): Promise<void>;
  /** CPU of the system's own child process (ms so far), when it has one. */
  childCpuMs?(): number;
  /** The child's pid (`PEER_CPU_CALLGRIND`: bench/peers/cpu.ts turns its instruction count on and off). */
  readonly childPid?: number;
  /**
   * Milliseconds of each Baton call the jobs made, by call (create-and-enter, acknowledge-and-
   * settle), as the client saw them: what issue 16's "p99 per Baton call" target is about.
   */
  readonly calls?: CallTimes;
  /** `baton serve`'s /metrics, for the breakdown of its calls' time (bench/peers/breakdown.ts). */
  readonly metricsUrl?: string;
  close(): Promise<void>;
}

export type CallTimes = Map<string, number[]>;

const TIMED_CALLS = ['createAndEnter', 'acknowledgeAndSettle'] as const;
const CALL_NAMES: Readonly<Record<(typeof TIMED_CALLS)[number], string>> = {
  createAndEnter: 'create-and-enter',
  acknowledgeAndSettle: 'acknowledge-and-settle',
};

/** Time the executor's two Baton calls (perform calls them through the executor: perform.ts). */
function timeCalls(x: Executor, calls: CallTimes): void {
  for (const method of TIMED_CALLS) {
    const original = x[method].bind(x) as (...args: unknown[]) => Promise<unknown>;
    const times = calls.get(CALL_NAMES[method]) ?? [];
    calls.set(CALL_NAMES[method], times);
    Object.defineProperty(x, method, {
      value: async (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return await original(...args);
        } finally {
          times.push(performance.now() - t0);
        }
      },
    });
  }
}

export interface Provider {
  readonly sandbox: SandboxProvider;
  readonly hmac: Buffer;
}

const AMOUNT = 100;

/** A creation-key prefix from the system's name (keys are NAME-shaped: no spaces). */
const tagOf = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '-');

function payment(n: number) {
  return { amount: AMOUNT, currency: 'eur', payee: 'acme-supplies', invoice: `peer-${n}` };
}

/** The bare payment call the engines make (the sandbox applies it at most once per key). */
export async function pay(p: Provider, key: string, n: number): Promise<void> {
  const url = sandboxEntryUrl(p.sandbox.url).replace('{account}', DEFAULT_ACCOUNT);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(payment(n)),
  });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`sandbox answered ${res.status}`);
}

function operation(profile: RegisteredProfile, w: number, n: number, tag: string): Operation {
  return {
    creationKey: `${tag}-${n}`,
    provider: { profileId: profile.id, profileVersion: profile.version },
    request: payment(n),
    authority: { id: `peer-${w}`, amount: AMOUNT },
  };
}

function performAll(
  executors: readonly Executor[],
  adapter: HttpProviderAdapter,
  op: (w: number, n: number) => Operation,
) {
  return async (w: number, n: number): Promise<void> => {
    const x = executors[w];
    if (x === undefined) throw new Error('no executor');
    const r = await x.perform(op(w, n), adapter);
    if (r.status !== 'succeeded')
      throw new Error(`perform: ${r.status} ${r.reason ?? ''} ${r.errorCode ?? ''}`.trimEnd());
  };
}

/** Baton in this process over an engine (SQLite file or PostgreSQL database). */
export async function batonInProcess(
  name: string,
  p: Provider,
  profileDoc: unknown,
  store: { sqlite: string } | { postgres: string; keyBase: string },
  workers: number,
): Promise<System> {
  const engine = 'sqlite' in store ? openSqliteEngine(store.sqlite) : openPostgresEngine(store.postgres);
  const keyBase = 'sqlite' in store ? store.sqlite : store.keyBase;
  const { service } = await openOccurrencesOn(engine, keyBase);
  await service.configureDomain(domain() as never);
  const profile = await service.registerProfile(profileDoc);
  for (let w = 0; w < workers; w++)
    await service.createAuthority({ id: `peer-${w}`, unit: 'EUR-cents', total: 1e12 });
  const keys = staticKeys({ [hmacSecretId(p.hmac)]: p.hmac });
  const client = new InProcessBatonClient({ service, statusSources: new StatusSources({ keys }) });
  const executors: Executor[] = [];
  for (let w = 0; w < workers; w++) executors.push(await client.takeover(`peer-${w}`));
  const adapter = new HttpProviderAdapter(profile.document, {
    entryUrl: sandboxEntryUrl(p.sandbox.url),
    keys,
  });
  const job = performAll(executors, adapter, (w, n) => operation(profile, w, n, tagOf(name)));
  return { name, job, close: () => engine.close() };
}

/** `node dist/src/cli/main.js serve` as a child; resolves with its URL and first admin token. */
/**
 * Node options for the `baton serve` children only, e.g. `PEER_SERVE_NODE_ARGS=--cpu-prof` to
 * profile the server (Node refuses `--cpu-prof` in NODE_OPTIONS). Split on spaces.
 */
const SERVE_NODE_ARGS = (process.env['PEER_SERVE_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
/**
 * A command the `baton serve` children run under, e.g. `PEER_SERVE_EXEC="valgrind --tool=callgrind
 * --instr-atstart=no"` to count the server's instructions (with `PEER_SERVE_NODE_ARGS=--single-threaded`).
 * Split on spaces.
 */
const SERVE_EXEC = (process.env['PEER_SERVE_EXEC'] ?? '').split(' ').filter((a) => a !== '');

function serve(cli: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  const node = [...SERVE_NODE_ARGS, cli, 'serve', '--port', '0', '--log-level', 'warn', ...args];
  const [exec, ...execArgs] = SERVE_EXEC;
  const child: ChildProcess = spawn(
    exec ?? process.execPath,
    exec === undefined ? node : [...execArgs, process.execPath, ...node],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise<{ url: string; admin: string; child: ChildProcess }>((resolve, reject) => {
    let out = '';
    let admin = '';
    const timer = setTimeout(() => reject(new Error('baton serve did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`baton serve exited with ${String(code)}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      admin ||= /initial admin token[^:]*: (\S+)/.exec(out)?.[1] ?? '';
      const url = /baton listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ url, admin, child });
    });
  });
}

async function setup(
  url: string,
  token: string,
  method: string,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Baton over HTTP: a `baton serve` child on the store, the SDK's HttpBatonClient in this process. */
export async function batonOverHttp(
  name: string,
  p: Provider,
  profileDoc: unknown,
  storeArgs: readonly string[],
  hmacSecretIdValue: string,
  workers: number,
): Promise<System> {
  const cli = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.js');
  const secrets = `${hmacSecretIdValue}=${p.hmac.toString('base64url')}`;
  const s = await serve(cli, storeArgs, { BATON_HMAC_SECRETS: secrets });
  try {
    await setup(s.url, s.admin, 'PUT', '/v1/domain', domain());
    const profile = (await setup(
      s.url,
      s.admin,
      'POST',
      '/v1/profiles',
      profileDoc,
    )) as unknown as RegisteredProfile;
    for (let w = 0; w < workers; w++)
      await setup(s.url, s.admin, 'POST', '/v1/authorities', {
        id: `peer-${w}`,
        unit: 'EUR-cents',
        total: 1e12,
      });
    const client = new HttpBatonClient({ baseUrl: s.url, token: s.admin });
    const executors: Executor[] = [];
    for (let w = 0; w < workers; w++) executors.push(await client.takeover(`peer-${w}`));
    const calls: CallTimes = new Map();
    for (const x of executors) timeCalls(x, calls);
    const adapter = new HttpProviderAdapter(profile.document, {
      entryUrl: sandboxEntryUrl(p.sandbox.url),
      keys: staticKeys({ [hmacSecretId(p.hmac)]: p.hmac }),
    });
    const job = performAll(executors, adapter, (w, n) => operation(profile, w, n, tagOf(name)));
    const stop = () =>
      new Promise<void>((done) => {
        if (s.child.exitCode !== null) return done();
        s.child.once('exit', () => done());
        s.child.kill('SIGTERM');
      });
    return {
      name,
      job,
      calls,
      metricsUrl: `${s.url}/metrics`,
      childCpuMs: () => childCpuMs(s.child.pid),
      ...(s.child.pid !== undefined && { childPid: s.child.pid }),
      close: stop,
    };
  } catch (error) {
    s.child.kill('SIGKILL');
    throw error;
  }
}

/**
 * The ceiling beside a missed target (docs/scale.md): the same job as plain SQL — the three
 * transactions of bench/floor.ts (create, enter, observe) on a store of the same engine and
 * migrations — plus the same payment call, with no HTTP API, no authentication, no evidence chain.
 */
export async function plainSqlCeiling(
  p: Provider,
  store: { sqlite: string } | { postgres: string },
  workers: number,
): Promise<System> {
  if ('sqlite' in store) {
    const floor = await openSqliteFloor(store.sqlite, workers);
    return {
      name: 'ceiling: plain SQL SQLite',
      job: async (w, n) => {
        await floor.batched(w, n);
        await pay(p, `ceiling-sqlite-${n}`, n);
      },
      close: () => Promise.resolve(floor.close()),
    };
  }
  const floor = await openPostgresFloor(store.postgres, workers);
  return {
    name: 'ceiling: plain SQL PostgreSQL',
    job: async (w, n) => {
      await floor.lifecycle(w, n);
      await pay(p, `ceiling-pg-${n}`, n);
    },
    close: () => floor.close(),
  };
}
