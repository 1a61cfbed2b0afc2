/**
 * The MCP gateway's added latency (issue 15, item 7): a consequential `pay` call through `baton mcp`
 * against the same call straight to the upstream MCP server, in the same run, rounds alternated
 * (bench/support.ts `compare`), over stdio and over Streamable HTTP, at concurrency 1 and 16.
 * All real: the sandbox payments provider, a SQLite Baton store, the test upstream MCP server
 * (test/mcp/upstream-payments.ts), and `baton mcp` as a child process, two ways:
 * - `--baton URL`: Baton's HTTP server in the bench process (two Baton HTTP round trips per call);
 * - `--db FILE`:  Baton's service inside the gateway process on the same SQLite file (no Baton hop).
 * - HTTP:  agent → upstream (Streamable HTTP)   vs  agent → `baton mcp --http` → upstream (HTTP)
 * - stdio: agent → upstream child (stdio)       vs  agent → `baton mcp` (stdio) → upstream child (stdio)
 * Per call the gateway does create-and-enter (one durable commit before anything is sent), the
 * upstream call, then acknowledge-and-settle (one status-source query: the sandbox's pinned by-key
 * lookup, signature checked, then one durable commit). Every gateway answer is checked settled.
 * The ceiling (bench/mcp-ceiling.ts), measured in the same run, rounds alternated with direct: the
 * added p50 of the ceiling gateway (bench/mcp-ceiling-gateway.ts), a minimal pass-through proxy in
 * its own child process doing per `pay` two plain-SQL durable commits on the same file and one
 * keep-alive status query to the sandbox, signature checked. The older component sum (bare
 * pass-through `baton mcp` hop + commits + status query timed in the bench process) is printed too,
 * labelled. Target: ≤ 2 ms added p50 on SQLite at concurrency 1.
 *
 *   npm run build && node dist/bench/mcp.bench.js   (BENCH_ROUND_MS=2000 BENCH_ROUNDS=3)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { systemClock } from '../src/core/clock.js';
import { META_OCCURRENCE, perRequestSignalFetch } from '../src/mcp/index.js';
import type { UpstreamSpec } from '../src/mcp/upstream.js';
import { BYPASS_PATH_KINDS } from '../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
  staticKeys,
  StatusSources,
} from '../src/providers/index.js';
import { buildServer, createToken } from '../src/server/index.js';
import { openOccurrencesOnSqlite } from '../src/store/index.js';
import { MAIN, policyFor, UPSTREAM_SCRIPT } from '../test/mcp/world.js';
import { newControl, serveUpstreamHttp } from '../test/mcp/upstream-payments.js';
import type { CeilingGatewayConfig } from './mcp-ceiling-gateway.js';
import { ceilingOf, echoCeilingOf, measureCeiling, sumCeilingOf, type CeilingParts } from './mcp-ceiling.js';
import { cpuClock } from './proc-cpu.js';
import { compare, percentile, type Results, type Side } from './support.js';

const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 2000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const plan = { rounds: ROUNDS, roundMs: ROUND_MS, warmupMs: 1000 };
const run = randomBytes(4).toString('hex');
const TARGET_MS = 2;

async function world(dir: string) {
  const secret = randomBytes(32);
  const sandbox = createSandboxProvider({ signing: 'hmac', hmacSecret: secret });
  await sandbox.listen(0, '127.0.0.1');
  const deployment = sandboxDeployment(sandbox);
  const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
  const dbFile = join(dir, 'baton.db');
  const store = await openOccurrencesOnSqlite(dbFile);
  const limit = 10_000;
  await store.service.configureDomain({
    id: 'mcp-bench',
    limits: {
      maxPendingPerLineage: limit,
      maxInFlightPerLineage: limit,
      maxPendingPerDomain: limit,
      maxInFlightPerDomain: limit,
      entryWindowSeconds: 300,
    },
    bypassPaths: BYPASS_PATH_KINDS.map((kind) => ({
      kind,
      status: 'unknown' as const,
      description: 'bench',
    })),
  });
  await store.service.registerProfile(JSON.parse(JSON.stringify(profile)));
  await store.service.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: Number.MAX_SAFE_INTEGER });
  const secretId = deployment.hmacSecretId ?? '';
  const keys = staticKeys({ [secretId]: secret });
  const app = buildServer({
    engine: store.engine,
    service: store.service,
    keys,
    logLevel: 'silent',
  } as Parameters<typeof buildServer>[0]);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const { token } = await createToken(
    store.engine,
    { role: 'operator' },
    { clock: systemClock, actor: 'bench' },
  );
  const upstream = await serveUpstreamHttp(sandbox.url, newControl());
  // One lineage per gateway: each gateway's session is a generation of its own (one would retire the other).
  // A pass-through policy lists no tool: `pay` goes straight through (the ceiling's bare proxy).
  const policyFile = (lineage: string, passThrough = false): string => {
    const file = join(dir, `${lineage}.policy.json`);
    const policy = { ...policyFor(profile, { settle: { statusSources: true } }), lineage };
    writeFileSync(file, JSON.stringify(passThrough ? { ...policy, tools: {} } : policy));
    return file;
  };
  const close = async (): Promise<void> => {
    await upstream.close();
    await app.close();
    await store.close();
    await sandbox.close();
  };
  const sources = new StatusSources({ keys });
  /** The status-source query a settlement needs, alone: the sandbox's by-key lookup, signature checked. */
  const statusQuery = async (occurrenceId: string): Promise<() => Promise<void>> => {
    const o = await store.service.getOccurrenceView(occurrenceId);
    const source = sources.applicable(profile, o)[0];
    if (source === undefined) throw new Error('the sandbox profile pins no usable status source');
    return async () => {
      const { observation } = await sources.query(profile, o, source.id);
      if (observation.result !== 'found' || !observation.authentication.verified)
        throw new Error(`the status source did not confirm the payment: ${observation.result}`);
    };
  };
  // Where a `--db` gateway finds the status sources' secret: as `baton serve` does.
  const hmacEnv = { BATON_HMAC_SECRETS: `${secretId}=${secret.toString('base64url')}` };
  /** The ceiling gateway's config (bench/mcp-ceiling-gateway.ts): the lookup template is a settled occurrence's view. */
  const ceilingConfig = async (
    occurrenceId: string,
    upstream: UpstreamSpec,
    http: boolean,
  ): Promise<string> => {
    const file = join(dir, `ceiling-${http ? 'http' : 'stdio'}.json`);
    const occurrence = await store.service.getOccurrenceView(occurrenceId);
    const cfg: CeilingGatewayConfig = { db: dbFile, profile, occurrence, upstream, http };
    writeFileSync(file, JSON.stringify(cfg));
    return file;
  };
  return {
    ceilingConfig,
    sandbox,
    batonUrl: `http://127.0.0.1:${port}`,
    token,
    upstream,
    policyFile,
    dbFile,
    hmacEnv,
    statusQuery,
    close,
  };
}

