/**
 * One consequential tool call through the gateway (docs/mcp.md "A consequential call"):
 * derive → lease → mission gate → create-and-enter → the upstream call with Baton's native key →
 * acknowledge-and-settle (unauthenticated evidence, then Baton's pinned status sources, which alone
 * settle); the single steps where the one-call form does not apply. The one rule above all: an entered occurrence is never sent again (AOC-REQ-010); a repeat
 * of the same call (same creation key) is answered from what is known, without calling upstream.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Executor, Operation } from '../client/index.js';
import { digestJcs } from '../core/digest.js';
import { isBatonError } from '../core/errors.js';
import type { JsonObject } from '../core/json.js';
import { DEFAULT_MATRIX, type ActionClass, type MissionBinding } from '../missions/index.js';
import { NAME, type EntryTicket, type OccurrenceView } from '../occurrences/index.js';
import { deriveCall, metaMember, placeNativeKey, type DerivedCall } from './derive.js';
import { checkLease } from './lease.js';
import { missionReference } from './mission-gate.js';
import { toolError } from './results.js';
import { PING_TIMEOUT_MS } from './upstream.js';
import {
  answerFromState,
  attempt,
  callUpstream,
  recordAnswer,
  settle,
  type Ctx,
  type CurrentSchema,
} from './settle.js';

export type { Ctx } from './settle.js';

type Refusal = { code: string; message?: string; details?: Readonly<Record<string, unknown>> };

/**
 * Baton's refusal as the agent's tool error: its code, its message and details (the path of a
 * refused request member, the profile…) — what an operator needs to fix the policy or the call.
 * Baton's messages and details never carry a secret (src/core/errors.ts).
 */
function refused(step: Refusal, o?: OccurrenceView): CallToolResult {
  const why = step.message === undefined ? '' : `: ${step.message}`;
  const what = `Baton refused the call${why}; nothing was sent upstream`;
  const details = step.details === undefined ? undefined : (step.details as JsonObject);
  const text = details === undefined ? what : `${what} ${JSON.stringify(details)}`;
  return toolError(step.code, text, {
    ...(o === undefined ? {} : { occurrence: o }),
    ...(details === undefined ? {} : { details: { details } }),
  });
}

export async function callConsequential(
  ctx: Ctx,
  params: { name: string; arguments?: unknown; _meta?: unknown },
): Promise<CallToolResult> {
  let d: DerivedCall;
  let forward: JsonObject;
  try {
    d = deriveCall(ctx.policy, params.arguments, params._meta, ctx.argumentsCheck);
    forward = checkLease(d.meta, ctx.leaseKeys, ctx.clock.wallMs());
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return toolError(error.code, error.message);
  }
  // Two identical calls in flight in this session wait for one outcome (the agent's retry after a timeout).
  const key = inflightKey(ctx.executor.generation, d.operation);
  const running = ctx.inflight.get(key);
  if (running !== undefined) return markRepeat(await running);
  const p = gated(ctx, d, forward);
  ctx.inflight.set(key, p);
  try {
    return await p;
  } finally {
    ctx.inflight.delete(key);
  }
}

/**
 * Which in-flight call a call is the same as: the generation and the JCS digest of the operation
 * (RFC 8785), so member order does not matter — a retry whose arguments come in another order is
 * the same call (AOC-REQ-002) and waits for the first, instead of finding its occurrence entered
 * and answering `outcome_unknown` while the first is still running.
 */
export function inflightKey(generation: number, operation: Operation): string {
  // A JSON round trip drops the members left undefined, which JCS refuses to canonicalize.
  const plain: unknown = JSON.parse(JSON.stringify(operation));
  try {
    return `${generation}:${digestJcs(plain)}`;
  } catch {
    // Not canonicalizable (Baton refuses such a request anyway): only the very same text matches.
    return `${generation}:${JSON.stringify(plain)}`;
  }
}

/** The Mission a governed call's work item is bound to, and the class it is judged as (A3.6). */
interface Governed {
  readonly binding: MissionBinding;
  readonly actionClass: ActionClass;
}

