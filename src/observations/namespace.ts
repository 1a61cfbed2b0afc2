/**
 * Baton's own namespace (OBS-08 ¶19, OBS-12 ¶25, B7-12): the producer `urn:baton:<domain>` and
 * every identifier under it belong to the records Baton projects from its evidence log (handoff
 * records B3.3, barrier records B3.4). A submitted record that claims them would be stored under
 * Baton's producer, count as an already-projected takeover, take the id of a record Baton has yet
 * to write, and be reported as Baton's own evidence — so a submission may never claim it.
 */
import type { ObservationRecord } from './model.js';
import { producerOf } from './handoff.js';
import { refuse } from './refusal.js';

/** The namespace of a record that names no producer (B2: `producer` is optional locally). */
export const LOCAL_PRODUCER = 'urn:baton:local';

/**
 * The producer namespace a record is stored, keyed and corrected under (OBS-08 ¶19: ids are unique
 * within it, a correction replaces a predecessor of the same producer): its own `producer`, or the
 * local one when it names none. The one normalisation the store, CIF and the report all use, so a
 * record that omits the producer and one naming `urn:baton:local` are the same namespace everywhere.
 */
export const producerNamespace = (record: Pick<ObservationRecord, 'producer'>): string =>
  record.producer ?? LOCAL_PRODUCER;

/**
 * True when `value` is Baton's producer or an identifier under it. The comparison ignores case:
 * `urn` and the NID are case-insensitive (RFC 8141), and a near-identical spelling of Baton's
 * namespace is refused rather than shown beside the real one (fail closed).
 */
export function inBatonNamespace(value: string, domain: string): boolean {
  const own = producerOf(domain).toLowerCase();
  const v = value.toLowerCase();
  return v === own || v.startsWith(`${own}:`);
}

/**
 * Refuse (`observation_record_invalid`, rule `reserved_namespace`) a submitted record whose
 * producer — `producer` is the namespace it will be stored under, the record's own or the local
 * default — or `record_id` lies in Baton's namespace for `domain`.
 */
export function refuseBatonNamespaceClaim(record: ObservationRecord, producer: string, domain: string): void {
  if (inBatonNamespace(producer, domain)) {
    refuse('reserved_namespace', '$.producer', 'is Baton’s own producer: only records Baton projects use it');
  }
  if (inBatonNamespace(record.record_id, domain)) {
    refuse('reserved_namespace', '$.record_id', 'lies in Baton’s own record namespace');
  }
}
