/**
 * The AOC records and their states (DESIGN.md §3). Local labels are ours; docs/occurrences.md maps
 * them to the AEB/BCR vocabulary. Times are epoch milliseconds (wall clock of the domain).
 */
import type { Sha256Digest } from '../core/digest.js';
import type { JsonObject, JsonValue } from '../core/json.js';

// --- states ------------------------------------------------------------------------------------

/** reserved → entered → resolved, or reserved → released (a terminal tombstone). */
export const PHASES = ['reserved', 'entered', 'resolved', 'released'] as const;
export type Phase = (typeof PHASES)[number];

/** Profile-level interpretations (AOC-REQ-011); `unknown` until an authoritative observation says more. */
export const OUTCOMES = ['unknown', 'accepted', 'success', 'not_accepted', 'final_failure'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What the provider says a native status means: the profile's map targets (AOC-REQ-009). */
export const INTERPRETATIONS = ['accepted', 'not_accepted', 'final_failure', 'success'] as const;
export type Interpretation = (typeof INTERPRETATIONS)[number];

export const EFFECTS = ['unresolved', 'occurred', 'none_confirmed'] as const;
export type Effect = (typeof EFFECTS)[number];

/** AOC-REQ-001 / Scope: the six kinds of path that can bypass the coordination domain. */
export const BYPASS_PATH_KINDS = [
  'direct',
  'administrator',
  'break-glass',
  'queued',
  'alternate-protocol',
  'system-of-record',
] as const;
export type BypassPathKind = (typeof BYPASS_PATH_KINDS)[number];

/** Whether a bypass path of that kind exists. `unknown` is an honest answer, never a pass. */
export const BYPASS_PATH_STATUSES = ['present', 'absent', 'unknown'] as const;
export type BypassPathStatus = (typeof BYPASS_PATH_STATUSES)[number];

/**
 * Typed linked identifiers (AOC-REQ-002): stored with their type and never equated. Callers may
 * link the first four; `provider_key` and `provider_reference` are written by the domain itself.
 */
export const LINKED_ID_TYPES = [
  'aadp_request_id',
  'aadp_permit_id',
  'succession_receipt_id',
  'bcr_operation_id',
  'provider_key',
  'provider_reference',
] as const;
export type LinkedIdType = (typeof LINKED_ID_TYPES)[number];
export const CALLER_LINKED_ID_TYPES = [
  'aadp_request_id',
  'aadp_permit_id',
  'succession_receipt_id',
  'bcr_operation_id',
] as const satisfies readonly LinkedIdType[];

/**
 * Types whose value may name at most one occurrence: an AADP request/permit and a BCR operation id
 * are single-use under their native rules, so a second occurrence claiming one is a relabel
 * (AOC-CASE-006). A Succession Receipt carries many commitments, so it is not exclusive.
 */
export const EXCLUSIVE_LINKED_ID_TYPES: ReadonlySet<LinkedIdType> = new Set([
  'aadp_request_id',
  'aadp_permit_id',
  'bcr_operation_id',
  'provider_key',
  'provider_reference',
]);

/**
 * The value a unique index holds for an exclusive identifier, or null for a non-exclusive one.
 * Provider keys and references are unique per provider namespace (profile, account, environment),
 * never across providers whose values merely look alike (AOC-REQ-002: no equating).
 */
export function exclusiveKey(
  provider: Pick<ProviderBinding, 'profileId' | 'account' | 'environment'>,
  l: LinkedIdentifier,
): string | null {
  if (!EXCLUSIVE_LINKED_ID_TYPES.has(l.type)) return null;
  if (l.type === 'provider_key' || l.type === 'provider_reference') {
    return JSON.stringify([provider.profileId, provider.account, provider.environment, l.value]);
  }
  return l.value;
}

export interface LinkedIdentifier {
  readonly type: LinkedIdType;
  readonly value: string;
}

export const REMEDY_KINDS = ['compensation', 'refund', 'replacement'] as const;
export type RemedyKind = (typeof REMEDY_KINDS)[number];

/** Why an observation could not move the state (AOC-REQ-009, AOC-CASE-008/009). */
export const MISSING_KNOWLEDGE_REASONS = [
  'unavailable',
  'unauthenticated',
  'binding_mismatch',
  'no_attempt',
  'stale',
  'not_found',
  'not_found_beyond_retention',
  'incomplete_listing',
  'unmapped_status',
  'conflict',
] as const;
export type MissingKnowledgeReason = (typeof MISSING_KNOWLEDGE_REASONS)[number];

// --- records -----------------------------------------------------------------------------------

export interface DomainLimits {
  /** Reserved (pending) occurrences one lineage may hold (AOC-REQ-006, AOC-CASE-012). */
  readonly maxPendingPerLineage: number;
  /** Entered, unresolved occurrences one lineage may hold. */
  readonly maxInFlightPerLineage: number;
  readonly maxPendingPerDomain: number;
  readonly maxInFlightPerDomain: number;
  /** The pinned maximum pre-entry reservation interval (BCR §10.1): entry deadline = creation + this. */
  readonly entryWindowSeconds: number;
}

export interface BypassPath {
  readonly kind: BypassPathKind;
  readonly status: BypassPathStatus;
  readonly description: string;
}

export interface DomainRecord {
  readonly id: string;
  readonly kid: string;
  /** The raw 32-byte Ed25519 public key, base64url. The private key never enters the database. */
  readonly publicKey: string;
  readonly limits: DomainLimits;
  readonly bypassPaths: readonly BypassPath[];
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly version: number;
}

export interface LineageRecord {
  readonly id: string;
  /** The current executor generation; integers only grow (AOC-REQ-006). */
  readonly generation: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly version: number;
}

/** An executor credential, bound to (lineage, generation). Only the digest of its secret is stored. */
export interface CredentialRecord {
  readonly secretDigest: Sha256Digest;
  readonly lineage: string;
  readonly generation: number;
  readonly issuedAt: number;
  readonly retiredAt: number | null;
}

export interface AuthorityRecord {
  readonly id: string;
  readonly unit: string;
  readonly total: number;
  readonly reserved: number;
  readonly consumed: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly version: number;
}

export interface CreationBinding {
  /** The authenticated creation scope: the caller's lineage (AOC-REQ-002). */
  readonly scope: string;
  readonly key: string;
  /** Digest of the whole creation request; the same key with another digest is a conflict. */
  readonly requestDigest: Sha256Digest;
}

/** The immutable provider binding (AOC-REQ-003). Only `providerReference` is written, once. */
export interface ProviderBinding {
  readonly profileId: string;
  readonly profileVersion: string;
  readonly profileDigest: Sha256Digest;
  readonly account: string;
  readonly environment: string;
  readonly requestDigest: Sha256Digest;
  readonly nativeKeyRule: string;
  readonly nativeKey: string | null;
  readonly providerReference: string | null;
}

export interface OccurrenceRecord {
  readonly id: string;
  readonly lineage: string;
  readonly creationBinding: CreationBinding;
  readonly linkedIds: readonly LinkedIdentifier[];
  readonly provider: ProviderBinding;
  readonly capturedGeneration: number;
  readonly entryDeadline: number;
  readonly authority: { readonly id: string; readonly amount: number; readonly unit: string };
  readonly phase: Phase;
  readonly outcome: Outcome;
  readonly effect: Effect;
  /** Set when authenticated observations disagree (AOC-CASE-009); never cleared by an observation. */
  readonly conflict: boolean;
  readonly enteredAt: number | null;
  readonly enteredGeneration: number | null;
  readonly releasedAt: number | null;
  readonly resolvedAt: number | null;
  readonly remedyOf: string | null;
  readonly remedyKind: RemedyKind | null;
  readonly reissueOf: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly version: number;
}

/** The exact request the occurrence is bound to; stored apart from the record (privacy: see docs). */
export interface StoredRequest {
  readonly occurrenceId: string;
  readonly request: JsonObject;
}

/** An occurrence is unresolved while it is entered and its effect is open, or while evidence conflicts. */
export function isUnresolved(o: Pick<OccurrenceRecord, 'phase' | 'effect' | 'conflict'>): boolean {
  return o.phase === 'entered' || o.conflict;
}

/** An evidence event as the domain sees it (the store's hash-chained log, DESIGN.md §2). */
export interface EvidenceEvent {
  readonly seq: number;
  readonly subject: string;
  readonly type: string;
  readonly body: JsonValue;
  readonly at: number;
  readonly actor: string;
  readonly prev: string | null;
  readonly hash: string;
}

/** An event the machine decides to append; the service adds time and actor. */
export interface PlannedEvent {
  readonly subject: string;
  readonly type: string;
  readonly body: JsonObject;
  /** `body`'s JCS text, where its producer assembled it (the store's `EvidenceInput.text`). */
  readonly text?: string;
}