/**
 * The Mission gate, when the policy binds one. A repeat of a call Baton already entered is answered
 * from Baton's record first, whatever the Mission says now (AOC-REQ-002, -010: the original outcome,
 * nothing sent upstream): the gate decides only whether NEW work may start. A call the gate lets
 * through is governed (Mission build spec A3.6): its occurrence is created for a work item bound to
 * the Mission and dispatched through Baton's check, so provider entry checks the Mission again in
 * its own transaction — a revocation that lands after the gate refuses the entry, nothing is sent.
 */
async function gated(ctx: Ctx, d: DerivedCall, forward: JsonObject): Promise<CallToolResult> {
  const rule = ctx.policy.mission;
  if (rule === null) return run(ctx, d, forward, null);
  const known = await knownRepeat(ctx, d);
  if (known !== undefined) return known;
  const ex = ctx.executor;
  const verdict = await ctx.missions.check({
    tool: ctx.policy.tool,
    rule,
    meta: d.meta,
    lineage: ex.lineage,
    generation: ex.generation,
  });
  if (!verdict.ok) return toolError(verdict.code, verdict.message);
  if (!verdict.enforced) return run(ctx, d, forward, null);
  const ref = missionReference(metaMember(d.meta, rule.meta));
  if (typeof ref !== 'object') {
    // A gate that enforced a Mission this call does not name in Baton's form: fail closed.
    const msg = `_meta["${rule.meta}"] must be {"mission_id", "mission_origin"} (optionally "authority_hash", "enforcement_scope"); nothing was sent upstream`;
    return toolError('mission_binding_invalid', msg);
  }
  // The agent's authority hash and scope go on the binding as asserted: Baton's dispatch and entry
  // checks refuse a hash that is not the Mission's (A3.2 step 7), nothing sent.
  const binding: MissionBinding = {
    mission_id: ref.id,
    mission_origin: ref.origin,
    ...(ref.authorityHash === undefined ? {} : { authority_hash: ref.authorityHash }),
    stop_policy: DEFAULT_MATRIX.ref,
    ...(ref.enforcementScope === undefined ? {} : { enforcement_scope: ref.enforcementScope }),
  };
  return run(ctx, d, forward, { binding, actionClass: rule.actionClass });
}

/**
 * The answer to a repeat of a call whose occurrence Baton already entered (or resolved), or
 * undefined when there is none — or when that cannot be told now: the gate then decides, as for
 * new work. The create is a replay of the creation binding (AOC-REQ-002): it creates nothing, and
 * a different call under the same key is refused as it always is. A released occurrence is followed
 * to the successor this gateway reissued for it (`reissueKey`), so a call paid after a takeover is
 * answered from that record too.
 */
async function knownRepeat(ctx: Ctx, d: DerivedCall): Promise<CallToolResult | undefined> {
  const ex = ctx.executor;
  const found = await attempt(() => ex.findByCreationKey(d.operation.creationKey));
  if (!found.ok || found.value === null) return undefined;
  if (!['entered', 'resolved', 'released'].includes(found.value.phase)) return undefined;
  const created = await attempt(() => ex.create(d.operation));
  if (!created.ok) return created.refusal ? refused(created) : undefined;
  let o = created.value.occurrence;
  for (let hops = 0; o.phase === 'released' && hops < MAX_REISSUE_HOPS; hops++) {
    const source = o;
    const next = await attempt(() => ex.findByCreationKey(reissueKey(d.operation.creationKey, source.id)));
    if (
      !next.ok ||
      next.value === null ||
      !isSuccessorFor(ex, created.value.occurrence, source, next.value.id, next.value)
    )
      return undefined;
    o = next.value;
  }
  return o.phase === 'entered' || o.phase === 'resolved' ? repeat(ctx, d, o) : undefined;
}

function markRepeat(r: CallToolResult): CallToolResult {
  const meta = r._meta?.['baton/occurrence'];
  if (typeof meta !== 'object' || meta === null) return r;
  return { ...r, _meta: { ...r._meta, 'baton/occurrence': { ...meta, repeat: true } } };
}

/** Refusals of a governed create or entry that are the Mission's word (A3.6): answered as they are. */
const MISSION_STOPS: ReadonlySet<string> = new Set([
  'mission_not_active',
  'mission_status_unavailable',
  'mission_binding_missing',
  'mission_binding_invalid',
  'work_item_not_dispatchable',
]);

