/**
 * What the occurrences service needs from persistence (DESIGN.md §1: a domain context never
 * imports src/store; src/store/occurrences-repository.ts implements this port in portable SQL).
 *
 * `lock*` methods read a row and hold it until the transaction ends (FOR UPDATE on PostgreSQL,
 * the single writer lock on SQLite). `update*` methods compare the record's previous version and
 * fail with `conflict` when it moved. Uniqueness the drafts require is enforced by the store's
 * unique indexes; an insert refused by one returns which binding was taken instead of throwing,
 * so the service can answer with the precise refusal.
 */
import type { Sha256Digest } from '../core/digest.js';
import type { JsonObject } from '../core/json.js';
import type { OpenCounts } from './machine/limits.js';
import type {
  AuthorityRecord,
  CredentialRecord,
  DomainRecord,
  EvidenceEvent,
  LineageRecord,
  LinkedIdentifier,
  OccurrenceRecord,
  Outcome,
  Phase,
  PlannedEvent,
} from './model.js';
import type { RegisteredProfile } from './profile-types.js';

export type OccurrenceInsert =
  | { readonly ok: true }
  | { readonly ok: false; readonly taken: 'creation_binding' | 'native_key' }
  | { readonly ok: false; readonly taken: 'linked_identifier'; readonly identifier: LinkedIdentifier };

export interface StateCount {
  readonly phase: Phase;
  readonly outcome: Outcome;
  readonly conflict: boolean;
  readonly count: number;
}

export interface OccurrenceFilter {
  readonly lineage?: string;
  readonly phases?: readonly Phase[];
  readonly limit?: number;
}

/** Where a page of occurrences starts: strictly after this (createdAt, id) in newest-first order. */
export interface OccurrencePosition {
  readonly createdAt: number;
  readonly id: string;
}

/**
 * One page of `GET /v1/occurrences` (docs/api.md): every filter is optional and each is served by
 * an index whose tail is (created_at, id), the page order, so a page costs its size, never the
 * table's (migration 005).
 */
export interface OccurrenceQuery {
  readonly phase?: Phase;
  readonly outcome?: Outcome;
  readonly lineage?: string;
  readonly profileId?: string;
  readonly creationKey?: string;
  /** createdAt >= this (Unix ms). */
  readonly createdFrom?: number;
  /** createdAt < this (Unix ms). */
  readonly createdBefore?: number;
  readonly after?: OccurrencePosition;
  readonly limit: number;
}

/** Reads: usable in a read-only snapshot as well as inside a write transaction. */
export interface OccurrencesReader {
  getDomain(): Promise<DomainRecord | undefined>;
  getProfile(id: string, version: string): Promise<RegisteredProfile | undefined>;
  /** Every registered profile version, ordered by (id, version); at most `limit`. */
  listProfiles(limit: number): Promise<RegisteredProfile[]>;
  getLineage(id: string): Promise<LineageRecord | undefined>;
  /** The lineage's credentials of generations after `afterGeneration`, in generation order; at most `limit`. */
  pageCredentials(lineage: string, afterGeneration: number, limit: number): Promise<CredentialRecord[]>;
  /** Every generation of the lineage whose credential a takeover retired, ascending. */
  retiredGenerations(lineage: string): Promise<number[]>;
  /** The executor credential with this secret digest (only digests are stored). */
  findCredential(secretDigest: Sha256Digest): Promise<CredentialRecord | undefined>;
  /**
   * Issue 16 §2: load a credential and an occurrence in one statement; the next `findCredential`
   * and `getOccurrence` of them are answered from it, each once (what an executor's view reads).
   */
  prefetchView?(secretDigest: Sha256Digest, occurrenceId: string): Promise<void>;
  getAuthority(id: string): Promise<AuthorityRecord | undefined>;
  /** Every authority budget, ordered by id; at most `limit`. */
  /** In id order; `after`: only ids after it (the keyset of a `GET /v1/authorities` cursor). */
  listAuthorities(limit: number, after?: string): Promise<AuthorityRecord[]>;
  getOccurrence(id: string): Promise<OccurrenceRecord | undefined>;
  listOccurrences(filter: OccurrenceFilter): Promise<OccurrenceRecord[]>;
  /** Newest first, ordered by (createdAt, id) descending; at most `query.limit` rows. */
  pageOccurrences(query: OccurrenceQuery): Promise<OccurrenceRecord[]>;
  countByState(): Promise<StateCount[]>;
  listEvents(subject: string): Promise<EvidenceEvent[]>;
  /**
   * The lineage events the handover index names for the occurrence (the takeovers that delivered
   * it, recorded by `recordHandovers`), oldest first; not filtered, not verified.
   */
  listHandovers(occurrenceId: string, lineage: string): Promise<EvidenceEvent[]>;
  /** The subject's events at chain positions after `after`, in chain order, each with its position; at most `limit`. */
  pageEvents(subject: string, after: number, limit: number): Promise<PositionedEvent[]>;
}

