/**
 * After the upstream call: what the gateway records and how an unknown outcome settles
 * (docs/mcp.md "Settlement"). The upstream's answer is an executor's word: recorded as an
 * unauthenticated acknowledgement, it never moves the outcome (AOC-REQ-009). Only Baton's pinned
 * status sources settle (`executor.reconcile`). A configured read tool is consulted when they leave
 * the outcome open; its unsigned answer is recorded as unauthenticated evidence and shown, never
 * taken as settlement.
 */
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BatonClient, Executor, ExecutorAcknowledgement } from '../client/index.js';
import type { Clock } from '../core/clock.js';
import { isBatonError } from '../core/errors.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import type { KeyResolver } from '../leases/index.js';
import type { EntryTicket, OccurrenceView } from '../occurrences/index.js';
import type { ArgumentsCheck } from './arguments.js';
import type { DerivedCall } from './derive.js';
import type { MissionGate, OutcomeCache } from './gateway-types.js';
import { getPointer } from './pointer.js';
import type { ToolPolicy } from './policy.js';
import { toolError, withOccurrence, type OccurrenceFacts } from './results.js';
import type { Upstream } from './upstream.js';

export interface Ctx {
  readonly executor: Executor;
  /**
   * The client the session's takeover came from (GatewayOptions.baton). The consequential path
   * reads one occurrence through it: the successor an earlier build's reissue left (consequential.ts).
   */
  readonly baton: Pick<BatonClient, 'getOccurrence'>;
  readonly upstream: Upstream;
  readonly policy: ToolPolicy;
  readonly cache: OutcomeCache;
  readonly inflight: Map<string, Promise<CallToolResult>>;
  readonly leaseKeys: KeyResolver | undefined;
  readonly missions: MissionGate;
  readonly clock: Clock;
  readonly upstreamTimeoutMs: number;
  /** The upstream tool declares an outputSchema: an answer Baton synthesizes cannot satisfy it. */
  readonly hasOutputSchema: boolean;
  /** The tool's arguments check (arguments.ts: its upstream input schema, the request map). */
  readonly argumentsCheck: ArgumentsCheck;
  /**
   * The tool's check as of now: once the upstream's latest listing reflects every change it
   * announced and every new connection (schemas.ts `fresh`; the upstream listed again first when
   * not). Asked again after the connection is verified — a verification may reconnect to a
   * restarted upstream — and before anything is created (docs/mcp.md "A consequential call", step 1).
   * Throws a BatonError (`upstream_unavailable`, `mcp_upstream_invalid`) when it cannot be had.
   */
  readonly currentSchema: () => Promise<CurrentSchema>;
  /** Where the gateway reports what it could not finish (GatewayOptions.log; never a secret). */
  readonly log?: (line: string) => void;
}

/** A policy tool's check against its upstream's latest listing, and the tools epoch that listing reflects. */
export interface CurrentSchema {
  readonly check: ArgumentsCheck;
  readonly hasOutputSchema: boolean;
  /** The upstream's `toolsEpoch` the listing reflects: moved since, the check may be stale. */
  readonly epoch: number;
}

export type Step<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      refusal: boolean;
      code: string;
      /** Baton's message (a BatonError's: names what, never a secret); absent for other errors. */
      message?: string;
      details?: Readonly<Record<string, unknown>>;
    };

/** A BatonError below 500 is a refusal (nothing applied); anything else is doubt. */
export async function attempt<T>(call: () => Promise<T>): Promise<Step<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    if (isBatonError(error)) {
      const { code, message, details } = error;
      return { ok: false, refusal: error.status < 500, code, message, details };
    }
    return { ok: false, refusal: false, code: 'internal' };
  }
}

/** The raw `tools/call`: the gateway judges the answer itself (no output-schema check here). */
export async function callUpstream(
  ctx: Ctx,
  params: { name: string; arguments: JsonObject; _meta?: JsonObject },
): Promise<CallToolResult> {
  const request = { method: 'tools/call' as const, params };
  return ctx.upstream.client.request(request, CallToolResultSchema, { timeout: ctx.upstreamTimeoutMs });
}

