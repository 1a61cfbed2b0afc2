/**
 * What one status source said, ready for service.observe: the native answer, the pin that verified
 * it (or not), the binding fields it carried, its own time and whether it covers the whole listing.
 * The service judges it against the profile and the exact binding; anything short of the profile is
 * recorded as missing knowledge with its reason and changes nothing (AOC-REQ-009).
 */
import type { JsonObject } from '../../core/json.js';
import type { ObservationInput, StatusSourceKind } from '../../occurrences/index.js';
import type { Authentication, Carried } from '../wire.js';
import { compact } from '../wire.js';

/** The service refuses observations dated more than this after its own clock. */
export const FUTURE_SKEW_MS = 60_000;

/**
 * An answer or event dated later than the service accepts an observation (FUTURE_SKEW_MS after its
 * clock, occurrences/service/observe.ts): not usable now. No date counts as now.
 */
export function futureDated(observedAt: number | undefined, nowMs: number): boolean {
  return (observedAt ?? nowMs) > nowMs + FUTURE_SKEW_MS;
}

export interface SourceReading {
  readonly occurrenceId: string;
  readonly source: string;
  readonly kind: StatusSourceKind;
  /** What happened, for people: `http 200`, `timeout`, `unsigned`, `stopped after 3 pages`… */
  readonly detail: string;
  readonly observation: ObservationInput;
  /** The provider's `Retry-After` on this answer, as sent (the background reconciler honours it). */
  readonly retryAfter?: string;
}

export interface ReadingBase {
  readonly occurrenceId: string;
  readonly source: string;
  readonly kind: StatusSourceKind;
}

export function unavailable(
  b: ReadingBase,
  now: number,
  detail: string,
  response?: JsonObject,
): SourceReading {
  return {
    ...b,
    detail,
    observation: {
      occurrenceId: b.occurrenceId,
      source: b.source,
      observedAt: now,
      result: 'unavailable',
      authentication: { verified: false },
      carried: {},
      ...(response !== undefined && { response }),
    },
  };
}

export interface Answered {
  readonly result: 'found' | 'not_found';
  readonly nativeStatus?: string;
  readonly carried: Carried;
  readonly observedAt: number | undefined;
  readonly response: JsonObject;
  readonly complete: boolean;
  readonly auth: Authentication;
  readonly detail: string;
  /** A listing page's OTHER items matching the occurrence: the service judges them all (AOC-CASE-009). */
  readonly alsoMatched?: readonly { readonly nativeStatus?: string; readonly carried: Carried }[];
}

/** A signature's timestamp counts whole seconds: it was made at most this long after it. */
const SIGNATURE_GRAIN_MS = 1_000;

/**
 * When an answer is from, for the service's freshness judgement (`stale`). Not when it was fetched:
 * an authentic old answer is still authentic, so a replayed one dated "now" would pass as fresh.
 * A verified signature bounds it: an answer is no younger than its signature. So the body's own
 * time when it has one and it is not later than the signature's second, else the signature's
 * time; `now` only for an answer neither dates (unsigned, or trusted by its live channel).
 */
export function answerTime(observedAt: number | undefined, auth: Authentication, now: number): number {
  const signedAt = auth.verified ? auth.signedAt : undefined;
  if (signedAt === undefined) return observedAt ?? now;
  if (observedAt === undefined) return signedAt;
  return observedAt < signedAt + SIGNATURE_GRAIN_MS ? observedAt : signedAt;
}

export function answered(b: ReadingBase, now: number, a: Answered): SourceReading {
  const at = answerTime(a.observedAt, a.auth, now);
  // Either time ahead of our clock says nothing usable about now (the service would refuse it).
  if (Math.max(at, a.observedAt ?? at) > now + FUTURE_SKEW_MS) {
    return unavailable(b, now, 'answer dated in the future');
  }
  const detail = a.auth.verified ? a.detail : `${a.detail} ${a.auth.detail}`;
  return {
    ...b,
    detail,
    observation: {
      occurrenceId: b.occurrenceId,
      source: b.source,
      observedAt: at,
      result: a.result,
      ...(a.nativeStatus !== undefined && { nativeStatus: a.nativeStatus }),
      response: a.response,
      authentication: a.auth.verified ? { verified: true, pin: a.auth.pin } : { verified: false },
      carried: compact(a.carried),
      complete: a.complete,
      ...(a.alsoMatched !== undefined &&
        a.alsoMatched.length > 0 && {
          alsoMatched: a.alsoMatched.map((m) => ({
            ...(m.nativeStatus !== undefined && { nativeStatus: m.nativeStatus }),
            carried: compact(m.carried),
          })),
        }),
    },
  };
}
