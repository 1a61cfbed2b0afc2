/**
 * The MCP gateway's added latency (issue 15, item 7): a consequential `pay` call through `baton mcp`
 * against the same call straight to the upstream MCP server, in the same run, rounds alternated
 * (bench/support.ts `compare`), over stdio and over Streamable HTTP, at concurrency 1 and 16.
 * All real: the sandbox payments provider, Baton's HTTP server on a SQLite file in this process,
 * the test upstream MCP server (test/mcp/upstream-payments.ts), and `baton mcp` as a child process.
 * - HTTP:  agent → upstream (Streamable HTTP)   vs  agent → `baton mcp --http` → upstream (HTTP)
 * - stdio: agent → upstream child (stdio)       vs  agent → `baton mcp` (stdio) → upstream child (stdio)
 * The gateway side does create, enter, the upstream call, acknowledge and reconcile (Baton asks the
 * sandbox's pinned by-key source and checks its signature) — four Baton HTTP round trips and a
 * status-source query per call. Target: ≤ 2 ms added p50 on SQLite at concurrency 1.
 *
 *   npm run build && node dist/bench/mcp.bench.js   (BENCH_ROUND_MS=2000 BENCH_ROUNDS=3)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { systemClock } from '../src/core/clock.js';
import { BYPASS_PATH_KINDS } from '../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  loadProfile,
  sandboxDeployment,
  staticKeys,
  StatusSources,
} from '../src/providers/index.js';
import { InProcessBatonClient } from '../src/client/index.js';
import { parsePolicy, serveHttp, startGateway } from '../src/mcp/index.js';
import { buildServer, createToken } from '../src/server/index.js';
import { openOccurrencesOnSqlite } from '../src/store/index.js';
import { MAIN, policyFor, UPSTREAM_SCRIPT } from '../test/mcp/world.js';
import { newControl, serveUpstreamHttp } from '../test/mcp/upstream-payments.js';
import { compare, percentile, type Results, type Side } from './support.js';

const ROUND_MS = Number(process.env['BENCH_ROUND_MS'] ?? 2000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const plan = { rounds: ROUNDS, roundMs: ROUND_MS, warmupMs: 1000 };
const run = randomBytes(4).toString('hex');

async function world(dir: string) {
  const secret = randomBytes(32);
  const sandbox = createSandboxProvider({ signing: 'hmac', hmacSecret: secret });
  await sandbox.listen(0, '127.0.0.1');
  const deployment = sandboxDeployment(sandbox);
  const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
  const store = await openOccurrencesOnSqlite(join(dir, 'baton.db'));
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
  const keys = staticKeys({ [deployment.hmacSecretId ?? '']: secret });
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
  // Two lineages: each gateway's session is a generation of its own (one would retire the other).
  const policyFile = (lineage: string): string => {
    const file = join(dir, `${lineage}.policy.json`);
    writeFileSync(
      file,
      JSON.stringify({ ...policyFor(profile, { settle: { statusSources: true } }), lineage }),
    );
    return file;
  };
  const close = async (): Promise<void> => {
    await upstream.close();
    await app.close();
    await store.close();
    await sandbox.close();
  };
  // The same domain through the in-process client: the gateway's own cost without Baton's HTTP hops.
  const inProcess = new InProcessBatonClient({
    service: store.service,
    statusSources: new StatusSources({ keys }),
  });
  return {
    sandbox,
    batonUrl: `http://127.0.0.1:${port}`,
    token,
    upstream,
    policyFile,
    profile,
    inProcess,
    close,
  };
}

type World = Awaited<ReturnType<typeof world>>;

function gatewayArgs(w: World, lineage: string, upstream: string[]): string[] {
  return [MAIN, 'mcp', '--policy', w.policyFile(lineage), '--baton', w.batonUrl, ...upstream];
}

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> {
  const c = new Client({ name: 'bench-agent', version: '1.0.0' });
  await c.connect(transport, { timeout: 30_000 });
  return c;
}

function stdio(args: string[], env: Record<string, string> = {}): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stderr: 'ignore',
  });
}

/** `baton mcp --http 0` as a child: its first stdout line names its URL. */
async function httpGateway(w: World): Promise<{ url: string; stop(): void }> {
  const { spawn } = await import('node:child_process');
  const child = spawn(
    process.execPath,
    [...gatewayArgs(w, 'bench-http', ['--upstream', w.upstream.url]), '--http', '0'],
    {
      env: { PATH: process.env['PATH'] ?? '', BATON_TOKEN: w.token },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('baton mcp --http did not start within 30 s')), 30_000);
    child.stdout.once('data', (b: Buffer) => {
      clearTimeout(timer);
      resolve((JSON.parse(b.toString().split('\n')[0] ?? '{}') as { url: string }).url);
    });
  });
  return { url, stop: () => void child.kill('SIGTERM') };
}

const pay = (prefix: string, direct: boolean) => (n: number) => ({
  amount: 100,
  currency: 'eur',
  payee: 'acme',
  invoice: `${prefix}-${run}-${n}`,
  ...(direct ? { idempotency_key: `direct:${prefix}-${run}-${n}` } : {}),
});