const STATUS = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;

function structured(answer: CallToolResult): JsonValue {
  const s = answer.structuredContent as JsonObject | undefined;
  return s ?? ({ content: answer.content, isError: answer.isError === true } as unknown as JsonObject);
}

function readText(pointer: string | null, answer: CallToolResult, pattern: RegExp): string | null {
  if (pointer === null) return null;
  const v = getPointer(structured(answer), pointer);
  return typeof v === 'string' && pattern.test(v) ? v : null;
}

function acknowledgementOf(
  ctx: Ctx,
  occurrenceId: string,
  answer: CallToolResult,
  response: JsonValue,
): ExecutorAcknowledgement {
  const status = readText(ctx.policy.acknowledgement.status, answer, STATUS);
  const reference = readText(ctx.policy.acknowledgement.reference, answer, /^.{1,512}$/s);
  return {
    occurrenceId,
    observedAt: ctx.clock.wallMs(),
    result: status === null ? 'unavailable' : 'found',
    ...(status === null ? {} : { nativeStatus: status }),
    response,
    carried: reference === null ? {} : { providerReference: reference },
  };
}

/** The upstream answered the entry call: keep it for repeats, record it, ask the status sources once. */
export async function recordAnswer(
  ctx: Ctx,
  ticket: EntryTicket,
  answer: CallToolResult,
): Promise<CallToolResult> {
  const id = ticket.occurrence.id;
  ctx.cache.set(id, answer);
  const ack = acknowledgementOf(ctx, id, answer, structured(answer));
  const facts = (missingKnowledge: string | null) => ({
    repeat: false,
    upstreamAnswer: true,
    missingKnowledge,
  });
  if (ctx.policy.settle.statusSources) {
    // One call (issue 16 §4): the acknowledgement and one status-source pass in one transaction.
    const both = await attempt(() => ctx.executor.acknowledgeAndSettle(ack));
    if (both.ok) {
      const v = both.value;
      return withOccurrence(
        answer,
        v.occurrence,
        facts(v.missingKnowledge ?? v.acknowledgement.missingKnowledge),
      );
    }
    // Its answer was lost: one more status pass (evidence only, never an entry), as before.
    const c = await attempt(() => ctx.executor.reconcile(id));
    return c.ok
      ? withOccurrence(answer, c.value.occurrence, facts(c.value.missingKnowledge ?? 'unavailable'))
      : withOccurrence(answer, ticket.occurrence, facts('unavailable'));
  }
  const rec = await attempt(() => ctx.executor.acknowledge(ack));
  return rec.ok
    ? withOccurrence(answer, rec.value.occurrence, facts(rec.value.missingKnowledge))
    : withOccurrence(answer, ticket.occurrence, facts('unavailable'));
}

export interface Settled {
  readonly occurrence: OccurrenceView;
  readonly missingKnowledge: string | null;
  readonly readTool?: JsonObject;
}

/** One pass of the status sources; then, if still open and configured, the read tool as evidence. */
export async function settle(ctx: Ctx, d: DerivedCall, o: OccurrenceView): Promise<Settled> {
  let latest = o;
  let missing: string | null = 'unavailable';
  // Whether the pinned status sources answered: then `missing` is their reason (not_found, stale…).
  let sourcesAnswered = false;
  if (ctx.policy.settle.statusSources) {
    const c = await attempt(() => ctx.executor.reconcile(o.id));
    if (c.ok) {
      latest = c.value.occurrence;
      missing = c.value.missingKnowledge;
      sourcesAnswered = missing !== null;
    }
  }
  if (!latest.unresolved || ctx.policy.settle.readTool === null)
    return { occurrence: latest, missingKnowledge: missing };
  const read = await consultReadTool(ctx, d, latest);
  return {
    occurrence: read.occurrence ?? latest,
    // The status sources' reason stands when they gave one: the read tool's unsigned answer cannot
    // change what Baton's authenticated knowledge lacks (AOC-REQ-009); it is shown in `readTool`.
    // Without theirs (switched off, or the pass was lost), the read tool's recorded answer is the
    // latest evidence: `unauthenticated` when it told an outcome, `unavailable` when it did not.
    missingKnowledge: sourcesAnswered ? missing : (read.missing ?? missing),
    readTool: read.meta,
  };
}

