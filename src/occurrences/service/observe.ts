/**
 * Observations from Baton's trusted status-source layer (see inputs-observe.ts for why the
 * `authentication` verdict is trusted here and must never come from an executor). One
 * transaction: lock the occurrence, judge the observation, append it, move the state if allowed.
 * Nothing here reads or writes the lineage or the authority (AOC-REQ-007, AOC-REQ-012).
 */
import { digestBytes } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import { readObservation } from '../inputs-observe.js';
import { decideObserve, type ObserveDecision } from '../machine/observe.js';
import { ACKNOWLEDGEMENT_SOURCE, type ObservationCommand } from '../machine/assess.js';
import type { Interpretation, MissingKnowledgeReason } from '../model.js';
import type { OccurrencesRepository } from '../ports.js';
import type { OccurrenceView, ServiceContext } from './context.js';
import { boundReport, type NotRecorded } from './ack-bound.js';
import { appendAll, authenticate, executorActor, refuseUnlessOwn, view } from './context.js';

export interface ObserveResult {
  readonly occurrence: OccurrenceView;
  /**
   * True when the observation was authoritative (no missing knowledge) and the state now agrees
   * with it: it moved the state or confirmed it. False for every missing-knowledge reason —
   * including `conflict`, which an answer that makes or meets a conflict gets (AOC-CASE-009: a
   * conflict is sticky and later answers pick no side). `changed` says whether anything moved.
   */
  readonly effective: boolean;
  readonly interpretation: Interpretation | null;
  readonly missingKnowledge: MissingKnowledgeReason | null;
  readonly changed: boolean;
  /**
   * Present only when this acknowledgement, or a status reading a caller asked for, was answered
   * WITHOUT being appended (ack-bound.ts): `repeat`, an identical one is already in the evidence;
   * `capped`, the occurrence keeps no more of its kind. Never set for anything that moved the state.
   */
  readonly notRecorded?: NotRecorded;
}

/** Observations may not come from the future beyond this (a clock or a forged timestamp). */
const FUTURE_SKEW_MS = 60_000;

/**
 * `reporter`: the executor whose credential reports it (an acknowledgement over HTTP). It is
 * authenticated here, in the command's own transaction, and sees only its own lineage's
 * occurrences; its report is recorded under its own name (issue 16 §1).
 */
export async function observe(
  ctx: ServiceContext,
  input: unknown,
  acknowledgement: boolean,
  actor?: string,
  requestedBy?: string,
  reporter?: { readonly credential: string },
  /** A reading a caller asked for: bounded when it moves nothing (ack-bound.ts). */
  asked = false,
): Promise<ObserveResult> {
  const cmd = readObservation(input, acknowledgement);
  return ctx.uow.run((repo) => observeIn(ctx, repo, cmd, actor, requestedBy, reporter, asked));
}

/**
 * Several trusted observations in ONE transaction, in order, each judged exactly as `observe`
 * would judge it alone (serve's reconciler: one stage of a tick shares one COMMIT, issue 13 §8).
 * A refusal of any rolls back all of them: the caller then records them one by one.
 */
export async function observeAll(
  ctx: ServiceContext,
  inputs: readonly unknown[],
  requestedBy?: string,
): Promise<ObserveResult[]> {
  const cmds = inputs.map((i) => readObservation(i, false));
  return ctx.uow.run(async (repo) => {
    const out: ObserveResult[] = [];
    for (const cmd of cmds) out.push(await observeIn(ctx, repo, cmd, undefined, requestedBy));
    return out;
  });
}

/** What acknowledge-and-settle (issue 16 §4) records in one transaction: the executor's word, then Baton's. */
export interface AcknowledgedObserved {
  readonly acknowledgement: ObserveResult;
  /** One per status observation given, in order (the last one is the occurrence as it stands). */
  readonly observations: readonly ObserveResult[];
}

/**
 * The provider's acknowledgement (recorded under `ackActor`, unauthenticated unless the trusted
 * layer says otherwise) and the status-source observations already read for the same occurrence,
 * in ONE transaction and in that order — the evidence create-then-acknowledge-then-reconcile
 * would append, without the transactions between them.
 */