/**
 * The upstream is connected — proved by a ping, reconnecting first if its connection was lost —
 * BEFORE anything is created or entered: found dead after entry, the call would be an entered
 * occurrence never sent, its authority consumed and its outcome left for an operator (AOC-REQ-010
 * forbids sending it later). Unreachable: a repeat of an entered call is still answered from
 * Baton's record; anything else is refused `upstream_unavailable`, nothing created or sent.
 * Reachable: the verified connection is held until the call is answered, so another call's failed
 * ping never closes it under this one (AOC-REQ-005: the gateway never itself loses an answer).
 */
async function upstreamUp(
  ctx: Ctx,
  d: DerivedCall,
): Promise<{ ok: true; release: () => void } | { ok: false; result: CallToolResult }> {
  const timeoutMs = Math.min(ctx.upstreamTimeoutMs, PING_TIMEOUT_MS);
  const up = await attempt(() => ctx.upstream.ready({ verify: true, timeoutMs, hold: true }));
  if (up.ok) return { ok: true, release: up.value };
  const known = await knownRepeat(ctx, d);
  if (known !== undefined) return { ok: false, result: known };
  const why = up.message ?? `upstream ${ctx.upstream.name} is unavailable`;
  const msg = `${why}; nothing was created or sent upstream; the same call may be repeated`;
  const result = toolError('upstream_unavailable', msg, { details: { upstream: ctx.upstream.name } });
  return { ok: false, result };
}

async function run(
  ctx: Ctx,
  d: DerivedCall,
  forward: JsonObject,
  governed: Governed | null,
): Promise<CallToolResult> {
  const up = await upstreamUp(ctx, d);
  if (!up.ok) return up.result;
  try {
    const now = await schemaNow(ctx, d);
    if (!now.ok) return now.result;
    return await runHeld(now.ctx, d, forward, governed, now.epoch);
  } finally {
    up.release();
  }
}

/**
 * The call checked again against the upstream's latest schema, now that its connection is verified
 * (docs/mcp.md "A consequential call", step 1). The arguments were checked before the connection
 * was: a restarted upstream is found only by `upstreamUp`, whose reconnect makes the last listing
 * stale (schemas.ts) — its new schema (a lower `maximum`) would otherwise refuse the call only after
 * Baton created and entered it, authority consumed and the creation key burnt. The upstream is
 * listed again first when its listing is stale; the same schema is not checked twice. A refusal
 * here comes before anything is created, entered or sent.
 */
async function schemaNow(
  ctx: Ctx,
  d: DerivedCall,
): Promise<{ ok: true; ctx: Ctx; epoch: number } | { ok: false; result: CallToolResult }> {
  const refuse = (error: unknown, suffix: string): { ok: false; result: CallToolResult } => {
    if (!isBatonError(error)) throw error;
    return { ok: false, result: toolError(error.code, `${error.message}${suffix}`) };
  };
  let now: CurrentSchema;
  try {
    now = await ctx.currentSchema();
  } catch (error) {
    return refuse(error, '; nothing was created or sent upstream');
  }
  try {
    // The same check object is the same schema text (schemas.ts `seen`): already passed.
    if (now.check !== ctx.argumentsCheck) now.check.check(d.arguments);
  } catch (error) {
    // As in deriveCall: `input_invalid` naming the path, or `mcp_upstream_invalid` (its own message).
    return refuse(error, '');
  }
  const current = { ...ctx, argumentsCheck: now.check, hasOutputSchema: now.hasOutputSchema };
  return { ok: true, ctx: current, epoch: now.epoch };
}

async function runHeld(
  ctx: Ctx,
  d: DerivedCall,
  forward: JsonObject,
  governed: Governed | null,
  epoch: number,
): Promise<CallToolResult> {
  if (governed === null) return runFor(ctx, d, d.operation, forward, false, epoch);
  const item = await workItem(ctx, d, governed);
  if (!item.ok) return item.result;
  const answer = await runFor(ctx, d, { ...d.operation, workItemId: item.id }, forward, true, epoch);
  // The item's work ends once the call is answered, refused or not: a repeat brings its own item,
  // and an occurrence left in doubt keeps being reconciled on its own (docs/mcp.md "Missions").
  const done = await attempt(() => ctx.executor.harness.complete(item.id));
  if (!done.ok) ctx.log?.(`work item ${item.id} not completed (${done.code}); it stays running`);
  return answer;
}