type World = Awaited<ReturnType<typeof world>>;

/** How the gateway reaches Baton: over HTTP (`--baton`) or in its own process (`--db`). */
type Where = 'baton' | 'db';

function gatewayArgs(
  w: World,
  where: Where,
  lineage: string,
  upstream: string[],
  passThrough = false,
): string[] {
  const baton = where === 'baton' ? ['--baton', w.batonUrl] : ['--db', w.dbFile];
  return [MAIN, 'mcp', '--policy', w.policyFile(lineage, passThrough), ...baton, ...upstream];
}

function gatewayEnv(w: World, where: Where): Record<string, string> {
  const path = { PATH: process.env['PATH'] ?? '' };
  return where === 'baton' ? { ...path, BATON_TOKEN: w.token } : { ...path, ...w.hmacEnv };
}

/** The agent's Streamable HTTP client, on the fetch that gathers no listener per request (src/mcp/http-fetch.ts). */
const httpTransport = (url: string): StreamableHTTPClientTransport =>
  new StreamableHTTPClientTransport(new URL(url), { fetch: perRequestSignalFetch() });

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> {
  const c = new Client({ name: 'bench-agent', version: '1.0.0' });
  await c.connect(transport, { timeout: 30_000 });
  return c;
}

/** BENCH_GATEWAY_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`): node flags for the stdio children, to profile them. */
const NODE_ARGS = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');

function stdio(args: string[], env: Record<string, string>): StdioClientTransport {
  const all = [...NODE_ARGS, ...args];
  return new StdioClientTransport({ command: process.execPath, args: all, env, stderr: 'ignore' });
}

/** `baton mcp --http 0` as a child: its first stdout line names its URL. */
async function httpGateway(
  w: World,
  where: Where,
  passThrough = false,
): Promise<{ url: string; pid: number; stop(): void }> {
  const lineage = `bench-http-${where}${passThrough ? '-pass' : ''}`;
  const args = [
    ...gatewayArgs(w, where, lineage, ['--upstream', w.upstream.url], passThrough),
    '--http',
    '0',
  ];
  return urlChild(args, gatewayEnv(w, where));
}