/** An event with its position in its subject's chain (1, 2, 3…). */
export interface PositionedEvent extends EvidenceEvent {
  readonly idx: number;
}

/**
 * The Mission gate's answer inside provider entry (Mission build spec A3.6). The store implements
 * the gate over the harness (the occurrences context knows no Mission record): it locks the mission
 * view and the work item AFTER the lineage and the occurrence, and has already written the item's
 * stop and its Harness Evidence when it answers `stop` — the entry then commits them with
 * `mission_checked` and refuses (C-A25).
 */
export interface MissionGateView {
  readonly decision: 'continue' | 'stop';
  readonly code?:
    | 'mission_not_active'
    | 'mission_status_unavailable'
    | 'mission_binding_missing'
    | 'work_item_not_dispatchable';
  /** The stop is `terminate`: release the reservation in the same transaction. */
  readonly release: boolean;
  /** The body of the occurrence's `mission_checked` event. */
  readonly checked: JsonObject;
  /** Its JCS text, where the check assembled it (the common `continue`, issue 11 §8). */
  readonly checkedText?: string;
}

/**
 * A harness work item of the lineage that is held — paused, suppressed or handed off — as the
 * takeover answer lists it (Mission build spec A6: "takeover answer adds `held: [WorkItem]`"): the
 * successor is told of it, and may not dispatch it until a check (or an operator) allows.
 */
export interface HeldWorkItem {
  readonly id: string;
  readonly kind: string;
  readonly state: 'paused' | 'suppressed' | 'handed_off';
  readonly actionClass: string;
  readonly binding: JsonObject | null;
  readonly version: number;
}

/** A page of held items: `more` when the lineage holds more than the page (listed by the harness API). */
export interface HeldWorkItems {
  readonly items: HeldWorkItem[];
  readonly more: boolean;
}

export interface OccurrencesRepository extends OccurrencesReader {
  /** A6: the lineage's held harness items, read in the takeover's transaction. */
  heldWorkItems(lineage: string): Promise<HeldWorkItems>;
  /** A3.6: undefined for an ungoverned occurrence (one created without a work item). */
  checkMissionGate(occurrenceId: string, actor: string): Promise<MissionGateView | undefined>;
  /** A3.6 `create checks too`: link a governed occurrence to its running item; refuses unless active. */
  linkWorkItem(occurrenceId: string, workItemId: string, lineage: string): Promise<void>;

  /**
   * Optional, for speed only (issue 16 §2): load and lock at once, in the order `enter` takes them,
   * what provider entry reads next — domain, credential, its lineage, the occurrence with its
   * request, its authority, the open counts — where the engine can in one round trip (PostgreSQL,
   * migration 012). The reads that follow are answered from it, each once; the decision is the same.
   */
  prefetchEntry?(credentialDigest: Sha256Digest, occurrenceId: string): Promise<void>;
  /** The same for an executor-reported observation: its credential, then the occurrence (locked). */
  prefetchObserve?(credentialDigest: Sha256Digest, occurrenceId: string): Promise<void>;
  /** The same for a plain create + reserve + bind: domain, credential, lineage, binding, authority, counts. */
  prefetchCreate?(credentialDigest: Sha256Digest, creationKey: string, authorityId: string): Promise<void>;

  lockDomain(): Promise<DomainRecord | undefined>;
  insertDomain(domain: DomainRecord): Promise<void>;
  updateDomain(domain: DomainRecord, previousVersion: number): Promise<void>;

  /** Returns false when (id, version) is already registered. */
  insertProfile(profile: RegisteredProfile): Promise<boolean>;

  lockLineage(id: string): Promise<LineageRecord | undefined>;
  insertLineage(lineage: LineageRecord): Promise<void>;
  updateLineage(lineage: LineageRecord, previousVersion: number): Promise<void>;

  /** Returns false when a credential for (lineage, generation) already exists. */
  insertCredential(credential: CredentialRecord): Promise<boolean>;
  retireCredentials(lineage: string, belowGeneration: number, at: number): Promise<void>;
  /** AOC-REQ-005: the occurrences the takeover to `generation` delivered (the handover index). */
  recordHandovers(lineage: string, generation: number, occurrenceIds: readonly string[]): Promise<void>;

