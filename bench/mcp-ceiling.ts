/**
 * The ceiling of the MCP gateway bench (issue 15 §7): the least a consequential call through any
 * gateway must add, measured in the same run on the same machine, so the verdict reads against it.
 *
 * The ceiling (since session 7): the ceiling gateway (bench/mcp-ceiling-gateway.ts), a minimal
 * pass-through proxy in its own child process that per `pay` does the least Baton's job needs — one
 * durable plain-SQL commit before the call is sent (AOC-REQ-010), the call, one keep-alive status
 * query to the sandbox with its signature checked (AOC-REQ-009), one durable commit — measured as
 * the real gateway is: its `pay` minus `pay` direct, p50, rounds alternated with the direct side and
 * the bare pass-through in one comparison — with Baton's `--db` gateway in it too, so the ratio of
 * the two is read from one comparison, not two taken minutes apart. Every part is thus timed where a gateway lives: in an
 * idle child process between calls, with the sandbox across a process boundary.
 *
 * The older component sum, still printed, labelled, so the difference stays visible: the bare
 * pass-through `baton mcp`'s hop for `pay` + two plain commits + one status query, the last two timed
 * inside the bench process. That process hosts the sandbox (the status query crosses no process,
 * ≈ 0.1 ms against ≈ 1.3 ms from the gateway, docs/mcp.md "Session 7") and its event loop is hot, so
 * the sum was too optimistic. `echo` through the real gateway (no provider call behind the hop) is
 * the oldest, lowest hop figure, printed beside it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { plainCommits } from './plain-commits.js';
import { compare, percentile, type Plan, type Results, type Side } from './support.js';

export interface CeilingParts {
  /** Per transport: echo through the gateway minus echo direct, p50. */
  readonly hopMs: ReadonlyMap<string, number>;
  /** Per transport: `pay` through the bare pass-through proxy minus `pay` direct, p50. */
  readonly passMs: ReadonlyMap<string, number>;
  /** Per transport: `pay` through the ceiling gateway minus `pay` direct, p50: the ceiling. */
  readonly gatewayMs: ReadonlyMap<string, number>;
  /** Per transport: Baton's `--db` gateway minus direct, p50, in the SAME comparison as the ceiling. */
  readonly batonMs: ReadonlyMap<string, number>;
  /** The pass-through and ceiling-gateway comparisons, for their latency and CPU lines. */
  readonly pass: Results;
  /** Two plain-SQL durable commits, p50 of their sum. */
  readonly commitsMs: number;
  /** One status-source query (HTTP to the provider + signature check), p50. */
  readonly statusMs: number;
}

/** `pay` through the bare pass-through proxy, the ceiling gateway, Baton's `--db` gateway, and direct (each its own keys). */
export interface PaySides {
  readonly via: Side;
  readonly gateway: Side;
  readonly baton: Side;
  readonly direct: Side;
}

export interface CeilingInput {
  readonly dbFile: string;
  /** Per transport: the gateway's session and the direct one, both offering `echo`. */
  readonly echo: ReadonlyMap<string, { readonly via: Client; readonly direct: Client }>;
  readonly pay: ReadonlyMap<string, PaySides>;
  readonly statusQuery: () => Promise<void>;
  readonly plan: Plan;
}

function commitsSide(file: string): { side: Side; close(): void } {
  const commits = plainCommits(file);
  const side: Side = {
    name: 'two plain commits',
    run: (_w, n) => {
      const t0 = performance.now();
      commits.enter(`k${n}`);
      commits.settle(`k${n}`);
      return Promise.resolve([performance.now() - t0]);
    },
  };
  return { side, close: () => commits.close() };
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
  const commits = commitsSide(input.dbFile);
  try {
    const sides: Side[] = [commits.side, timed('status query', input.statusQuery)];
    for (const [t, c] of input.echo) {
      sides.push(timed(`${t} echo via gateway`, echo(c.via)), timed(`${t} echo direct`, echo(c.direct)));
    }
    const r = await compare('ceiling c=1', sides, 1, input.plan);
    const pay = [...input.pay.values()].flatMap((p) => [p.via, p.gateway, p.baton, p.direct]);
    const pass = await compare(
      'ceiling pay: pass-through, ceiling gateway, Baton --db c=1',
      pay,
      1,
      input.plan,
    );
    const p50 = (x: Results, name: string): number => percentile(x.get(name)?.t.calls ?? [], 50);
    const hopMs = new Map<string, number>();
    for (const t of input.echo.keys())
      hopMs.set(t, p50(r, `${t} echo via gateway`) - p50(r, `${t} echo direct`));
    const passMs = new Map<string, number>();
    const gatewayMs = new Map<string, number>();
    const batonMs = new Map<string, number>();
    for (const [t, p] of input.pay) {
      passMs.set(t, p50(pass, p.via.name) - p50(pass, p.direct.name));
      gatewayMs.set(t, p50(pass, p.gateway.name) - p50(pass, p.direct.name));
      batonMs.set(t, p50(pass, p.baton.name) - p50(pass, p.direct.name));
    }
    return {
      hopMs,
      passMs,
      gatewayMs,
      batonMs,
      pass,
      commitsMs: p50(r, 'two plain commits'),
      statusMs: p50(r, 'status query'),
    };
  } finally {
    commits.close();
  }
}

/** The least a gateway adds to `pay`: the ceiling gateway's added p50. */
export function ceilingOf(parts: CeilingParts, transport: string): number {
  return parts.gatewayMs.get(transport) ?? Number.NaN;
}

/** The older component sum: the bare proxy's hop for `pay` + two commits + one status query timed in the bench process. */
export function sumCeilingOf(parts: CeilingParts, transport: string): number {
  return (parts.passMs.get(transport) ?? Number.NaN) + parts.commitsMs + parts.statusMs;
}

/** The same with the `echo` hop instead (no provider call behind the hop): the older, lower figure. */
export function echoCeilingOf(parts: CeilingParts, transport: string): number {
  return (parts.hopMs.get(transport) ?? Number.NaN) + parts.commitsMs + parts.statusMs;
}