/** A child serving MCP over HTTP whose first stdout line is `{"url": ...}`. */
async function urlChild(
  args: string[],
  env: Record<string, string>,
): Promise<{ url: string; pid: number; stop(): void }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args[0] ?? ''} --http did not start within 30 s`)),
      30_000,
    );
    child.stdout.once('data', (b: Buffer) => {
      clearTimeout(timer);
      resolve((JSON.parse(b.toString().split('\n')[0] ?? '{}') as { url: string }).url);
    });
  });
  return { url, pid: child.pid ?? Number.NaN, stop: () => void child.kill('SIGTERM') };
}

/** A stdio child and its pid (the gateway's own stdio upstream is its child: in its CPU tree). */
async function stdioChild(args: string[], env: Record<string, string>): Promise<Session> {
  const transport = stdio(args, env);
  const client = await connect(transport);
  return { client, pids: [transport.pid ?? Number.NaN] };
}

function stdioGateway(w: World, where: Where, passThrough = false): Promise<Session> {
  const upstream = ['--upstream-stdio', `${process.execPath} ${UPSTREAM_SCRIPT} ${w.sandbox.url}`];
  const lineage = `bench-stdio-${where}${passThrough ? '-pass' : ''}`;
  return stdioChild(gatewayArgs(w, where, lineage, upstream, passThrough), gatewayEnv(w, where));
}

/** The ceiling's bare proxy: `baton mcp` with no consequential tool, so `pay` passes straight through. */
async function passThroughSessions(w: World, stops: (() => Promise<void> | void)[]): Promise<Session[]> {
  const gw = await httpGateway(w, 'db', true);
  stops.push(() => gw.stop());
  const http: Session = { client: await connect(httpTransport(gw.url)), pids: [gw.pid] };
  const io = await stdioGateway(w, 'db', true);
  stops.push(
    () => http.client.close(),
    () => io.client.close(),
  );
  return [http, io];
}

const CEILING_GATEWAY = fileURLToPath(new URL('./mcp-ceiling-gateway.js', import.meta.url));

/** The ceiling gateway (bench/mcp-ceiling-gateway.ts) as `baton mcp --db` runs: HTTP and stdio children. */
async function ceilingSessions(
  w: World,
  occurrenceId: string,
  stops: (() => Promise<void> | void)[],
): Promise<[Session, Session]> {
  const env = { PATH: process.env['PATH'] ?? '', ...w.hmacEnv };
  const httpCfg = await w.ceilingConfig(occurrenceId, { name: 'payments', url: w.upstream.url }, true);
  const gw = await urlChild([CEILING_GATEWAY, httpCfg], env);
  stops.push(() => gw.stop());
  const http: Session = { client: await connect(httpTransport(gw.url)), pids: [gw.pid] };
  const upstream = { name: 'payments', command: process.execPath, args: [UPSTREAM_SCRIPT, w.sandbox.url] };
  const io = await stdioChild([CEILING_GATEWAY, await w.ceilingConfig(occurrenceId, upstream, false)], env);
  stops.push(
    () => http.client.close(),
    () => io.client.close(),
  );
  return [http, io];
}

const pay = (prefix: string, direct: boolean) => (n: number) => ({
  amount: 100,
  currency: 'eur',
  payee: 'acme',
  invoice: `${prefix}-${run}-${n}`,
  ...(direct ? { idempotency_key: `direct:${prefix}-${run}-${n}` } : {}),
});

/** The gateway's answer must be a settled occurrence: a bench of unsettled calls measures nothing. */
let lastOccurrence: string | undefined;
function checkSettled(name: string, r: CallToolResult): void {
  const meta = r._meta?.[META_OCCURRENCE] as { id?: string; unresolved?: boolean } | undefined;
  if (meta?.unresolved !== false || typeof meta.id !== 'string')
    throw new Error(`${name}: the occurrence did not settle: ${JSON.stringify(meta ?? null).slice(0, 200)}`);
  lastOccurrence = meta.id;
}

/** An agent's MCP session and the processes doing its work outside the bench process. */
interface Session {
  readonly client: Client;
  readonly pids: readonly number[];
}

function side(name: string, s: Session, args: (n: number) => Record<string, unknown>, via: boolean): Side {
  const client = s.client;
  return {
    name,
    // CPU per call: this process (agent, upstream, sandbox, Baton's server for --baton) + the children.
    cpuMs: cpuClock(() => s.pids),
    run: async (_wk, n) => {
      const t0 = performance.now();
      const r = (await client.callTool({ name: 'pay', arguments: args(n) }, undefined, {
        timeout: 60_000,
      })) as CallToolResult;
      const ms = performance.now() - t0;
      if (r.isError === true)
        throw new Error(`${name}: a tool error: ${JSON.stringify(r.content).slice(0, 200)}`);
      if (via) checkSettled(name, r);
      return [ms];
    },
  };
}

interface Line {
  readonly label: string;
  readonly c: number;
  readonly results: Results;
  readonly gw: string;
  readonly direct: string;
}

const p50 = (r: Results, side: string): number => percentile(r.get(side)?.t.calls ?? [], 50);
const addedP50 = (l: Line): number => p50(l.results, l.gw) - p50(l.results, l.direct);

function summary(l: Line): void {
  const g = l.results.get(l.gw)?.t;
  const d = l.results.get(l.direct)?.t;
  if (g === undefined || d === undefined) return;
  const rate = (t: typeof g): number => (t.lifecycles * 1000) / t.ms;
  const cpu = (t: typeof g): string =>
    Number.isFinite(t.cpuMs) ? `${(t.cpuMs / t.lifecycles).toFixed(2)} ms` : 'n/a';
  const p = (t: typeof g, q: number): number => percentile(t.calls, q);
  console.log(
    `  ${l.label.padEnd(13)} c=${String(l.c).padEnd(2)}  direct p50 ${p(d, 50).toFixed(2)} ms p99 ${p(d, 99).toFixed(2)} ms ${rate(d).toFixed(0)} calls/s | ` +
      `gateway p50 ${p(g, 50).toFixed(2)} ms p99 ${p(g, 99).toFixed(2)} ms ${rate(g).toFixed(0)} calls/s | ` +
      `added p50 ${(p(g, 50) - p(d, 50)).toFixed(2)} ms, p99 ${(p(g, 99) - p(d, 99)).toFixed(2)} ms | ` +
      `CPU per call (all processes) direct ${cpu(d)}, gateway ${cpu(g)}`,
  );
}

function verdict(lines: readonly Line[], parts: CeilingParts): void {
  const f = (x: number): string => x.toFixed(2);
  const per = (m: ReadonlyMap<string, number>): string =>
    `http ${f(m.get('http') ?? NaN)} ms, stdio ${f(m.get('stdio') ?? NaN)} ms`;
  console.log(
    `\nceiling (least any gateway adds, same run): the ceiling gateway's added p50 (${per(parts.gatewayMs)}): ` +
      `a pass-through proxy in its own process doing two plain-SQL durable commits + one keep-alive status query per pay`,
  );
  const ratio = (t: string): string =>
    ((parts.batonMs.get(t) ?? NaN) / (parts.gatewayMs.get(t) ?? NaN)).toFixed(2);
  console.log(
    `in that same comparison Baton's --db gateway added ${per(parts.batonMs)}: ` +
      `Baton/ceiling http ${ratio('http')}, stdio ${ratio('stdio')} (the like-for-like ratio)`,
  );
  console.log(
    `old component sum (too optimistic; commits and status query timed in the bench process): two plain-SQL ` +
      `durable commits ${f(parts.commitsMs)} ms + one status-source query ${f(parts.statusMs)} ms + the same pay ` +
      `through a bare pass-through proxy (${per(parts.passMs)}); the echo hop alone: ${per(parts.hopMs)}`,
  );
  for (const l of lines.filter((x) => x.c === 1)) {
    const transport = l.label.startsWith('http') ? 'http' : 'stdio';
    const reached = addedP50(l);
    const ceiling = ceilingOf(parts, transport);
    const met = reached <= TARGET_MS ? 'met' : 'NOT met';
    const below = TARGET_MS < ceiling ? '; the target is below the ceiling on this machine' : '';
    console.log(
      `verdict ${l.label.padEnd(13)} c=1: target ≤ ${f(TARGET_MS)} ms added p50: ${met}; reached ${f(reached)} ms; ` +
        `ceiling ${f(ceiling)} ms (reached/ceiling ${(reached / ceiling).toFixed(2)}; old component sum ` +
        `${f(sumCeilingOf(parts, transport))} ms, with the echo hop ${f(echoCeilingOf(parts, transport))} ms)${below}`,
    );
  }
}

