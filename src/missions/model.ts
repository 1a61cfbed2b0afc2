/**
 * The Mission-aware harness records and their states (build spec A2.7; seed §4, §7.1, §9, §10).
 * Times in records are epoch milliseconds (Baton's clock); Harness Evidence objects carry RFC 3339.
 * Draft objects keep their wire names where they leave Baton (`mission_binding`, evidence).
 */

// --- Mission states ------------------------------------------------------------------------------

/** States the companions name (A2.1). Any other string, unknown included, is non-active (MCO-01). */
export const KNOWN_STATES = [
  'active',
  'revoked',
  'expired',
  'suspended',
  'completed',
  'superseded',
  'cascaded',
] as const;
export type KnownState = (typeof KNOWN_STATES)[number];

/** Terminal states are sticky in a view (A3.3): no source brings a Mission back from them. */
export const TERMINAL_STATES: readonly string[] = [
  'revoked',
  'expired',
  'completed',
  'superseded',
  'cascaded',
];

/** MCO-01: only the exact string `active` permits anything. Never widen this test. */
export function isActive(s: string | null | undefined): boolean {
  return s === 'active';
}

/**
 * The state as Harness Evidence and `mission_checked` report it: A2.6 `state` is REQUIRED "(or
 * `unknown`)", so nothing known and an empty string (a value no companion defines, A7#9) read
 * `unknown`; any other string is reported as received. Only reporting: the check never widens.
 */
export function reportedState(s: string | null | undefined): string {
  return s === null || s === undefined || s === '' ? 'unknown' : s;
}

export function isTerminal(s: string | null | undefined): boolean {
  return s !== null && s !== undefined && TERMINAL_STATES.includes(s);
}

// --- action classes and behaviours ---------------------------------------------------------------

export const ACTION_CLASSES = [
  'non_consequential',
  'consequential_read',
  'consequential_write',
  'irreversible',
  'external_commitment',
  'privileged_administration',
] as const;
export type ActionClass = (typeof ACTION_CLASSES)[number];

/** MRT-01 / HAR-25: the classes that need an active freshness source, never token lifetime. */
export const HIGH_CONSEQUENCE: readonly ActionClass[] = [
  'irreversible',
  'external_commitment',
  'privileged_administration',
];

/** Egress classes a tainted session may not run (HAR-29; docs/harness.md "Session taint"). */
export const TAINT_GUARDED: readonly ActionClass[] = [
  'irreversible',
  'external_commitment',
  'privileged_administration',
];

export function isActionClass(v: unknown): v is ActionClass {
  return typeof v === 'string' && (ACTION_CLASSES as readonly string[]).includes(v);
}

/** Seed §10: what the harness does; `continue` only ever for `active`. */
export const BEHAVIOURS = ['continue', 'suppress', 'pause', 'terminate', 'handoff'] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];
export type StopBehaviour = Exclude<Behaviour, 'continue'>;

/** Matrix rows (A2.8 + A3.10): each named non-active state, plus unknown, stale and `other`. */
export const MATRIX_ROWS = [
  'revoked',
  'expired',
  'completed',
  'cascaded',
  'suspended',
  'superseded',
  'unknown',
  'stale',
  'other',
] as const;
export type MatrixRow = (typeof MATRIX_ROWS)[number];

/** The row a non-active observed state falls in: its own, or `other` for an unrecognised one. */
export function rowOf(state: string): MatrixRow {
  return (MATRIX_ROWS as readonly string[]).includes(state) && state !== 'unknown' && state !== 'stale'
    ? (state as MatrixRow)
    : 'other';
}

// --- work items ---------------------------------------------------------------------------------