/**
 * The governed call's work item (Mission build spec A3.6, A6): enqueued under the Mission in this
 * executor's lineage and dispatched through Baton's check (A3.1), which refuses a Mission that is
 * no longer active. Its id goes on the operation: create links the occurrence to it, and entry
 * checks the Mission in its own transaction.
 */
async function workItem(
  ctx: Ctx,
  d: DerivedCall,
  g: Governed,
): Promise<{ ok: true; id: string } | { ok: false; result: CallToolResult }> {
  const h = ctx.executor.harness;
  const lost = (code: string): { ok: false; result: CallToolResult } => {
    const msg =
      "Baton's answer for the call's work item was lost; nothing was sent upstream; the same call may be repeated";
    return { ok: false, result: toolError('create_unconfirmed', msg, { details: { cause: code } }) };
  };
  const queued = await attempt(() =>
    h.enqueue({
      action_class: g.actionClass,
      mission_binding: g.binding,
      // A3.8: the item's idempotency key is the occurrence's creation key.
      idempotency_key: d.operation.creationKey,
    }),
  );
  if (!queued.ok) return queued.refusal ? { ok: false, result: refused(queued) } : lost(queued.code);
  const id = queued.value.id;
  const dispatched = await attempt(() => h.dispatch(id));
  if (!dispatched.ok)
    return dispatched.refusal ? { ok: false, result: refused(dispatched) } : lost(dispatched.code);
  return { ok: true, id };
}

async function runFor(
  ctx: Ctx,
  d: DerivedCall,
  op: Operation,
  forward: JsonObject,
  governed: boolean,
  /** The tools epoch the call was last checked against (`schemaNow`). */
  epoch: number,
): Promise<CallToolResult> {
  const ex = ctx.executor;
  if (ctx.upstream.toolsEpoch !== epoch) {
    // Reconnected, or its tools changed, since the check (a governed call's work item took a
    // while): never create against a schema that may be stale. Nothing was created or sent.
    const msg = `upstream ${ctx.upstream.name} changed its tools or was reconnected while the call was checked; nothing was created or sent upstream; the same call may be repeated`;
    return toolError('upstream_unavailable', msg, { details: { upstream: ctx.upstream.name } });
  }
  // One call for the usual case (issue 16 §4): create and enter in one transaction. Anything else
  // — a refusal, a replay without a ticket, a lost answer — takes the step-by-step path below,
  // whose create is a replay: an occurrence the lost call entered is found entered, never sent.
  const started = await attempt(() => ex.createAndEnter(op));
  if (started.ok && started.value.ticket !== null) return send(ctx, d, started.value.ticket, forward);
  // A3.6: the Mission refused the entry in its own transaction (a revocation after the gate).
  if (!started.ok && started.refusal && governed && MISSION_STOPS.has(started.code)) return refused(started);
  const created = await attempt(() => ex.create(op));
  if (!created.ok) {
    if (created.refusal) return refused(created);
    const msg = "Baton's answer to create was lost; nothing was sent upstream; the same call may be repeated";
    return toolError('create_unconfirmed', msg, { details: { cause: created.code } });
  }
  const taken = await successorOf(ctx, d, created.value.occurrence, op.workItemId);
  if (!taken.ok) return taken.result;
  const o = taken.value;
  if (o.phase !== 'reserved') return repeat(ctx, d, o);
  return enterAndSend(ctx, d, o, forward);
}

/**
 * How many released-and-reissued links one call follows. Each link is a generation that reissued
 * the call and died before entering it; a longer chain is refused (fail closed), nothing is sent.
 */
export const MAX_REISSUE_HOPS = 16;

/**
 * The reissue's creation key (AOC-REQ-002, -008): bound to the released occurrence it replaces and
 * independent of the generation, so a repeat in ANY later generation replays the same successor
 * through its creation binding — entered ⇒ a repeat, never sent again (AOC-REQ-010) — instead of
 * minting a new occurrence per generation. Within the occurrences context's NAME rule (≤ 128 chars,
 * `[A-Za-z0-9._:@/-]`); a digest stands in should an id ever break it.
 */
