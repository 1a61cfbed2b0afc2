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

/** New work is refused while either scope is at its pending or in-flight limit. */
export function checkLimits(limits: DomainLimits, counts: OpenCounts): Rejection | undefined {
  if (counts.lineage.pending >= limits.maxPendingPerLineage) {
    return reject('limit_pending_exceeded', 'the lineage holds its maximum of pending occurrences', {
      scope: 'lineage',
      limit: limits.maxPendingPerLineage,
    });
  }
  if (counts.domain.pending >= limits.maxPendingPerDomain) {
    return reject('limit_pending_exceeded', 'the domain holds its maximum of pending occurrences', {
      scope: 'domain',
      limit: limits.maxPendingPerDomain,
    });
  }
  return checkInFlight(limits, counts);
}

/** Entry is refused while either scope is at its in-flight limit. */
export function checkInFlight(limits: DomainLimits, counts: OpenCounts): Rejection | undefined {
  if (counts.lineage.inFlight >= limits.maxInFlightPerLineage) {
    return reject('limit_in_flight_exceeded', 'the lineage holds its maximum of in-flight occurrences', {
      scope: 'lineage',
      limit: limits.maxInFlightPerLineage,
    });
  }
  if (counts.domain.inFlight >= limits.maxInFlightPerDomain) {
    return reject('limit_in_flight_exceeded', 'the domain holds its maximum of in-flight occurrences', {
      scope: 'domain',
      limit: limits.maxInFlightPerDomain,
    });
  }
  return undefined;
}
