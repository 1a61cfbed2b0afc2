/**
 * What every pure transition shares: the Rejection value, the caller, and the events it plans.
 * Transitions never throw for a refusal; they return a Rejection, and the service turns it into a
 * BatonError that rolls the whole transaction back (a refusal changes no state).
 */
import type { BatonErrorCode } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import type { LineageRecord, OccurrenceRecord, PlannedEvent } from '../model.js';

export interface Rejection {
  readonly rejected: true;
  readonly code: BatonErrorCode;
  readonly message: string;
  readonly details: JsonObject;
}

export function reject(code: BatonErrorCode, message: string, details: JsonObject = {}): Rejection {
  return { rejected: true, code, message, details };
}

/**
 * No provider profile registered under this id and version. Both are named (message and details):
 * they are the caller's own identifiers, not secrets, and a pinned version (`<version>.<8 hex>`)
 * differs from the one a caller had in mind by a suffix only.
 */
export function profileNotFound(profileId: string, profileVersion: string): Rejection {
  return reject('profile_not_found', `no such provider profile version: ${profileId}@${profileVersion}`, {
    profileId,
    profileVersion,
  });
}

export function isRejection(value: unknown): value is Rejection {
  return typeof value === 'object' && value !== null && (value as { rejected?: unknown }).rejected === true;
}

/** An authenticated executor: the lineage and generation its credential is bound to. */
export interface Caller {
  readonly lineage: string;
  readonly generation: number;
}

const OCCURRENCE_PREFIX = 'occurrence:';

export function occurrenceSubject(id: string): string {
  return `${OCCURRENCE_PREFIX}${id}`;
}

/** The occurrence id an evidence subject names, or undefined for another kind of subject. */
export function occurrenceIdOf(subject: string): string | undefined {
  return subject.startsWith(OCCURRENCE_PREFIX) ? subject.slice(OCCURRENCE_PREFIX.length) : undefined;
}

export function lineageSubject(id: string): string {
  return `lineage:${id}`;
}

export function event(subject: string, type: string, body: JsonObject): PlannedEvent {
  return { subject, type, body };
}

/**
 * AOC-REQ-006: a credential of a retired generation is refused everywhere, and only the lineage's
 * current generation may act for it.
 */
export function checkCurrent(caller: Caller, lineage: LineageRecord): Rejection | undefined {
  if (caller.lineage !== lineage.id) {
    return reject('forbidden', 'the credential is bound to another lineage');
  }
  if (caller.generation < lineage.generation) {
    return reject('generation_retired', 'this executor generation was retired by a takeover', {
      generation: caller.generation,
      current: lineage.generation,
    });
  }
  if (caller.generation !== lineage.generation) {
    return reject('generation_mismatch', 'the credential names a generation the lineage never issued');
  }
  return undefined;
}

/** The state facts an event records before/after a change (never the request or a secret). */
export function stateFacts(o: OccurrenceRecord): JsonObject {
  return { phase: o.phase, outcome: o.outcome, effect: o.effect, conflict: o.conflict };
}
