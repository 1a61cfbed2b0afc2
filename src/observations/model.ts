/**
 * Continuity observation records (continuity-observation-profile.txt; build spec
 * research/missions-and-observations.md Part B). The Baton binding is
 * `urn:baton:continuity-observation:1` (decision C-B2); `null` always means unknown, never
 * false, zero or a match (¶13).
 */
export const OBSERVATION_PROFILE = 'urn:baton:continuity-observation:1';
export const OBSERVATION_MEDIA_TYPE = 'application/baton-continuity-observation+json';
/** The JWS `typ` of a signed record (B2 "Signed form"). */
export const OBSERVATION_JWS_TYP = 'baton-continuity-observation+json';
export const OBSERVATION_VERSION = '1';
/**
 * The longest producer id, in UTF-16 code units as JavaScript counts them: the one limit for a
 * record's `producer` (shape.ts), a pin's producer (producer-pin.ts, read alike for the HTTP API
 * and the config file) and the pin routes' schema, so whatever a record may name can be pinned and
 * every pinnable producer can name a record — a signed record's producer must be pinned (OBS-12
 * ¶25). The same as `record_id`'s.
 */
export const MAX_PRODUCER_ID = 512;
/** The longest `record_id` (B2: 1–512 characters). */
export const MAX_RECORD_ID = 512;

export const DIMENSIONS = ['state', 'memory', 'policy', 'authority', 'lineage'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** OBS-13: the coded statuses; `NOT_APPLICABLE` and `UNKNOWN` carry a reason (C-B6). */
export const STATUSES = ['MATCH', 'MISMATCH', 'UNKNOWN', 'NOT_APPLICABLE'] as const;
export type Status = (typeof STATUSES)[number];

/** OBS-05: kinds of evidence, not a scale. */
export const EVIDENCE_METHODS = [
  'direct_capture',
  'operator_transcription',
  'signature_verification',
  'runtime_attestation',
  'independent_reproduction',
] as const;
export type EvidenceMethod = (typeof EVIDENCE_METHODS)[number];

/** OBS-06: what was run, simulated or attested. */
export const VERIFICATION_CLASSES = [
  'NOT_RUN',
  'SIMULATED',
  'MANUAL_UNATTESTED',
  'OBSERVED_WITH_STATED_EVIDENCE',
] as const;
export type VerificationClass = (typeof VERIFICATION_CLASSES)[number];

/** OBS-10: the byte representation a digest covers; equality in one is never claimed for another. */
export const REPRESENTATIONS = ['raw', 'redacted', 'normalized_text', 'jcs'] as const;
export type Representation = (typeof REPRESENTATIONS)[number];

export const EVENT_TYPES = [
  'handoff',
  'model_change',
  'prompt_change',
  'memory_change',
  'policy_change',
  'tool_change',
  'runtime_change',
  'action',
  'revocation_barrier',
  'correction',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** C-B4: a digest that says what it digests. */
export interface ByteDigest {
  readonly algorithm: 'sha-256';
  readonly representation: Representation;
  readonly artifact: string;
  readonly value: string;
}

export interface Invariant {
  readonly dimension: string;
  readonly status: Status;
  readonly reference: string | null;
  readonly reason: string | null;
}

export interface EvidenceItem {
  readonly locator: string;
  readonly method: EvidenceMethod;
  readonly verification: VerificationClass;
  readonly byte_digest: ByteDigest | null;
}

/** OBS-19 / C-B5: the six stages; the example's three are required. */
export interface Outcome {
  readonly proposal: string | null;
  readonly admission: string | null;
  readonly effect: string | null;
  readonly attempt?: string | null;
  readonly decision?: string | null;
  readonly commitment?: string | null;
  readonly settlement?: string | null;
  readonly operation_ref?: string | null;
  readonly decision_ref?: string | null;
}

export interface Order {
  readonly domain: string;
  readonly sequence: string | null;
  readonly uncertainty_ms: number | null;
}

export interface ObservationRecord {
  readonly version: '1';
  readonly profile?: string;
  readonly producer?: string;
  readonly record_id: string;
  readonly run_id: string | null;
  readonly event_type: string;
  readonly scope_id: string;
  readonly authority_epoch: number | string | null;
  readonly source_runtime: string | null;
  readonly destination_runtime: string | null;
  readonly observed_at: string;
  readonly order: Order;
  readonly invariants: readonly Invariant[];
  readonly evidence: readonly EvidenceItem[];
  readonly outcome: Outcome;
  readonly limitations: readonly string[];
  readonly supersedes?: string | null;
  readonly analysis_revision?: string;
  readonly classification?: VerificationClass;
  readonly lineage?: {
    readonly parents: readonly string[];
    readonly actions: readonly string[];
    readonly coverage: string | null;
  };
  readonly references?: readonly {
    readonly type: string;
    readonly digest: string;
    readonly locator: string;
  }[];
  readonly colocated_roles?: readonly string[];
  readonly independence_claimed?: boolean;
  readonly audience?: string;
  readonly issued_at?: string;
  readonly expires_at?: string;
  readonly extensions?: Readonly<Record<string, unknown>>;
  readonly crit?: readonly string[];
  readonly evidence_envelope?: { readonly format: 'jws-compact'; readonly value: string };
}

/** What the reader found besides the record itself (never silently dropped). */
export interface ReadReport {
  readonly record: ObservationRecord;
  /** Non-critical extensions kept but not interpreted (C-B3). */
  readonly uninterpreted: readonly string[];
  /** Evidence locators outside the approved prefixes: never fetched, flagged (OBS-12). */
  readonly unapprovedLocators: readonly string[];
}
