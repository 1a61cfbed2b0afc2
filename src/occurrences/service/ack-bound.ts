/**
 * Bounded acknowledgement evidence. An executor reports the provider's answer to its entry call
 * (`POST /v1/occurrences/{id}/acknowledgements`, acknowledge-and-settle) as UNAUTHENTICATED
 * evidence (AOC-REQ-009: only Baton's status-source layer authenticates), and each report used to
 * be appended: one executor could grow an occurrence's chain, and every read of it, without bound.
 * Bounded as refused webhook deliveries are (provider-event.ts, REFUSED_EVIDENCE_CAP):
 * - a report identical to one already kept (same actor, same evidence body but for `observedAt`:
 *   same result, native status, carried binding, response or its digest, and the same reading of
 *   it) is answered as before and not appended again (`repeat`);
 * - distinct reports past ACKNOWLEDGEMENT_EVIDENCE_CAP per occurrence and stage are answered and
 *   not appended (`capped`); the first one past the cap appends one
 *   `acknowledgement_evidence_capped` event instead, so the chain says reports were dropped.
 * The first acknowledgement of the entry is always kept: the count starts afresh at entry.
 * Status readings a caller asked for that move nothing are bounded the same way (`readingKind`).
 */
import { digestJcs } from '../../core/digest.js';
import type { JsonObject } from '../../core/json.js';
import { ACKNOWLEDGEMENT_SOURCE, type ObservationCommand } from '../machine/assess.js';
import { event, occurrenceSubject } from '../machine/common.js';
import type { ObserveDecision } from '../machine/observe.js';
import type { OccurrenceRecord } from '../model.js';
import type { OccurrencesRepository, ReportKind } from '../ports.js';

/**
 * How many distinct unauthenticated acknowledgements one occurrence keeps before entry, and again
 * after it; and how many more readings callers asked for that moved nothing (reconcile).
 */
export const ACKNOWLEDGEMENT_EVIDENCE_CAP = 32;

/** Why an acknowledgement was answered without being appended. */
export type NotRecorded = 'repeat' | 'capped';

/** A decision that moves nothing: no outcome, effect, phase, conflict flag or provider reference. */
function movesNothing(o: OccurrenceRecord, d: ObserveDecision): boolean {
  return !d.changed && d.assessment.bindReference === null && d.occurrence === o && d.events.length === 1;
}

/**
 * Only an unauthenticated acknowledgement whose decision moves nothing may be left out. AOC evidence
 * must not be lost: an acknowledgement that could change an outcome, an effect, the phase, the
 * conflict flag or the bound provider reference (AOC-REQ-004, -007, -009) is always appended, and
 * so is every authenticated one (only Baton's trusted layer makes those). An unauthenticated one
 * never moves the state (assess.ts refuses it before any mapping), so AOC-CASE-009's "observations
 * are preserved" holds for the first of each kind and, past the cap, for the mark that says so.
 */
function ackKind(o: OccurrenceRecord, cmd: ObservationCommand, d: ObserveDecision): ReportKind | undefined {
  if (cmd.source !== ACKNOWLEDGEMENT_SOURCE || cmd.authentication.verified || !movesNothing(o, d))
    return undefined;
  return o.enteredAt === null ? 'ack:before_entry' : 'ack:entered';
}

/**
 * A status reading a caller asked for (`POST /v1/occurrences/{id}/reconcile`, `executor.reconcile`,
 * acknowledge-and-settle's status pass) that moved nothing: the occurrence stayed unknown, or the
 * source answered what is already known (a provider that keeps answering `pending`). Each call
 * used to append one, so repeated asks grew the chain without bound; providers stamp their answers
 * (the sandbox's `observed_at`), so two asks are rarely identical and the cap is what bounds them.
 * A reading that moves anything is always appended (AOC-REQ-009), and so is the first reading of
 * each source with each missing-knowledge reason, or with each answer it mapped: a new reason
 * (`not_found_beyond_retention` after `not_found`) is knowledge a conformance report must show
 * (AOC "Conformance": missing status knowledge is reported), and a new answer (`processing` after
 * `pending`) is the provider's own record. Both sets are finite: the reasons are the draft's, the
 * answers the profile's mapped native statuses. The background reconciler's own readings (bounded
 * by its backoff) are not touched.
 */
async function readingKind(
  repo: OccurrencesRepository,
  o: OccurrenceRecord,
  cmd: ObservationCommand,
  d: ObserveDecision,
  now: number,
): Promise<ReportKind | undefined> {
  if (cmd.source === ACKNOWLEDGEMENT_SOURCE || !movesNothing(o, d)) return undefined;
  const { missing, mapping } = d.assessment;
  const what =
    missing !== null
      ? missing
      : `answered:${mapping?.interpretation ?? 'unmapped'}:${cmd.nativeStatus ?? ''}`;
  // Migration 010's table again, under `reasons:<id>`: one row per (source, reason or answer).
  const novel = await repo.rememberProviderEvent(`reasons:${o.id}`, `${cmd.source}|${what}`, o.id, now);
  return novel ? undefined : 'reconcile';
}

/**
 * What makes two reports the same: who reported it and its evidence body, its time aside —
 * `observedAt`, and the executor's claimed time a fast worker clock sent (`claimedObservedAt`,
 * service/observe.ts), which is absent from every other body, so their fingerprints are unchanged.
 */
function fingerprint(d: ObserveDecision, actor: string): string {
  const body = d.events[0]?.body ?? {};
  const observed = (body['observation'] ?? {}) as JsonObject;
  const { observedAt: _at, claimedObservedAt: _claimed, ...observation } = observed;
  return digestJcs({ actor, body: { ...body, observation } });
}

function capMark(o: OccurrenceRecord, kind: ReportKind, cmd: ObservationCommand) {
  const cap = ACKNOWLEDGEMENT_EVIDENCE_CAP;
  if (kind === 'reconcile')
    return event(occurrenceSubject(o.id), 'reconcile_evidence_capped', { cap, source: cmd.source });
  const stage = kind === 'ack:entered' ? 'entered' : 'before_entry';
  return event(occurrenceSubject(o.id), 'acknowledgement_evidence_capped', { cap, stage });
}

/**
 * Undefined: append the decision's events as always. Otherwise the report is not appended; the
 * first one past the cap appends the kind's one mark instead. `asked`: a status reading a caller
 * asked for (reconcileOccurrence), not one of Baton's own schedule.
 */
export async function boundReport(
  repo: OccurrencesRepository,
  o: OccurrenceRecord,
  cmd: ObservationCommand,
  d: ObserveDecision,
  actor: string,
  now: number,
  asked: boolean,
): Promise<{ readonly notRecorded: NotRecorded } | undefined> {
  const kind = ackKind(o, cmd, d) ?? (asked ? await readingKind(repo, o, cmd, d, now) : undefined);
  if (kind === undefined) return undefined;
  const cap = ACKNOWLEDGEMENT_EVIDENCE_CAP;
  const memory = await repo.rememberReport(o.id, kind, fingerprint(d, actor), now, cap);
  if (memory === 'fresh') return undefined;
  if (memory === 'seen') return { notRecorded: 'repeat' };
  if (memory === 'cap_reached') await repo.appendEvents([capMark(o, kind, cmd)], now, actor);
  return { notRecorded: 'capped' };
}
