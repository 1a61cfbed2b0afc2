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
 */
import { digestJcs } from '../../core/digest.js';
import type { JsonObject } from '../../core/json.js';
import { ACKNOWLEDGEMENT_SOURCE, type ObservationCommand } from '../machine/assess.js';
import { event, occurrenceSubject } from '../machine/common.js';
import type { ObserveDecision } from '../machine/observe.js';
import type { OccurrenceRecord } from '../model.js';
import type { OccurrencesRepository } from '../ports.js';

/** How many distinct unauthenticated acknowledgements one occurrence keeps, before and after entry. */
export const ACKNOWLEDGEMENT_EVIDENCE_CAP = 32;

/** Why an acknowledgement was answered without being appended. */
export type NotRecorded = 'repeat' | 'capped';

/**
 * Only an unauthenticated acknowledgement whose decision moves nothing may be left out. AOC evidence
 * must not be lost: an acknowledgement that could change an outcome, an effect, the phase, the
 * conflict flag or the bound provider reference (AOC-REQ-004, -007, -009) is always appended, and
 * so is every authenticated one (only Baton's trusted layer makes those). An unauthenticated one
 * never moves the state (assess.ts refuses it before any mapping), so AOC-CASE-009's "observations
 * are preserved" holds for the first of each kind and, past the cap, for the mark that says so.
 */
function droppable(o: OccurrenceRecord, cmd: ObservationCommand, d: ObserveDecision): boolean {
  return (
    cmd.source === ACKNOWLEDGEMENT_SOURCE &&
    !cmd.authentication.verified &&
    !d.changed &&
    d.assessment.bindReference === null &&
    d.occurrence === o &&
    d.events.length === 1
  );
}

/** What makes two reports the same: who reported it and its evidence body, `observedAt` aside. */
function fingerprint(d: ObserveDecision, actor: string): string {
  const body = d.events[0]?.body ?? {};
  const { observedAt: _at, ...observation } = (body['observation'] ?? {}) as JsonObject;
  return digestJcs({ actor, body: { ...body, observation } });
}

/**
 * Undefined: append the decision's events as always. Otherwise the report is not appended, and
 * `marked` says this one appended the stage's one `acknowledgement_evidence_capped` event.
 */
export async function boundAcknowledgement(
  repo: OccurrencesRepository,
  o: OccurrenceRecord,
  cmd: ObservationCommand,
  d: ObserveDecision,
  actor: string,
  now: number,
): Promise<{ readonly notRecorded: NotRecorded } | undefined> {
  if (!droppable(o, cmd, d)) return undefined;
  const stage = o.enteredAt === null ? 'before_entry' : 'entered';
  const cap = ACKNOWLEDGEMENT_EVIDENCE_CAP;
  const memory = await repo.rememberAcknowledgement(o.id, stage, fingerprint(d, actor), now, cap);
  if (memory === 'fresh') return undefined;
  if (memory === 'seen') return { notRecorded: 'repeat' };
  if (memory === 'cap_reached') {
    const mark = event(occurrenceSubject(o.id), 'acknowledgement_evidence_capped', { cap, stage });
    await repo.appendEvents([mark], now, actor);
  }
  return { notRecorded: 'capped' };
}