interface Pair {
  readonly label: string;
  readonly via: Session;
  readonly direct: Session;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-bench-'));
  const w = await world(dir);
  const stops: (() => Promise<void> | void)[] = [];
  try {
    // One agent session per gateway, concurrent calls on it, as one agent runtime would make them
    // (each session its own generation: sixteen sessions of one lineage would retire each other).
    const directHttp: Session = {
      client: await connect(httpTransport(w.upstream.url)),
      pids: [],
    };
    const directStdio = await stdioChild([UPSTREAM_SCRIPT, w.sandbox.url], {
      PATH: process.env['PATH'] ?? '',
    });
    stops.push(
      () => directHttp.client.close(),
      () => directStdio.client.close(),
    );
    const pairs: Pair[] = [];
    for (const where of ['db', 'baton'] as const) {
      const gw = await httpGateway(w, where);
      stops.push(() => gw.stop());
      const viaHttp: Session = {
        client: await connect(httpTransport(gw.url)),
        pids: [gw.pid],
      };
      const viaStdio = await stdioGateway(w, where);
      stops.push(
        () => viaHttp.client.close(),
        () => viaStdio.client.close(),
      );
      pairs.push(
        { label: `http --${where}`, via: viaHttp, direct: directHttp },
        { label: `stdio --${where}`, via: viaStdio, direct: directStdio },
      );
    }
    console.log(
      `mcp gateway bench: SQLite, rounds ${ROUNDS} x ${ROUND_MS} ms, load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    const lines: Line[] = [];
    // BENCH_ONLY='stdio --db' BENCH_CONCURRENCY=1: one pair at one concurrency (profiling; the verdict needs all).
    const only = process.env['BENCH_ONLY'];
    const levels = (process.env['BENCH_CONCURRENCY'] ?? '1,16').split(',').map(Number);
    for (const c of levels) {
      for (const p of pairs.filter((x) => only === undefined || x.label === only)) {
        const tag = `${p.label.replace(/[^a-z]/g, '')}${c}`;
        const gw = `${p.label} gateway`;
        const direct = `${p.label} direct`;
        const results = await compare(
          `${p.label} c=${c}`,
          [side(gw, p.via, pay(tag, false), true), side(direct, p.direct, pay(`d${tag}`, true), false)],
          c,
          plan,
        );
        lines.push({ label: p.label, c, results, gw, direct });
      }
    }
    if (only !== undefined) {
      for (const l of lines) summary(l);
      return; // no ceiling and no verdict for one pair (a profile's run)
    }
    const [http, io] = [pairs[0], pairs[1]];
    if (http === undefined || io === undefined || lastOccurrence === undefined)
      throw new Error('no gateway ran');
    const [passHttp, passStdio] = await passThroughSessions(w, stops);
    if (passHttp === undefined || passStdio === undefined) throw new Error('no pass-through proxy');
    const [ceilHttp, ceilStdio] = await ceilingSessions(w, lastOccurrence, stops);
    const passSides = (t: string, via: Session, ceiling: Session, real: Pair) => ({
      via: side(`${t} pay via pass-through`, via, pay(`p${t}`, true), false),
      gateway: side(`${t} pay via ceiling gateway`, ceiling, pay(`c${t}`, true), false),
      baton: side(`${t} pay via Baton --db`, real.via, pay(`b${t}`, false), true),
      direct: side(`${t} pay direct`, real.direct, pay(`pd${t}`, true), false),
    });
    const parts = await measureCeiling({
      dbFile: w.dbFile,
      echo: new Map([
        ['http', { via: http.via.client, direct: http.direct.client }],
        ['stdio', { via: io.via.client, direct: io.direct.client }],
      ]),
      pay: new Map([
        ['http', passSides('http', passHttp, ceilHttp, http)],
        ['stdio', passSides('stdio', passStdio, ceilStdio, io)],
      ]),
      statusQuery: await w.statusQuery(lastOccurrence),
      plan,
    });
    console.log('\nfigures (per consequential call; added = gateway − direct):');
    for (const l of lines) summary(l);
    for (const t of ['http', 'stdio']) {
      const results = parts.pass;
      const gw = `${t} pay via pass-through`;
      summary({ label: `${t} pass-thru`, c: 1, results, gw, direct: `${t} pay direct` });
      const ceil = `${t} pay via ceiling gateway`;
      summary({ label: `${t} ceiling gw`, c: 1, results, gw: ceil, direct: `${t} pay direct` });
      const baton = `${t} pay via Baton --db`;
      summary({ label: `${t} Baton --db`, c: 1, results, gw: baton, direct: `${t} pay direct` });
    }
    console.log(`  sandbox effects applied: ${w.sandbox.effects().length} (one per call: no duplicates)`);
    verdict(lines, parts);
    console.log(
      `load average at the end ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    for (const s of stops.reverse()) await s();
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
