/**
 * Harness Evidence (seed §11.1, HAR-26; build spec A2.6): the object exactly as the draft defines
 * it, signed in the `jws-compact` evidence envelope with `typ baton-harness-evidence+json` and the
 * domain key (C-A5). Reasons are the fixed list of C-A6.
 */
import type { KeyObject } from 'node:crypto';
import {
  signEvidenceEnvelope,
  verifyEvidenceEnvelope,
  type EvidenceEnvelope,
} from '../core/evidence-envelope.js';
import type { VerificationKey } from '../core/jose.js';
import { formatRfc3339 } from '../core/time.js';
import { reportedState, type Behaviour, type MissionRef } from './model.js';

export const HARNESS_EVIDENCE_TYP = 'baton-harness-evidence+json';

export const EVENT_TYPES = [
  'resume_allowed',
  'resume_suppressed',
  'queue_suppressed',
  'cache_disabled',
  'subagent_stopped',
  'subagent_continued',
  'mission_state_stale',
] as const;
export type HarnessEventType = (typeof EVENT_TYPES)[number];

export const REASONS = [
  'mission_not_active',
  'missing_mission_binding',
  'mission_state_unknown',
  'mission_state_stale',
  'queue_item_expired',
  'authority_hash_mismatch',
  'successor_binding_required',
  'parent_mission_not_active',
  'independent_mission_active',
  'operator_stop',
  'orchestrator_hold',
  'session_tainted',
  'mission_active',
] as const;
export type HarnessReason = (typeof REASONS)[number];

/** A2.6, member for member; optional members are absent (never null) when not known. */
// A type alias, not an interface: the envelope signer takes a plain record (index signature).
export type HarnessEvidence = {
  readonly event_id: string;
  readonly event_type: HarnessEventType;
  readonly mission: MissionRef;
  readonly session_id?: string;
  readonly work_item?: string;
  readonly actor?: string;
  readonly state: string;
  readonly prior_harness_state?: string;
  readonly resulting_harness_state?: string;
  readonly state_source: string;
  readonly freshness?: { readonly checked_at: string; readonly expires_at: string };
  readonly decision: Behaviour;
  readonly reason: HarnessReason;
  readonly occurred_at: string;
  /**
   * Baton's extension member (docs/harness.md "Harness Evidence"): on a record about dependent
   * child work decided because of a parent Mission (reason `parent_mission_not_active`, or
   * `independent_mission_active`), that parent Mission and its observed state. `mission` and
   * `state` stay the record's own Mission (the child's binding) as observed (seed §11, §9.1).
   */
  readonly parent_mission?: ParentMissionCause;
};

/** The parent Mission a dependent child's record names as its cause. */
export interface ParentMissionCause {
  readonly id: string;
  readonly origin: string;
  readonly state: string;
}

export type SignedHarnessEvidence = HarnessEvidence & { readonly evidence_envelope: EvidenceEnvelope };

export interface EvidenceDraft {
  readonly eventType: HarnessEventType;
  readonly mission: MissionRef;
  readonly sessionId?: string | null;
  readonly workItem?: string | null;
  readonly actor?: string | null;
  readonly state: string;
  readonly prior?: string | null;
  readonly resulting?: string | null;
  readonly stateSource: string;
  readonly checkedAt?: number | null;
  readonly expiresAt?: number | null;
  readonly decision: Behaviour;
  readonly reason: HarnessReason;
  /** The parent Mission that caused a dependent child's decision (also its chain's record). */
  readonly cause?: ParentMissionCause;
}

const present = (v: string | null | undefined): v is string => v !== null && v !== undefined;

/** Build the object in the draft's member order (JCS sorts anyway; order helps readers). */
export function harnessEvidence(d: EvidenceDraft, eventId: string, at: number): HarnessEvidence {
  const mission: MissionRef = {
    id: d.mission.id,
    origin: d.mission.origin,
    ...(d.mission.authority_hash !== undefined && { authority_hash: d.mission.authority_hash }),
  };
  const freshness =
    d.checkedAt !== null && d.checkedAt !== undefined && d.expiresAt !== null && d.expiresAt !== undefined
      ? { checked_at: formatRfc3339(d.checkedAt), expires_at: formatRfc3339(d.expiresAt) }
      : undefined;
  return {
    event_id: eventId,
    event_type: d.eventType,
    mission,
    ...(present(d.sessionId) && { session_id: d.sessionId }),
    ...(present(d.workItem) && { work_item: d.workItem }),
    ...(present(d.actor) && { actor: d.actor }),
    state: reportedState(d.state),
    ...(present(d.prior) && { prior_harness_state: d.prior }),
    ...(present(d.resulting) && { resulting_harness_state: d.resulting }),
    state_source: d.stateSource,
    ...(freshness !== undefined && { freshness }),
    decision: d.decision,
    reason: d.reason,
    occurred_at: formatRfc3339(at),
    ...(d.cause !== undefined && {
      parent_mission: { id: d.cause.id, origin: d.cause.origin, state: reportedState(d.cause.state) },
    }),
  };
}

export function signHarnessEvidence(e: HarnessEvidence, key: KeyObject): Promise<SignedHarnessEvidence> {
  return signEvidenceEnvelope(e, key, { typ: HARNESS_EVIDENCE_TYP });
}

export async function verifyHarnessEvidence(object: unknown, key: VerificationKey): Promise<HarnessEvidence> {
  const { content } = await verifyEvidenceEnvelope(object, key, { typ: HARNESS_EVIDENCE_TYP });
  return content as unknown as HarnessEvidence;
}
