/**
 * The handoff record of one takeover (B3.3), a pure function of facts read from the evidence log:
 * the same facts give the same record and, signed with the same key, the same bytes (Ed25519 is
 * deterministic and every time in the record comes from the takeover event). Memory is honestly
 * UNKNOWN: Baton never sees an executor's memory or context.
 */
import { formatRfc3339 } from '../core/index.js';
import {
  OBSERVATION_PROFILE,
  OBSERVATION_VERSION,
  type EvidenceItem,
  type Invariant,
  type ObservationRecord,
} from './model.js';

/** One of Baton's own evidence events cited by its locator and the SHA-256 of its JCS hash input. */
export function citeEvidenceEvent(locator: string, hash: string): EvidenceItem {
  return {
    locator,
    method: 'direct_capture',
    verification: 'OBSERVED_WITH_STATED_EVIDENCE',
    byte_digest: {
      algorithm: 'sha-256',
      representation: 'jcs',
      artifact: 'baton evidence event hash input',
      value: hash,
    },
  };
}

/**
 * What the projector's derived values were computed by (OBS-08: derived labels name their revision).
 * Revision 2 goes with HANDOFF_PROFILE version 2: authority UNKNOWN (transaction_unidentified) when
 * an `authority:*` event shares the takeover's instant and actor, and state, policy and authority
 * UNKNOWN (evidence_chain_unverified) when their chains do not verify (B3.3, OBS-13, OBS-27).
 */
export const HANDOFF_ANALYSIS_REVISION = 'urn:baton:projector:handoff:2';
/**
 * Earlier revisions of this analysis. A stored record derived under one of them whose re-derivation
 * differs is corrected (a new record naming it in `supersedes`, OBS-08 ¶19), not reported as a
 * conflict: the rules changed, not the evidence. Any other revision that differs is a conflict.
 */
export const HANDOFF_PRIOR_REVISIONS: readonly string[] = ['urn:baton:projector:handoff:1'];

/**
 * The id of the correction that restates Baton's record `recordId` under analysis `revision`
 * (OBS-08 ¶19: a correction is a new record in the producer's namespace, never an overwrite).
 */
export const revisedRecordId = (recordId: string, revision: string): string =>
  `${recordId}:revision:${revision.slice(revision.lastIndexOf(':') + 1)}`;
/** How long a stored handoff record stays acceptable to a verifier (its `expires_at`). */
export const HANDOFF_VALIDITY_MS = 366 * 24 * 3600 * 1000;
export const WITNESS_LIMITATION = 'witness and subject share Baton’s store and domain key';
export const MEMORY_REASON = 'Baton does not observe executor memory or context';
/** A dimension whose facts come from a chain that does not verify (the barrier records' reason too). */
export const EVIDENCE_CHAIN_UNVERIFIED = 'evidence_chain_unverified';
/** Why a handoff's authority is UNKNOWN when an `authority:*` event shares the takeover's instant and actor. */
export const AUTHORITY_UNDECIDED =
  'transaction_unidentified: an authority:* event shares the takeover’s instant and actor, and the evidence log records no transaction identity';

export interface TakeoverEventFacts {
  readonly seq: number;
  readonly idx: number;
  readonly hash: string;
  readonly at: number;
  readonly generation: number;
  readonly retiredGeneration: number | null;
  readonly delivered: { readonly reserved: readonly string[]; readonly unresolved: readonly string[] };
}

export interface HandoffFacts {
  readonly domain: string;
  readonly lineage: string;
  readonly takeover: TakeoverEventFacts;
  /**
   * `authority:*` events carrying the takeover's instant and actor (AOC-REQ-008: replacement never
   * replenishes): the only ones its transaction could have written. The log records no transaction
   * identity, so whether it wrote them is undecidable when there are any.
   */
  readonly authorityEventsAtTakeover: number;
  readonly lineageChainVerifies: boolean;
  /** Every occurrence chain of the lineage verifies (the open set and profile digests come from them). */
  readonly occurrenceChainsVerify: boolean;
  /** The domain chain verifies (where `domain_configured`, an authorized policy update, is read). */
  readonly domainChainVerifies: boolean;
  /** The lineage's reserved and entered occurrences at the takeover's seq, replayed from their chains. */
  readonly openAtSeq: readonly string[];
  /** Provider-profile digests of those open occurrences that were never registered. */
  readonly unregisteredProfileDigests: readonly string[];
  /** The hash of a `domain_configured` event since the previous generation, if any (an authorized update). */
  readonly reconfiguredBy: string | null;
}

export const producerOf = (domain: string): string => `urn:baton:${domain}`;
export const handoffRecordId = (domain: string, lineage: string, generation: number): string =>
  `urn:baton:${domain}:record:handoff:${lineage}:${generation}`;
