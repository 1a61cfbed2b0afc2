/**
 * Finite pending and in-flight limits (AOC-REQ-006, AOC-CASE-012): executor failure must not create
 * unbounded held state. Pending = reserved; in flight = entered and unresolved.
 */
import type { DomainLimits } from '../model.js';
import type { Rejection } from './common.js';
import { reject } from './common.js';

export interface PhaseCounts {
  readonly pending: number;
  readonly inFlight: number;
}

export interface OpenCounts {
  readonly lineage: PhaseCounts;
  readonly domain: PhaseCounts;
}

type LimitCode = 'limit_pending_exceeded' | 'limit_in_flight_exceeded';

/** The refusal when `count` has reached `limit` in one scope; undefined below it. */
function atLimit(
  count: number,
  limit: number,
  code: LimitCode,
  scope: 'lineage' | 'domain',
): Rejection | undefined {
  if (count < limit) return undefined;
  const what = code === 'limit_pending_exceeded' ? 'pending' : 'in-flight';
  return reject(code, `the ${scope} holds its maximum of ${what} occurrences`, { scope, limit });
}

/** New work is refused while either scope is at its pending or in-flight limit. */
export function checkLimits(limits: DomainLimits, counts: OpenCounts): Rejection | undefined {
  return (
    atLimit(counts.lineage.pending, limits.maxPendingPerLineage, 'limit_pending_exceeded', 'lineage') ??
    atLimit(counts.domain.pending, limits.maxPendingPerDomain, 'limit_pending_exceeded', 'domain') ??
    checkInFlight(limits, counts)
  );
}

/** Entry is refused while either scope is at its in-flight limit. */
export function checkInFlight(limits: DomainLimits, counts: OpenCounts): Rejection | undefined {
  return (
    atLimit(counts.lineage.inFlight, limits.maxInFlightPerLineage, 'limit_in_flight_exceeded', 'lineage') ??
    atLimit(counts.domain.inFlight, limits.maxInFlightPerDomain, 'limit_in_flight_exceeded', 'domain')
  );
}