  lockAuthority(id: string): Promise<AuthorityRecord | undefined>;
  /** Returns false when the id is taken. */
  insertAuthority(authority: AuthorityRecord): Promise<boolean>;
  updateAuthority(authority: AuthorityRecord, previousVersion: number): Promise<void>;

  lockOccurrence(id: string): Promise<OccurrenceRecord | undefined>;
  /**
   * The id of the occurrence reissued from `sourceId`, if any. Read after `lockOccurrence(sourceId)`
   * in the same transaction, so two reissues of one tombstone meet here (AOC-REQ-008).
   */
  findReissueOf(sourceId: string): Promise<string | undefined>;
  findByCreationBinding(scope: string, key: string): Promise<OccurrenceRecord | undefined>;
  /** `requestJcs`: the request's JCS text when the caller has it already (never serialized twice). */
  insertOccurrence(
    occurrence: OccurrenceRecord,
    request: JsonObject,
    requestJcs?: string,
  ): Promise<OccurrenceInsert>;
  /** Writes only the mutable state; the binding columns are never part of an update (AOC-REQ-003). */
  updateOccurrence(occurrence: OccurrenceRecord, previousVersion: number): Promise<void>;
  /** Returns false when an exclusive identifier already names another occurrence. */
  addLinkedId(
    occurrence: Pick<OccurrenceRecord, 'id' | 'provider'>,
    identifier: LinkedIdentifier,
  ): Promise<boolean>;
  getRequest(occurrenceId: string): Promise<JsonObject | undefined>;
  /**
   * Open counts for the limits (AOC-REQ-006). The lineage's are exact while the lineage is locked.
   * The domain's may lag concurrent commands on other lineages, so `insertOccurrence` (pending)
   * and `updateOccurrence` (reserved → entered) enforce the domain-wide limit again where they
   * write, refusing with the same `limit_*_exceeded` error the machine gives.
   */
  countOpen(lineage: string): Promise<OpenCounts>;

  /** Append the events in order, each with this time and actor (consecutive ones of a subject together). */
  appendEvents(events: readonly PlannedEvent[], at: number, actor: string): Promise<void>;

  /** The occurrence a provider's native key names under this profile, account and environment, locked. */
  lockByNativeKey(
    profileId: string,
    account: string,
    environment: string,
    nativeKey: string,
  ): Promise<OccurrenceRecord | undefined>;
  /**
   * The ONE occurrence whose bound provider reference this is under this profile, account and
   * environment, locked; undefined when none or several are (migration 034's index).
   */
  lockByReference(
    profileId: string,
    account: string,
    environment: string,
    reference: string,
  ): Promise<OccurrenceRecord | undefined>;
  /** Remember a provider's webhook event id for this profile; false when it was already remembered. */
  rememberProviderEvent(
    profileId: string,
    eventId: string,
    occurrenceId: string | null,
    at: number,
  ): Promise<boolean>;
  /**
   * AOC-CASE-009, bounded: remember one refused (unauthenticated or stale) delivery's fingerprint
   * for this occurrence, at most `cap` distinct ones. `seen`: this fingerprint was kept already;
   * `fresh`: kept now; `cap_reached`: the cap was reached and this is the first delivery past it
   * (its mark is remembered: answered once); `over_cap`: past the cap and already marked.
   */
  rememberRefusedDelivery(
    occurrenceId: string,
    fingerprint: string,
    at: number,
    cap: number,
  ): Promise<RefusedDeliveryMemory>;
  /**
   * The same memory for reports that cannot move the state (service/ack-bound.ts), counted apart
   * from refused deliveries and per `kind`: unauthenticated acknowledgements before entry, after
   * it (so the cap of one never costs the first acknowledgement of the entry), and unanswered
   * readings a caller asked for (`reconcile`).
   */
  rememberReport(
    occurrenceId: string,
    kind: ReportKind,
    fingerprint: string,
    at: number,
    cap: number,
  ): Promise<RefusedDeliveryMemory>;
}

/** Which bounded reports `rememberReport` counts (each kind has its own cap). */
export type ReportKind = 'ack:before_entry' | 'ack:entered' | 'reconcile';

/** What `rememberRefusedDelivery` and `rememberReport` found. */
export type RefusedDeliveryMemory = 'fresh' | 'seen' | 'cap_reached' | 'over_cap';

/** One command = one transaction: commit when `fn` resolves, roll everything back when it throws. */
export interface OccurrencesUnitOfWork {
  run<T>(fn: (repo: OccurrencesRepository) => Promise<T>): Promise<T>;
  read<T>(fn: (repo: OccurrencesReader) => Promise<T>): Promise<T>;
}