const runtime = (domain: string, lineage: string, g: number): string =>
  `urn:baton:${domain}:lineage:${lineage}:generation:${g}`;

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  return x.size === new Set(b).size && b.every((i) => x.has(i));
}

/**
 * OBS-13 ¶26, OBS-27 ¶45: a dimension whose facts come from a chain that does not verify is
 * UNKNOWN, never MATCH (nor MISMATCH: the altered facts decide nothing). The takeover event itself
 * (delivered set, instant, actor) is read from the lineage chain; the open set and its profile
 * digests from the lineage's occurrence chains; reconfigurations from the domain chain.
 */
const unverified = (dimension: string, reference: string): Invariant => ({
  dimension,
  status: 'UNKNOWN',
  reference,
  reason: EVIDENCE_CHAIN_UNVERIFIED,
});

function invariants(f: HandoffFacts): Invariant[] {
  const ref = f.takeover.hash;
  const t = f.takeover;
  const delivered = [...t.delivered.reserved, ...t.delivered.unresolved];
  const stateOk = sameSet(delivered, f.openAtSeq);
  const lineageOk = f.lineageChainVerifies && t.generation === (t.retiredGeneration ?? 0) + 1;
  const policyOk = f.unregisteredProfileDigests.length === 0;
  const stateChains = f.lineageChainVerifies && f.occurrenceChainsVerify;
  const policyChains = stateChains && f.domainChainVerifies;
  return [
    stateChains
      ? {
          dimension: 'state',
          status: stateOk ? 'MATCH' : 'MISMATCH',
          reference: ref,
          reason: stateOk ? null : 'delivered occurrences differ from the lineage’s open set at the takeover',
        }
      : unverified('state', ref),
    { dimension: 'memory', status: 'UNKNOWN', reference: null, reason: MEMORY_REASON },
    policyChains
      ? {
          dimension: 'policy',
          status: policyOk ? 'MATCH' : 'MISMATCH',
          reference: f.reconfiguredBy ?? ref,
          reason: !policyOk
            ? `unregistered provider-profile digest: ${[...f.unregisteredProfileDigests].sort().join(', ')}`
            : f.reconfiguredBy !== null
              ? 'authorized_update'
              : null,
        }
      : unverified('policy', ref),
    !f.lineageChainVerifies
      ? unverified('authority', ref)
      : {
          dimension: 'authority',
          // B3.3, OBS-13: MATCH only when no candidate exists; a candidate is UNKNOWN, never a guess.
          status: f.authorityEventsAtTakeover === 0 ? 'MATCH' : 'UNKNOWN',
          reference: ref,
          reason: f.authorityEventsAtTakeover === 0 ? null : AUTHORITY_UNDECIDED,
        },
    {
      dimension: 'lineage',
      status: lineageOk ? 'MATCH' : 'MISMATCH',
      reference: ref,
      reason: lineageOk
        ? null
        : f.lineageChainVerifies
          ? 'generation did not advance by one'
          : 'the lineage chain does not verify',
    },
  ];
}

export function projectHandoff(f: HandoffFacts): ObservationRecord {
  const { domain, lineage, takeover: t } = f;
  const observedAt = formatRfc3339(t.at);
  return {
    version: OBSERVATION_VERSION,
    profile: OBSERVATION_PROFILE,
    producer: producerOf(domain),
    record_id: handoffRecordId(domain, lineage, t.generation),
    run_id: null,
    event_type: 'handoff',
    scope_id: `urn:baton:${domain}:lineage:${lineage}`,
    authority_epoch: t.generation,
    source_runtime: t.retiredGeneration === null ? null : runtime(domain, lineage, t.retiredGeneration),
    destination_runtime: runtime(domain, lineage, t.generation),
    observed_at: observedAt,
    order: { domain: `baton:${domain}:evidence`, sequence: String(t.seq), uncertainty_ms: 0 },
    invariants: invariants(f),
    evidence: [citeEvidenceEvent(`urn:baton:evidence:${domain}:lineage:${lineage}#${t.idx}`, t.hash)],
    outcome: { proposal: 'NOT_APPLICABLE', admission: 'ADMITTED', effect: 'NOT_APPLICABLE' },
    limitations: [WITNESS_LIMITATION, 'executor-local code and memory are outside Baton’s view'],
    analysis_revision: HANDOFF_ANALYSIS_REVISION,
    classification: 'OBSERVED_WITH_STATED_EVIDENCE',
    colocated_roles: ['producer', 'subject', 'observer', 'verifier'],
    independence_claimed: false,
    audience: producerOf(domain),
    issued_at: observedAt,
    expires_at: formatRfc3339(t.at + HANDOFF_VALIDITY_MS),
  };
}