export function reissueKey(creationKey: string, sourceId: string): string {
  const plain = `${creationKey}:reissue:${sourceId}`;
  return NAME.test(plain) ? plain : `mcp:reissue:${digestJcs({ creationKey, source: sourceId })}`;
}

type Successor = { ok: true; value: OccurrenceView } | { ok: false; result: CallToolResult };

/**
 * From the occurrence the creation binding returned to the one this call stands for (DESIGN.md §3):
 * a released one is followed to its reissue; another generation's pre-entry reservation is released
 * (its un-entered state is the proof nothing was sent) and reissued. A chain (A released → B
 * released → C …) is followed link by link, at most MAX_REISSUE_HOPS — a successor an earlier
 * build left under another key (`followSuccessor`) is a link like any other.
 */
async function successorOf(
  ctx: Ctx,
  d: DerivedCall,
  first: OccurrenceView,
  /** A governed call's work item: each successor is reissued for it (its entry checks the Mission). */
  workItemId?: string,
): Promise<Successor> {
  let o = first;
  for (let hops = 0; needsReissue(ctx.executor, o); hops++) {
    if (hops === MAX_REISSUE_HOPS) {
      const msg = `more than ${MAX_REISSUE_HOPS} reissues of this call; nothing was sent upstream`;
      const details = { reason: 'reissue_chain_too_long', hops };
      return { ok: false, result: toolError('reissue_invalid', msg, { occurrence: o, details }) };
    }
    const next = await reissue(ctx, d, first, o, workItemId);
    if (!next.ok) return next;
    o = next.value;
  }
  return { ok: true, value: o };
}

function needsReissue(ex: Executor, o: OccurrenceView): boolean {
  return o.phase === 'released' || (o.phase === 'reserved' && o.capturedGeneration !== ex.generation);
}

/**
 * One link: release `o` if it is still another generation's reservation, then reissue it under
 * `reissueKey` — a replay of the binding when some generation already reissued it. A tombstone
 * that already has a successor under another key (a gateway before `reissueKey`, `<key>:g<N>`) is
 * refused `reissue_invalid` with `details.successor` (one tombstone, one successor): that successor
 * is the next link, read and checked by `followSuccessor`.
 */
async function reissue(
  ctx: Ctx,
  d: DerivedCall,
  first: OccurrenceView,
  o: OccurrenceView,
  workItemId: string | undefined,
): Promise<Successor> {
  const fail = (result: CallToolResult): Successor => ({ ok: false, result });
  const unconfirmed = (code: string, of: OccurrenceView): CallToolResult =>
    toolError(code, 'reissue unconfirmed; nothing was sent upstream', { occurrence: of });
  let source = o;
  if (source.phase === 'reserved') {
    const rel = await attempt(() => ctx.executor.release(o.id, o.provider.requestDigest));
    if (!rel.ok) return fail(rel.refusal ? refused(rel, o) : unconfirmed(rel.code, o));
    source = rel.value;
  }
  const creationKey = reissueKey(d.operation.creationKey, source.id);
  const governed = workItemId === undefined ? {} : { workItemId };
  const re = await attempt(() => ctx.executor.reissue({ occurrenceId: source.id, creationKey, ...governed }));
  if (re.ok) return { ok: true, value: re.value.occurrence };
  const successor = re.refusal && re.code === 'reissue_invalid' ? re.details?.['successor'] : undefined;
  if (typeof successor === 'string') {
    const next = await followSuccessor(ctx, first, source, successor);
    // A successor an earlier gateway reissued under another key is linked to no work item: a
    // governed call never enters it (its entry would check no Mission, A3.6). Fail closed.
    if (next.ok && workItemId !== undefined && next.value.phase === 'reserved') {
      const msg =
        "the released occurrence's successor is not governed by this call's work item; nothing was sent upstream";
      const details = { reason: 'governed_successor_unlinked', successor };
      return fail(toolError('reissue_invalid', msg, { occurrence: next.value, details }));
    }
    return next;
  }
  return fail(re.refusal ? refused(re, source) : unconfirmed(re.code, source));
}

