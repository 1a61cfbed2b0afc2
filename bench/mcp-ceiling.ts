/**
 * The ceiling of the MCP gateway bench (issue 15 §7): the least a consequential call through any
 * gateway must add, measured in the same run on the same machine, so the verdict reads against it:
 * - the extra MCP hop for THIS call: the same `pay` through `baton mcp` with a policy that lists no
 *   tool (a bare SDK pass-through proxy: no Baton work at all) minus `pay` direct. It holds what
 *   any proxy adds — one more process, two more SDK messages each way — and what that costs the
 *   processes around it: every process in the chain waits longer between calls, and a process
 *   woken after a longer wait runs the same code slower (its upstream's CPU per `pay` grows too,
 *   shown by the CPU columns). `echo` through the real gateway, the older hop figure, is printed
 *   beside it: it has no provider call behind it, so it leaves that effect out;
 * - two durable commits (the entry before the call is sent, AOC-REQ-010; the answer and its
 *   settlement after) in plain SQL: BEGIN IMMEDIATE, one row, COMMIT, on the same SQLite file with
 *   the same durability as Baton's (WAL, synchronous = FULL), no Baton code at all;
 * - one status-source query: only a pinned source's authenticated answer may settle the outcome
 *   (AOC-REQ-009; docs/mcp.md "the read tool's answer is unauthenticated evidence only"), so the
 *   sandbox's by-key lookup with its signature checked is part of the least work.
 * Nothing else is in it: no HTTP to Baton, no JSON schema, no evidence chain, no occurrence logic.
 */
import Database from 'better-sqlite3';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { compare, percentile, type Plan, type Results, type Side } from './support.js';

export interface CeilingParts {
  /** Per transport: echo through the gateway minus echo direct, p50. */
  readonly hopMs: ReadonlyMap<string, number>;
  /** Per transport: `pay` through the bare pass-through proxy minus `pay` direct, p50. */
  readonly passMs: ReadonlyMap<string, number>;
  /** The pass-through comparisons, for their latency and CPU lines. */
  readonly pass: Results;
  /** Two plain-SQL durable commits, p50 of their sum. */
  readonly commitsMs: number;
  /** One status-source query (HTTP to the provider + signature check), p50. */
  readonly statusMs: number;
}

export interface CeilingInput {
  readonly dbFile: string;
  /** Per transport: the gateway's session and the direct one, both offering `echo`. */
  readonly echo: ReadonlyMap<string, { readonly via: Client; readonly direct: Client }>;
  /** Per transport: `pay` through the bare pass-through proxy and `pay` direct (each its own keys). */
  readonly pay: ReadonlyMap<string, { readonly via: Side; readonly direct: Side }>;
  readonly statusQuery: () => Promise<void>;
  readonly plan: Plan;
}

function plainCommits(file: string): { side: Side; close(): void } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS bench_ceiling (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO bench_ceiling (k, v) VALUES (?, ?)');
  const update = db.prepare('UPDATE bench_ceiling SET v = ? WHERE k = ?');
  const row = 'x'.repeat(600); // about an occurrence row's size
  const commit = (work: () => void): void => {
    db.exec('BEGIN IMMEDIATE');
    work();
    db.exec('COMMIT');
  };
  const side: Side = {
    name: 'two plain commits',
    run: (_w, n) => {
      const t0 = performance.now();
      commit(() => insert.run(`k${n}`, row));
      commit(() => update.run(`${row}!`, `k${n}`));
      return Promise.resolve([performance.now() - t0]);
    },
  };
  return { side, close: () => db.close() };
}

function timed(name: string, call: () => Promise<unknown>): Side {
  return {
    name,
    run: async () => {
      const t0 = performance.now();
      await call();
      return [performance.now() - t0];
    },
  };
}

const echo = (c: Client) => () => c.callTool({ name: 'echo', arguments: { text: 'ceiling' } });

export async function measureCeiling(input: CeilingInput): Promise<CeilingParts> {
  const commits = plainCommits(input.dbFile);
  try {
    const sides: Side[] = [commits.side, timed('status query', input.statusQuery)];
    for (const [t, c] of input.echo) {
      sides.push(timed(`${t} echo via gateway`, echo(c.via)), timed(`${t} echo direct`, echo(c.direct)));
    }
    const r = await compare('ceiling c=1', sides, 1, input.plan);
    const pay = [...input.pay.values()].flatMap((p) => [p.via, p.direct]);
    const pass = await compare('ceiling pay pass-through c=1', pay, 1, input.plan);
    const p50 = (x: Results, name: string): number => percentile(x.get(name)?.t.calls ?? [], 50);
    const hopMs = new Map<string, number>();
    for (const t of input.echo.keys())
      hopMs.set(t, p50(r, `${t} echo via gateway`) - p50(r, `${t} echo direct`));
    const passMs = new Map<string, number>();
    for (const [t, p] of input.pay) passMs.set(t, p50(pass, p.via.name) - p50(pass, p.direct.name));
    return {
      hopMs,
      passMs,
      pass,
      commitsMs: p50(r, 'two plain commits'),
      statusMs: p50(r, 'status query'),
    };
  } finally {
    commits.close();
  }
}

/** The least a gateway adds to `pay`: the bare proxy's hop for it + two durable commits + one status query. */
export function ceilingOf(parts: CeilingParts, transport: string): number {
  return (parts.passMs.get(transport) ?? Number.NaN) + parts.commitsMs + parts.statusMs;
}

/** The same with the `echo` hop instead (no provider call behind the hop): the older, lower figure. */
export function echoCeilingOf(parts: CeilingParts, transport: string): number {
  return (parts.hopMs.get(transport) ?? Number.NaN) + parts.commitsMs + parts.statusMs;
}
