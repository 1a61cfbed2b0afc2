/**
 * Which input schema a consequential call's arguments are checked against (docs/mcp.md "A
 * consequential call", step 1): the one in the LATEST `tools/list` the gateway saw from the tool's
 * upstream — the one it shows the agent — never one compiled at start and kept. An upstream that
 * tightened `pay` after start (a lower `maximum`, `additionalProperties: false`) would refuse a call
 * checked against the old schema only after Baton created and entered it: authority consumed, the
 * creation key burnt, the outcome an upstream error. Fail closed:
 *
 * - every listing the gateway makes (at start, for the agent's `tools/list`, and re-listings) updates
 *   the checks; a changed schema is compiled again;
 * - an upstream's `notifications/tools/list_changed`, or a new connection to it (a restarted upstream),
 *   makes its last listing stale: it is listed again (at once, and in any case before the next
 *   consequential call, which waits for it; a failed re-listing refuses the call `upstream_unavailable`).
 *   A consequential call asks again once its connection is verified (consequential.ts `run`): the
 *   verification is what finds a restarted upstream and reconnects, so a call derived against the
 *   previous connection's schema is checked again against the new listing before anything is created;
 * - a policy tool whose latest schema cannot be compiled, or that the latest listing no longer offers,
 *   is refused `mcp_upstream_invalid` at call time; nothing is created, entered or sent.
 *
 * At start a schema that cannot be compiled is a start error, as before (compileArguments).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { BatonError } from '../core/errors.js';
import { compileArguments, type ArgumentsCheck } from './arguments.js';
import type { McpPolicy } from './policy.js';
import type { Upstream } from './upstream.js';

/** How many times a call re-lists an upstream whose tools keep changing before it gives up. */
const MAX_RELISTS = 3;

/** One listing of an upstream, begun: the tools epoch it reflects and its order among listings. */
export interface Listing {
  readonly epoch: number;
  readonly seq: number;
}

interface Entry {
  /** The upstream's latest definition of the tool, or null when it no longer offers it. */
  readonly tool: Tool | null;
  /** The schema text the check was compiled from (null: not comparable; compiled every time). */
  readonly text: string | null;
  readonly check: ArgumentsCheck;
}

function schemaText(tool: Tool): string | null {
  try {
    return JSON.stringify(tool.inputSchema);
  } catch {
    return null;
  }
}

/** A check that refuses every call: the tool's arguments cannot be checked against its current schema. */
function refusing(tool: string, message: string): ArgumentsCheck {
  return {
    tool,
    check: () => {
      throw new BatonError('mcp_upstream_invalid', `${message}; nothing was created or sent upstream`, {
        tool,
      });
    },
  };
}

export class ToolSchemas {
  private readonly entries = new Map<string, Entry>();
  private readonly listedEpoch = new Map<Upstream, number>();
  private readonly appliedSeq = new Map<Upstream, number>();
  private readonly refreshing = new Map<Upstream, Promise<void>>();
  private seq = 0;

  /**
   * `start`: each upstream's listing at start (begun before it was read) and its tools; each policy
   * tool's schema is compiled now, and one that cannot be is thrown (`mcp_upstream_invalid`).
   */
  constructor(
    private readonly policy: McpPolicy,
    /** Which upstream serves each policy tool (fixed at start). */
    private readonly routeOf: (tool: string) => Upstream | undefined,
    private readonly list: (u: Upstream) => Promise<Tool[]>,
    start: ReadonlyMap<Upstream, { listing: Listing; tools: readonly Tool[] }>,
    private readonly log?: (line: string) => void,
  ) {
    for (const [u, { listing, tools }] of start) {
      this.listedEpoch.set(u, listing.epoch);
      this.appliedSeq.set(u, listing.seq);
      for (const p of policy.tools.values()) {
        if (this.routeOf(p.tool) !== u) continue;
        const tool = tools.find((t) => t.name === p.tool);
        if (tool === undefined) continue; // checkPolicy refuses it at start
        this.entries.set(p.tool, { tool, text: schemaText(tool), check: compileArguments(tool, p) });
      }
    }
    for (const u of start.keys()) {
      // Listed again at once; the next consequential call waits for it (`fresh`).
      u.onToolsChanged(() => {
        this.fresh(u).catch((error: unknown) => {
          const why = error instanceof Error ? error.message : String(error);
          this.log?.(
            `mcp: upstream ${u.name} changed its tools; listing them again failed (${why}); its consequential tools are refused until it succeeds`,
          );
        });
      });
    }
  }

  /** A listing of `u` about to be read: what it will reflect (call before sending tools/list). */
  begin(u: Upstream): Listing {
    this.seq += 1;
    return { epoch: u.toolsEpoch, seq: this.seq };
  }

  /** A listing of `u` read: the checks of its policy tools follow it, unless a later listing already landed. */
  seen(u: Upstream, listing: Listing, tools: readonly Tool[]): void {
    if (listing.seq < (this.appliedSeq.get(u) ?? 0)) return;
    this.appliedSeq.set(u, listing.seq);
    this.listedEpoch.set(u, listing.epoch);
    for (const p of this.policy.tools.values()) {
      if (this.routeOf(p.tool) !== u) continue;
      const tool = tools.find((t) => t.name === p.tool);
      if (tool === undefined) {
        const message = `upstream ${u.name} no longer offers tool ${p.tool} (its latest tools/list)`;
        this.entries.set(p.tool, { tool: null, text: null, check: refusing(p.tool, message) });
        continue;
      }
      const text = schemaText(tool);
      const before = this.entries.get(p.tool);
      if (text !== null && before?.text === text && before.tool !== null) {
        this.entries.set(p.tool, { ...before, tool });
        continue;
      }
      let check: ArgumentsCheck;
      try {
        check = compileArguments(tool, p);
      } catch (error) {
        if (!(error instanceof BatonError)) throw error;
        check = refusing(p.tool, error.message);
      }
      this.entries.set(p.tool, { tool, text, check });
    }
  }

  /**
   * Resolves once `u`'s latest listing reflects every change it announced; re-lists it when not.
   * A re-listing that fails, or tools that keep changing, is an `upstream_unavailable` refusal.
   * Resolves with the tools epoch the latest listing reflects.
   */
  async fresh(u: Upstream): Promise<number> {
    for (let i = 0; i <= MAX_RELISTS; i++) {
      const epoch = u.toolsEpoch;
      if (this.listedEpoch.get(u) === epoch) return epoch;
      if (i === MAX_RELISTS) break;
      let running = this.refreshing.get(u);
      if (running === undefined) {
        running = this.relist(u).finally(() => this.refreshing.delete(u));
        this.refreshing.set(u, running);
      }
      await running;
    }
    throw new BatonError(
      'upstream_unavailable',
      `upstream ${u.name} kept changing its tools while the gateway listed them`,
      { upstream: u.name },
    );
  }

  private async relist(u: Upstream): Promise<void> {
    const listing = this.begin(u);
    let tools: Tool[];
    try {
      tools = await this.list(u);
    } catch (cause) {
      throw new BatonError(
        'upstream_unavailable',
        `upstream ${u.name} changed its tools and listing them again failed`,
        { upstream: u.name },
        { cause },
      );
    }
    this.seen(u, listing, tools);
  }

  /** The policy tool's check against its latest schema, and its latest definition. */
  entry(name: string): { tool: Tool | null; check: ArgumentsCheck } | undefined {
    return this.entries.get(name);
  }
}