export async function acknowledgeAndObserve(
  ctx: ServiceContext,
  ack: unknown,
  observations: readonly unknown[],
  ackActor?: string,
  requestedBy?: string,
  /** The executor reporting the answer: authenticated in this transaction (issue 16 §1). */
  reporter?: { readonly credential: string },
): Promise<AcknowledgedObserved> {
  const a = readObservation(ack, true);
  const cmds = observations.map((o) => readObservation(o));
  if (cmds.some((c) => c.occurrenceId !== a.occurrenceId)) {
    throw new BatonError('observation_invalid', 'every observation must name the acknowledged occurrence');
  }
  return ctx.uow.run(async (repo) => {
    const acknowledgement = await observeIn(ctx, repo, a, ackActor, undefined, reporter);
    const seen: ObserveResult[] = [];
    // Readings the executor asked for by calling: bounded when they move nothing (ack-bound.ts).
    for (const c of cmds) seen.push(await observeIn(ctx, repo, c, undefined, requestedBy, undefined, true));
    return { acknowledgement, observations: seen };
  });
}

/**
 * The observation as it is recorded. A status source's answer dated beyond the skew is refused:
 * Baton's own layer read that date from the provider's answer, and a future one is a forged
 * timestamp or a broken clock. An executor's acknowledgement is different: its date is the
 * worker's unauthenticated claim (AOC-REQ-009), and refusing it would roll back the whole
 * acknowledge-and-settle, Baton's own status pass included, losing the provider's answer
 * (AOC-REQ-004) over a fast worker clock. It is recorded at the server's time instead, with the
 * claimed time kept in its evidence body as `claimedObservedAt`.
 */
function datedAt(cmd: ObservationCommand, now: number): ObservationCommand {
  if (cmd.observedAt <= now + FUTURE_SKEW_MS) return cmd;
  if (cmd.source === ACKNOWLEDGEMENT_SOURCE)
    return { ...cmd, observedAt: now, claimedObservedAt: cmd.observedAt };
  throw new BatonError('observation_invalid', 'observedAt lies in the future');
}

/** One observation inside the caller's transaction (also provider-event.ts). */
export async function observeIn(
  ctx: ServiceContext,
  repo: OccurrencesRepository,
  claimed: ObservationCommand,
  actor?: string,
  requestedBy?: string,
  reporter?: { readonly credential: string },
  asked = false,
): Promise<ObserveResult> {
  const now = ctx.clock.wallMs();
  const cmd = datedAt(claimed, now);
  // One round trip for the credential and the locked occurrence where the store offers it (issue 16 §2).
  if (reporter !== undefined)
    await repo.prefetchObserve?.(digestBytes(reporter.credential), cmd.occurrenceId);
  const caller = reporter === undefined ? undefined : await authenticate(repo, reporter.credential);
  const locked = await repo.lockOccurrence(cmd.occurrenceId);
  const o = caller === undefined ? locked : refuseUnlessOwn(caller, locked);
  if (o === undefined) throw new BatonError('occurrence_not_found', 'no such occurrence');
  const profile = await repo.getProfile(o.provider.profileId, o.provider.profileVersion);
  if (profile === undefined) throw new BatonError('store_corrupt', 'the bound profile is missing');
  let d = decideObserve(o, profile.document, cmd, now, requestedBy);
  const ref = d.assessment.bindReference;
  // AOC-REQ-010: a reference is bound to one occurrence only (the store's exclusive index). An
  // authenticated answer naming one that is another's is still evidence (AOC-REQ-004, AOC-CASE-009):
  // it is judged again as `binding_mismatch`, kept, and moves neither occurrence — never refused,
  // which would lose it (and a webhook's event id with it, so the provider retried forever).
  if (ref !== null && !(await repo.addLinkedId(o, { type: 'provider_reference', value: ref })))
    d = decideObserve(o, profile.document, cmd, now, requestedBy, true);
  const by = (caller === undefined ? actor : executorActor(caller)) ?? `status-source:${cmd.source}`;
  const bounded = await boundReport(repo, o, cmd, d, by, now, asked);
  if (bounded !== undefined) return { ...result(d), ...bounded };
  if (d.occurrence !== o) await repo.updateOccurrence(d.occurrence, o.version);
  await appendAll(repo, d.events, now, by);
  return result(d);
}

function result(d: ObserveDecision): ObserveResult {
  return {
    occurrence: view(d.occurrence),
    effective: d.assessment.missing === null,
    interpretation: d.assessment.mapping?.interpretation ?? null,
    missingKnowledge: d.assessment.missing,
    changed: d.changed,
  };
}
