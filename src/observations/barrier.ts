/**
 * Revocation barrier (B3.4, OBS-20): a bound occurrence's entry time t_e (Baton's clock) against
 * the Mission's `committed_at` t_r (the issuer's clock). With u = 30 s + the recorded
 * uncertainty: t_e < t_r − u ⇒ MATCH; t_e > t_r + u ⇒ MISMATCH; otherwise precedence is
 * undecidable and the authority invariant is UNKNOWN `timing_ambiguous`. When only an interval is
 * known for t_r (a Status answer says "non-active now", not when), MATCH needs t_e before its
 * earliest end and MISMATCH after its latest. Baton claims admission fencing only, never a
 * computation or effective stop. `projectBarrier` turns the facts into the record, a pure function
 * (same facts ⇒ same record ⇒, signed with Ed25519, same bytes).
 */
import { formatRfc3339 } from '../core/index.js';
import {
  EVIDENCE_CHAIN_UNVERIFIED,
  HANDOFF_VALIDITY_MS,
  WITNESS_LIMITATION,
  citeEvidenceEvent,
  producerOf,
} from './handoff.js';
import {
  OBSERVATION_PROFILE,
  OBSERVATION_VERSION,
  type EvidenceItem,
  type Invariant,
  type ObservationRecord,
} from './model.js';

export const BARRIER_BASE_UNCERTAINTY_MS = 30_000;
export const BARRIER_ANALYSIS_REVISION = 'urn:baton:projector:barrier:1';
export const ADMISSION_ONLY_LIMITATION =
  'Baton claims admission fencing only, never a computation stop or an effective stop';

export interface BarrierFacts {
  readonly enteredAt: number;
  /** t_r, or the latest it can be when only an interval is known. */
  readonly committedAt: number;
  /** The earliest t_r can be; absent = `committedAt` (exact); null = unknown (MATCH impossible). */
  readonly committedAtEarliest?: number | null;
  /** Uncertainty recorded for the two clocks, in ms (0 when none is known beyond the base). */
  readonly recordedUncertaintyMs: number;
  /** Locator of the evidence both times came from. */
  readonly reference: string;
}

export function barrierUncertaintyMs(recordedMs: number): number {
  return BARRIER_BASE_UNCERTAINTY_MS + Math.max(0, recordedMs);
}

export function codeBarrier(f: BarrierFacts): Invariant {
  const u = barrierUncertaintyMs(f.recordedUncertaintyMs);
  const earliest = f.committedAtEarliest === undefined ? f.committedAt : f.committedAtEarliest;
  if (earliest !== null && f.enteredAt < earliest - u) {
    return {
      dimension: 'authority',
      status: 'MATCH',
      reference: f.reference,
      reason: 'entered before the barrier',
    };
  }
  if (f.enteredAt > f.committedAt + u) {
    return {
      dimension: 'authority',
      status: 'MISMATCH',
      reference: f.reference,
      reason: 'entered after the barrier',
    };
  }
  return { dimension: 'authority', status: 'UNKNOWN', reference: f.reference, reason: 'timing_ambiguous' };
}

/** One evidence-log event a barrier record cites. */
export interface CitedEvent {
  readonly subject: string;
  readonly idx: number;
  readonly hash: string;
}

export interface BarrierRecordFacts {
  readonly domain: string;
  readonly origin: string;
  readonly missionId: string;
  /** The mission event Baton committed the non-active view with (its time is `observed_at`). */
  readonly barrier: CitedEvent & {
    readonly seq: number;
    readonly at: number;
    readonly state: string;
    /** `signal`: a SET's exact `committed_at`; `status`: only an interval is known. */
    readonly source: 'signal' | 'status';
  };
  /** t_r's bounds in ms (issuer clock); see `BarrierFacts`. */
  readonly committedAt: number;
  readonly committedAtEarliest: number | null;
  readonly occurrence: string;
  readonly lineage: string;
  /** The occurrence's `provider_entered` event; null when its chain holds none that verifies. */
  readonly entered: (CitedEvent & { readonly at: number; readonly generation: number | null }) | null;
  /** Both chains (mission, occurrence) verify: hashes, links, positions, recorded heads. */
  readonly chainsVerify: boolean;
}