function readArguments(ctx: Ctx, d: DerivedCall, o: OccurrenceView): JsonObject | string {
  const args: JsonObject = {};
  for (const [name, a] of Object.entries(ctx.policy.settle.readTool?.arguments ?? {})) {
    const v =
      a.from === 'argument'
        ? getPointer(d.arguments, a.pointer)
        : a.from === 'nativeKey'
          ? o.provider.nativeKey
          : a.from === 'occurrenceId'
            ? o.id
            : o.provider.providerReference;
    if (v === undefined || v === null) return name;
    args[name] = v;
  }
  return args;
}

async function consultReadTool(
  ctx: Ctx,
  d: DerivedCall,
  o: OccurrenceView,
): Promise<{ occurrence?: OccurrenceView; missing?: string | null; meta: JsonObject }> {
  const name = ctx.policy.settle.readTool?.name ?? '';
  const args = readArguments(ctx, d, o);
  if (typeof args === 'string')
    return { meta: { name, consulted: false, reason: `no value for argument ${args}` } };
  let answer: CallToolResult;
  try {
    answer = await callUpstream(ctx, { name, arguments: args });
  } catch {
    ctx.upstream.suspect();
    return { meta: { name, consulted: true, answered: false } };
  }
  // Labelled as what it is: an MCP read tool's unsigned answer, not a pinned status source's.
  const body = structured(answer);
  const ack = acknowledgementOf(ctx, o.id, answer, { mcpReadTool: name, answer: body });
  const rec = await attempt(() => ctx.executor.acknowledge(ack));
  const meta: JsonObject = {
    name,
    consulted: true,
    answered: true,
    authenticated: false,
    recorded: rec.ok,
    answer: body,
  };
  return rec.ok ? { occurrence: rec.value.occurrence, missing: rec.value.missingKnowledge, meta } : { meta };
}

/** The answer for what Baton knows now: the kept upstream answer, or an honest statement of state. */
export function answerFromState(
  ctx: Ctx,
  s: Settled,
  how: { repeat: boolean; lost?: boolean },
): CallToolResult {
  const o = s.occurrence;
  const facts: OccurrenceFacts = {
    repeat: how.repeat,
    upstreamAnswer: false,
    missingKnowledge: s.missingKnowledge,
    ...(s.readTool === undefined ? {} : { readTool: s.readTool }),
  };
  const kept = ctx.cache.get(o.id);
  if (kept !== undefined) return withOccurrence(kept, o, { ...facts, upstreamAnswer: true });
  if (o.phase === 'released')
    return toolError('released', 'the occurrence was released before entry', { occurrence: o, facts });
  if (o.unresolved) {
    const code = how.lost === true ? 'upstream_answer_lost' : 'outcome_unknown';
    const msg = 'the outcome is not known; Baton will not send this call again (an operator reconciles it)';
    return toolError(code, msg, { occurrence: o, facts });
  }
  if (o.effect === 'none_confirmed') {
    return toolError('no_effect', 'the provider confirms the call had no effect', { occurrence: o, facts });
  }
  const text = `succeeded earlier (settled by Baton's status sources): occurrence ${o.id}, provider reference ${o.provider.providerReference ?? 'unknown'}; the upstream's own answer is not available here`;
  if (ctx.hasOutputSchema) return toolError('original_answer_unavailable', text, { occurrence: o, facts });
  return withOccurrence({ content: [{ type: 'text', text }] }, o, facts);
}