function side(name: string, clients: Client[], args: (n: number) => Record<string, unknown>): Side {
  return {
    name,
    run: async (wk, n) => {
      const c = clients[wk % clients.length] as Client;
      const t0 = performance.now();
      const r = await c.callTool({ name: 'pay', arguments: args(n) }, undefined, { timeout: 60_000 });
      const ms = performance.now() - t0;
      if (r.isError === true)
        throw new Error(`${name}: a tool error: ${JSON.stringify(r.content).slice(0, 200)}`);
      return [ms];
    },
  };
}

function summary(label: string, c: number, results: Results, gw: string, direct: string): void {
  const g = results.get(gw)?.t;
  const d = results.get(direct)?.t;
  if (g === undefined || d === undefined) return;
  const rate = (t: typeof g): number => (t.lifecycles * 1000) / t.ms;
  const p = (t: typeof g, q: number): number => percentile(t.calls, q);
  console.log(
    `  ${label} c=${String(c).padEnd(2)}  direct p50 ${p(d, 50).toFixed(2)} ms p99 ${p(d, 99).toFixed(2)} ms ${rate(d).toFixed(0)} calls/s | ` +
      `gateway p50 ${p(g, 50).toFixed(2)} ms p99 ${p(g, 99).toFixed(2)} ms ${rate(g).toFixed(0)} calls/s | ` +
      `added p50 ${(p(g, 50) - p(d, 50)).toFixed(2)} ms, p99 ${(p(g, 99) - p(d, 99)).toFixed(2)} ms`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-bench-'));
  const w = await world(dir);
  const stops: (() => Promise<void> | void)[] = [];
  try {
    // HTTP: 16 agent sessions share one gateway process and one upstream (each session its own generation
    // would retire the others: one session, concurrent calls, as one agent runtime would make them).
    const directHttp = await connect(new StreamableHTTPClientTransport(new URL(w.upstream.url)));
    const gw = await httpGateway(w);
    stops.push(() => gw.stop());
    const viaHttp = await connect(new StreamableHTTPClientTransport(new URL(gw.url)));
    const directStdio = await connect(stdio([UPSTREAM_SCRIPT, w.sandbox.url]));
    const viaStdio = await connect(
      stdio(
        gatewayArgs(w, 'bench-stdio', [
          '--upstream-stdio',
          `${process.execPath} ${UPSTREAM_SCRIPT} ${w.sandbox.url}`,
        ]),
        {
          BATON_TOKEN: w.token,
        },
      ),
    );
    stops.push(
      () => directHttp.close(),
      () => viaHttp.close(),
      () => directStdio.close(),
      () => viaStdio.close(),
    );
    // In-process: the gateway in this process over InProcessBatonClient (same SQLite store), served on HTTP.
    const policy = parsePolicy(JSON.stringify({ ...policyFor(w.profile), lineage: 'bench-in-process' }));
    const local = await startGateway({
      baton: w.inProcess,
      policy,
      upstreams: [{ name: 'p', url: w.upstream.url }],
    });
    const localHttp = await serveHttp(local, 0, '127.0.0.1');
    const viaLocal = await connect(new StreamableHTTPClientTransport(new URL(localHttp.url)));
    stops.push(
      () => viaLocal.close(),
      () => localHttp.close(),
      () => local.close(),
    );
    console.log(
      `mcp gateway bench: SQLite, rounds ${ROUNDS} x ${ROUND_MS} ms, Baton HTTP server in the bench process`,
    );
    const lines: (() => void)[] = [];
    for (const c of [1, 16]) {
      const http = await compare(
        `http c=${c}`,
        [
          side('http gateway', [viaHttp], pay(`h${c}`, false)),
          side('http direct', [directHttp], pay(`hd${c}`, true)),
        ],
        c,
        plan,
      );
      lines.push(() => summary('http ', c, http, 'http gateway', 'http direct'));
      const io = await compare(
        `stdio c=${c}`,
        [
          side('stdio gateway', [viaStdio], pay(`s${c}`, false)),
          side('stdio direct', [directStdio], pay(`sd${c}`, true)),
        ],
        c,
        plan,
      );
      lines.push(() => summary('stdio', c, io, 'stdio gateway', 'stdio direct'));
      const ip = await compare(
        `in-process c=${c}`,
        [
          side('in-process gateway', [viaLocal], pay(`i${c}`, false)),
          side('http direct', [directHttp], pay(`id${c}`, true)),
        ],
        c,
        plan,
      );
      lines.push(() => summary('http, Baton in-process', c, ip, 'in-process gateway', 'http direct'));
    }
    console.log('\nfigures (per consequential call; added = gateway − direct):');
    for (const l of lines) l();
    console.log(`  sandbox effects applied: ${w.sandbox.effects().length} (one per call: no duplicates)`);
  } finally {
    for (const s of stops.reverse()) await s();
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