/**
 * The successor Baton named for the released `source`, read through the gateway's client and
 * taken only if it is that tombstone's reissue for this very call (fail closed): this lineage's,
 * `reissueOf` the source, and the call's provider binding and authority — those of `first`, the
 * occurrence the call's creation binding returned. Anything else is refused and nothing is sent;
 * a lost answer to the read is doubt, and nothing is sent either. Once taken, it is the next link:
 * entered ⇒ a repeat, never sent again (AOC-REQ-010); another generation's reservation ⇒ released
 * and reissued; released ⇒ followed on.
 */
async function followSuccessor(
  ctx: Ctx,
  first: OccurrenceView,
  source: OccurrenceView,
  successorId: string,
): Promise<Successor> {
  const read = await attempt(() => ctx.baton.getOccurrence(successorId));
  if (!read.ok && !read.refusal) {
    // As a lost reissue: nothing was entered on this path, so the same call may be repeated.
    const msg = 'reissue unconfirmed (the successor read was lost); nothing was sent upstream';
    const details = { successor: successorId };
    return { ok: false, result: toolError(read.code, msg, { occurrence: source, details }) };
  }
  const next = read.ok ? read.value.occurrence : undefined;
  if (next === undefined || !isSuccessorFor(ctx.executor, first, source, successorId, next)) {
    const msg = "the released occurrence's successor is not this call's; nothing was sent upstream";
    const details = {
      reason: 'reissue_successor_mismatch',
      successor: successorId,
      ...(read.ok ? {} : { cause: read.code }),
    };
    return { ok: false, result: toolError('reissue_invalid', msg, { occurrence: source, details }) };
  }
  return { ok: true, value: next };
}

function isSuccessorFor(
  ex: Executor,
  first: OccurrenceView,
  source: OccurrenceView,
  id: string,
  next: OccurrenceView,
): boolean {
  const a = first.provider;
  const b = next.provider;
  return (
    next.id === id &&
    next.id !== source.id &&
    next.reissueOf === source.id &&
    next.lineage === ex.lineage &&
    next.lineage === source.lineage &&
    b.profileId === a.profileId &&
    b.profileVersion === a.profileVersion &&
    b.profileDigest === a.profileDigest &&
    b.account === a.account &&
    b.environment === a.environment &&
    b.requestDigest === a.requestDigest &&
    next.authority.id === first.authority.id &&
    next.authority.amount === first.authority.amount
  );
}

/** Already entered (or resolved): never sent again. Ask the status sources once, then answer. */
async function repeat(ctx: Ctx, d: DerivedCall, o: OccurrenceView): Promise<CallToolResult> {
  const settled = o.unresolved ? await settle(ctx, d, o) : { occurrence: o, missingKnowledge: null };
  return answerFromState(ctx, settled, { repeat: true });
}

async function enterAndSend(
  ctx: Ctx,
  d: DerivedCall,
  o: OccurrenceView,
  forward: JsonObject,
): Promise<CallToolResult> {
  const entered = await attempt(() => ctx.executor.enter(o.id));
  if (!entered.ok) {
    if (entered.refusal) return refused(entered, o);
    // The entry may have applied: it is never tried again for this occurrence, and nothing is sent.
    const msg = "Baton's answer to entry was lost; nothing was sent upstream and nothing will be";
    return toolError('entry_unconfirmed', msg, {
      occurrence: { ...o, unresolved: true },
      facts: { repeat: false, upstreamAnswer: false, missingKnowledge: 'unavailable' },
    });
  }
  return send(ctx, d, entered.value, forward);
}

async function send(
  ctx: Ctx,
  d: DerivedCall,
  ticket: EntryTicket,
  forward: JsonObject,
): Promise<CallToolResult> {
  const placed = placeNativeKey(ctx.policy.nativeKey, ticket.nativeKey, d.arguments, forward);
  let answer: CallToolResult;
  try {
    answer = await callUpstream(ctx, {
      name: ctx.policy.tool,
      arguments: placed.arguments,
      _meta: placed.meta,
    });
  } catch {
    ctx.upstream.suspect();
    // Lost or ambiguous: the upstream may have applied it. Settle from the status sources, never resend.
    const settled = await settle(ctx, d, ticket.occurrence);
    return answerFromState(ctx, settled, { repeat: false, lost: true });
  }
  return recordAnswer(ctx, ticket, answer);
}