export const barrierRecordId = (domain: string, occurrence: string, barrierIdx: number): string =>
  `urn:baton:${domain}:record:barrier:${occurrence}:${barrierIdx}`;
const missionScope = (domain: string, origin: string, id: string): string =>
  `urn:baton:${domain}:mission:${encodeURIComponent(origin)}:${encodeURIComponent(id)}`;
const locatorOf = (domain: string, e: CitedEvent): string =>
  `urn:baton:evidence:${domain}:${encodeURIComponent(e.subject)}#${e.idx}`;

function cite(domain: string, e: CitedEvent): EvidenceItem {
  return citeEvidenceEvent(locatorOf(domain, e), e.hash);
}

/** OBS-13: without a verified entry event and verified chains the invariant is UNKNOWN, never MATCH. */
function invariant(f: BarrierRecordFacts, u: number): Invariant {
  if (f.entered === null || !f.chainsVerify)
    return {
      dimension: 'authority',
      status: 'UNKNOWN',
      reference: null,
      reason: f.entered === null ? 'entry_evidence_missing' : EVIDENCE_CHAIN_UNVERIFIED,
    };
  return codeBarrier({
    enteredAt: f.entered.at,
    committedAt: f.committedAt,
    committedAtEarliest: f.committedAtEarliest,
    recordedUncertaintyMs: u - BARRIER_BASE_UNCERTAINTY_MS,
    reference: f.barrier.hash,
  });
}

export function projectBarrier(f: BarrierRecordFacts): ObservationRecord {
  const { domain } = f;
  const u = barrierUncertaintyMs(0);
  const observedAt = formatRfc3339(f.barrier.at);
  const generation = f.entered?.generation ?? null;
  return {
    version: OBSERVATION_VERSION,
    profile: OBSERVATION_PROFILE,
    producer: producerOf(domain),
    record_id: barrierRecordId(domain, f.occurrence, f.barrier.idx),
    run_id: null,
    event_type: 'revocation_barrier',
    scope_id: missionScope(domain, f.origin, f.missionId),
    authority_epoch: generation,
    source_runtime:
      generation === null ? null : `urn:baton:${domain}:lineage:${f.lineage}:generation:${generation}`,
    destination_runtime: null,
    observed_at: observedAt,
    order: { domain: `baton:${domain}:evidence`, sequence: String(f.barrier.seq), uncertainty_ms: u },
    invariants: [invariant(f, u)],
    evidence: [cite(domain, f.barrier), ...(f.entered === null ? [] : [cite(domain, f.entered)])],
    outcome: {
      proposal: 'NOT_APPLICABLE',
      admission: f.entered === null ? null : 'ADMITTED',
      effect: 'NOT_MEASURED',
      operation_ref: `urn:baton:${domain}:occurrence:${f.occurrence}`,
    },
    limitations: [
      WITNESS_LIMITATION,
      ADMISSION_ONLY_LIMITATION,
      f.barrier.source === 'signal'
        ? 'committed_at is the issuer’s clock, the entry time Baton’s; u = 30 s, no clock offset recorded'
        : 'a Status answer bounds the revocation time, it does not state it; u = 30 s, no clock offset recorded',
    ],
    analysis_revision: BARRIER_ANALYSIS_REVISION,
    classification: 'OBSERVED_WITH_STATED_EVIDENCE',
    colocated_roles: ['producer', 'subject', 'observer', 'verifier'],
    independence_claimed: false,
    audience: producerOf(domain),
    issued_at: observedAt,
    expires_at: formatRfc3339(f.barrier.at + HANDOFF_VALIDITY_MS),
  };
}