export const ITEM_KINDS = ['task_node', 'queue_item', 'background_job', 'subagent_handle'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

/** A2.7 item machine; `done` and `terminated` are final. */
export const ITEM_STATES = [
  'queued',
  'running',
  'paused',
  'suppressed',
  'handed_off',
  'terminated',
  'done',
] as const;
export type ItemState = (typeof ITEM_STATES)[number];

export const FINAL_ITEM_STATES: readonly ItemState[] = ['terminated', 'done'];
/** States a stop applies to (A3.7 targets: queued, paused, running). */
export const LIVE_ITEM_STATES: readonly ItemState[] = ['queued', 'running', 'paused'];

export const STATE_SOURCES = ['status', 'signal', 'runtime_decision', 'harness'] as const;

/** HAR-02 binding. Callers set only the first five; the `status_*`/`state` members are Baton's. */
export interface MissionBinding {
  readonly mission_id: string;
  readonly mission_origin: string;
  readonly authority_hash?: string;
  readonly stop_policy: string;
  readonly enforcement_scope?: string;
  readonly status_checked_at?: string;
  readonly status_expires_at?: string;
  readonly state?: string;
  readonly state_source?: string;
}

export interface MissionRef {
  readonly id: string;
  readonly origin: string;
  readonly authority_hash?: string;
}

/** HAR-20 / A2.7: how a sub-agent handle is governed. */
export interface SubagentHandle {
  readonly actor: { readonly client_id: string; readonly sub_profile?: string };
  readonly parent_mission: MissionRef;
  readonly governed_by: {
    readonly kind: 'parent_mission' | 'delegation' | 'child_mission' | 'independent_mission';
    readonly mission?: MissionRef & { readonly parent?: { readonly id: string; readonly origin: string } };
    readonly delegation_id?: string;
  };
}

export interface WorkItemRecord {
  readonly id: string;
  readonly kind: ItemKind;
  readonly sessionId: string | null;
  readonly lineage: string | null;
  readonly parentId: string | null;
  /** null only for legacy rows: such an item never resumes (HAR-07, `missing_mission_binding`). */
  readonly binding: MissionBinding | null;
  readonly actionClass: ActionClass;
  readonly notBefore: number | null;
  readonly expiresAt: number | null;
  readonly retryOf: string | null;
  /** C-A28: the occurrence creationKey, so a retry resolves to the original occurrence. */
  readonly idempotencyKey: string | null;
  readonly state: ItemState;
  /** Orchestrator cancel/hold for review (HAR-08): never resumed while set. */
  readonly hold: boolean;
  readonly handle: SubagentHandle | null;
  readonly occurrenceId: string | null;
  readonly claimedGeneration: number | null;
  /** The digest of the stop matrix named by `binding.stop_policy`, pinned at creation (A3.10). */
  readonly matrixDigest: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** HAR-28: every transition is a CAS on this. */
  readonly version: number;
}

export interface SessionRecord {
  readonly id: string;
  readonly lineage: string | null;
  readonly binding: MissionBinding;
  readonly tainted: boolean;
  readonly createdAt: number;
  readonly version: number;
}

/** One row per (origin, mission_id) (A3.3, C-A12). */
export interface MissionViewRecord {
  readonly origin: string;
  readonly missionId: string;
  /** As received; null = nothing authenticated yet (unknown). */
  readonly state: string | null;
  readonly stateSource: 'status' | 'signal' | null;
  readonly authorityHash: string | null;
  /** The last applied SET `version` (0 = none). */
  readonly signalVersion: number;
  readonly lastSignalJti: string | null;
  /** `committed_at` of the last applied non-active SET (A3.3: a Status may only lift past it). */
  readonly nonActiveCommittedAt: number | null;
  /** `iat` of the last applied Status (ms). */
  readonly statusIssuedAt: number | null;
  /** When Baton last verified a source for this view. */
  readonly checkedAt: number | null;
  /** Reliance bound before the action-class bound (A3.2 step 8, A3.5). */
  readonly freshUntil: number | null;
  readonly missionExpiry: number | null;
  readonly updatedAt: number;
  readonly version: number;
}

export function missionSubject(origin: string, id: string): string {
  return `mission:${origin}#${id}`;
}
export const workSubject = (id: string): string => `work:${id}`;
export const sessionSubject = (id: string): string => `session:${id}`;
