/**
 * What the harness service needs from persistence and from its neighbours (DESIGN.md §1: a domain
 * context never imports src/store; src/store/missions-repository.ts implements this in portable
 * SQL). `lock*` reads hold the row until the transaction ends; `update*` compare the previous
 * version and throw `work_item_conflict` when it moved (HAR-28: one winner per version).
 */
import type { JsonObject, JsonValue } from '../core/json.js';
import type { EntryFacts } from './entry-check.js';
import type { PinnedMatrix } from './matrix.js';
import type { ActionClass, MissionViewRecord, SessionRecord, WorkItemRecord } from './model.js';
import type { VerifiedMissionStatus } from './verified.js';

export interface PlannedEvent {
  readonly subject: string;
  readonly type: string;
  readonly body: JsonValue;
}

export interface StoredEvent extends PlannedEvent {
  readonly seq: number;
  readonly at: number;
  readonly actor: string;
  readonly hash: string;
}

export interface ItemFilter {
  readonly mission?: { readonly origin: string; readonly id: string };
  readonly states?: readonly string[];
  /** One lineage's items (the takeover answer's `held`, A6). */
  readonly lineage?: string;
  readonly limit?: number;
  /** Keyset: only items listed after this one (created_at, then id: the list's order). */
  readonly after?: { readonly createdAt: number; readonly id: string };
}

/** A governed occurrence's link to its work item (A3.6). */
export interface OccurrenceGate {
  readonly occurrenceId: string;
  readonly workItemId: string;
  readonly missionOrigin: string;
  readonly missionId: string;
  readonly actionClass: ActionClass;
}

export type SetSeen = 'new' | 'same' | 'different';

/** What provider entry reads of a governed occurrence (A3.6): view and item locked, in that order. */
export interface EntryGateRead {
  readonly gate: OccurrenceGate;
  readonly view: MissionViewRecord | undefined;
  readonly item: WorkItemRecord | undefined;
}

export interface MissionsReader {
  getView(origin: string, missionId: string): Promise<MissionViewRecord | undefined>;
  getItem(id: string): Promise<WorkItemRecord | undefined>;
  listItems(filter: ItemFilter): Promise<WorkItemRecord[]>;
  getSession(id: string): Promise<SessionRecord | undefined>;
  getMatrix(ref: string): Promise<PinnedMatrix | undefined>;
  listEvents(subject: string): Promise<StoredEvent[]>;
  listCacheFlags(origin: string, missionId: string): Promise<{ reason: string; at: number }[]>;
}

export interface MissionsRepository extends MissionsReader {
  lockView(origin: string, missionId: string): Promise<MissionViewRecord | undefined>;
  /** Insert (version 1) or update (CAS on `previousVersion`). */
  saveView(view: MissionViewRecord, previousVersion: number): Promise<void>;
  /**
   * RFC 8935 replay table (C-A18): first sight, identical redelivery, or other bytes. `expiresAtMs`
   * is the SET's `exp`: the row may be pruned once no SET with that `exp` is accepted any more.
   */
  recordSet(iss: string, jti: string, digest: string, at: number, expiresAtMs: number): Promise<SetSeen>;
  archiveStatus(s: VerifiedMissionStatus, at: number): Promise<void>;
  /**
   * The digest of the pin `origin` is pinned with now, its row held until the transaction ends so
   * an unpin cannot commit in between (undefined: not pinned; docs/missions.md "Unpinning an
   * issuer"). Read once per transaction.
   */
  lockIssuerPin(origin: string): Promise<string | undefined>;
  /** Returns false when the ref is taken by a different digest (matrices are immutable). */
  insertMatrix(m: PinnedMatrix, at: number): Promise<boolean>;
  insertSession(s: SessionRecord): Promise<boolean>;
  lockSession(id: string): Promise<SessionRecord | undefined>;
  updateSession(s: SessionRecord, previousVersion: number): Promise<void>;
  /** Returns false when the id is taken. */
  insertItem(item: WorkItemRecord): Promise<boolean>;
  lockItem(id: string): Promise<WorkItemRecord | undefined>;
  updateItem(item: WorkItemRecord, previousVersion: number): Promise<void>;
  /** A7#24: the state AND the binding and matrix digest (a rebind to the successor), CAS on version. */
  rebindItem(item: WorkItemRecord, previousVersion: number): Promise<void>;
  /** HAR-29: the session's queued, running and paused items, locked (a taint stops egress). */
  lockSessionItems(sessionId: string): Promise<WorkItemRecord[]>;
  /**
   * Live and held items bound to the Mission or whose handle's parent is it, and their descendants
   * by `parent_id` (through finished items too), locked (A3.7); plus, unlocked, the finished
   * ancestors linking a live descendant to them, which `propagationTargets` never targets.
   */
  lockDependents(origin: string, missionId: string): Promise<WorkItemRecord[]>;
  linkOccurrence(gate: OccurrenceGate): Promise<void>;
  getGate(occurrenceId: string): Promise<OccurrenceGate | undefined>;
  /**
   * What entry's common `continue` needs (A3.6, issue 11 §8): the gate's view and item locked, in
   * that order, and the item's session taint, in one statement; undefined: not governed.
   */
  lockEntryFacts(occurrenceId: string): Promise<EntryFacts | undefined>;
  /** The gate, its whole view and item, locked, in one read (a stop at entry); undefined: not governed. */
  lockEntryGate(occurrenceId: string): Promise<EntryGateRead | undefined>;
  flagCache(origin: string, missionId: string, reason: string, at: number): Promise<void>;
  appendEvents(events: readonly PlannedEvent[], at: number, actor: string): Promise<void>;
  /**
   * The rest of this transaction is a batch of commands (a poll's SETs, issue 11 §8): every
   * `appendEvents` is held until the returned `flush`, which appends them in order, one write per
   * subject; and a view this repository locked or saved is answered again from memory (its lock
   * is held, and within the batch only this repository writes it). Nothing in the batch may read
   * the evidence log before the flush.
   */
  batch(): () => Promise<void>;
}

/**
 * The occurrence side of a stop (A3.7): `terminate` releases the item's reserved occurrence (phase
 * `reserved` is the serialized non-entry proof, AOC-REQ-008); entered ones stay and are reconciled.
 * Implemented by the store over the occurrences context, in the same transaction.
 */
export interface OccurrenceSide {
  /** 'released' | 'entered' (still in flight) | 'none' (already final or absent). */
  releaseReserved(occurrenceId: string, reason: string, at: number): Promise<'released' | 'entered' | 'none'>;
  /** Whether an entered, unresolved occurrence is in flight (HAR-25 in-flight handoff). */
  inFlight(occurrenceId: string): Promise<boolean>;
  /**
   * The lineage's current executor generation (null: no such lineage), read in the same
   * transaction and locked until it ends, so no takeover commits between the fence and the write.
   */
  currentGeneration(lineage: string): Promise<number | null>;
}

export interface MissionsUnitOfWork {
  run<T>(fn: (repo: MissionsRepository, occurrences: OccurrenceSide) => Promise<T>): Promise<T>;
  read<T>(fn: (repo: MissionsReader) => Promise<T>): Promise<T>;
}

/**
 * Fetch and verify Mission Status OUTSIDE any transaction (A3.1 step 3): the consuming half's
 * status client. Absent ⇒ the service answers with what the view says (a stale view pauses).
 */
export type StatusFetcher = (origin: string, missionId: string) => Promise<VerifiedMissionStatus>;

export type JsonBody = JsonObject;
