/** Row ↔ record mapping for the harness tables (migration 006). JSON columns hold JCS text. */
import type {
  MissionBinding,
  MissionViewRecord,
  SessionRecord,
  SubagentHandle,
  WorkItemRecord,
} from '../missions/index.js';
import type { SqlValue } from './engine.js';
import { jcs, json, num, numOrNull } from './occurrences-rows.js';

type Int = number | string;

export interface ViewRow {
  origin: string;
  mission_id: string;
  state: string | null;
  state_source: 'status' | 'signal' | null;
  authority_hash: string | null;
  signal_version: Int;
  last_signal_jti: string | null;
  non_active_committed_at: Int | null;
  status_issued_at: Int | null;
  checked_at: Int | null;
  fresh_until: Int | null;
  mission_expiry: Int | null;
  updated_at: Int;
  version: Int;
}

export const VIEW_COLUMNS = [
  'origin',
  'mission_id',
  'state',
  'state_source',
  'authority_hash',
  'signal_version',
  'last_signal_jti',
  'non_active_committed_at',
  'status_issued_at',
  'checked_at',
  'fresh_until',
  'mission_expiry',
  'updated_at',
  'version',
] as const;

export function viewFromRow(r: ViewRow): MissionViewRecord {
  return {
    origin: r.origin,
    missionId: r.mission_id,
    state: r.state,
    stateSource: r.state_source,
    authorityHash: r.authority_hash,
    signalVersion: num(r.signal_version),
    lastSignalJti: r.last_signal_jti,
    nonActiveCommittedAt: numOrNull(r.non_active_committed_at),
    statusIssuedAt: numOrNull(r.status_issued_at),
    checkedAt: numOrNull(r.checked_at),
    freshUntil: numOrNull(r.fresh_until),
    missionExpiry: numOrNull(r.mission_expiry),
    updatedAt: num(r.updated_at),
    version: num(r.version),
  };
}

export function viewValues(v: MissionViewRecord): SqlValue[] {
  return [
    v.origin,
    v.missionId,
    v.state,
    v.stateSource,
    v.authorityHash,
    v.signalVersion,
    v.lastSignalJti,
    v.nonActiveCommittedAt,
    v.statusIssuedAt,
    v.checkedAt,
    v.freshUntil,
    v.missionExpiry,
    v.updatedAt,
    v.version,
  ];
}

export interface ItemRow {
  id: string;
  kind: WorkItemRecord['kind'];
  session_id: string | null;
  lineage: string | null;
  parent_id: string | null;
  mission_origin: string | null;
  mission_id: string | null;
  binding: string | null;
  parent_mission_origin: string | null;
  parent_mission_id: string | null;
  action_class: WorkItemRecord['actionClass'];
  not_before: Int | null;
  expires_at: Int | null;
  retry_of: string | null;
  idempotency_key: string | null;
  state: WorkItemRecord['state'];
  hold: Int;
  handle: string | null;
  occurrence_id: string | null;
  claimed_generation: Int | null;
  matrix_digest: string | null;
  created_at: Int;
  updated_at: Int;
  version: Int;
}

export const ITEM_COLUMNS = [
  'id',
  'kind',
  'session_id',
  'lineage',
  'parent_id',
  'mission_origin',
  'mission_id',
  'binding',
  'parent_mission_origin',
  'parent_mission_id',
  'action_class',
  'not_before',
  'expires_at',
  'retry_of',
  'idempotency_key',
  'state',
  'hold',
  'handle',
  'occurrence_id',
  'claimed_generation',
  'matrix_digest',
  'created_at',
  'updated_at',
  'version',
] as const;

export function itemFromRow(r: ItemRow): WorkItemRecord {
  return {
    id: r.id,
    kind: r.kind,
    sessionId: r.session_id,
    lineage: r.lineage,
    parentId: r.parent_id,
    binding: r.binding === null ? null : json<MissionBinding>(r.binding),
    actionClass: r.action_class,
    notBefore: numOrNull(r.not_before),
    expiresAt: numOrNull(r.expires_at),
    retryOf: r.retry_of,
    idempotencyKey: r.idempotency_key,
    state: r.state,
    hold: num(r.hold) !== 0,
    handle: r.handle === null ? null : json<SubagentHandle>(r.handle),
    occurrenceId: r.occurrence_id,
    claimedGeneration: numOrNull(r.claimed_generation),
    matrixDigest: r.matrix_digest,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
    version: num(r.version),
  };
}

export function itemValues(i: WorkItemRecord): SqlValue[] {
  return [
    i.id,
    i.kind,
    i.sessionId,
    i.lineage,
    i.parentId,
    i.binding?.mission_origin ?? null,
    i.binding?.mission_id ?? null,
    i.binding === null ? null : jcs(i.binding),
    i.handle?.parent_mission.origin ?? null,
    i.handle?.parent_mission.id ?? null,
    i.actionClass,
    i.notBefore,
    i.expiresAt,
    i.retryOf,
    i.idempotencyKey,
    i.state,
    i.hold ? 1 : 0,
    i.handle === null ? null : jcs(i.handle),
    i.occurrenceId,
    i.claimedGeneration,
    i.matrixDigest,
    i.createdAt,
    i.updatedAt,
    i.version,
  ];
}

export interface SessionRow {
  id: string;
  lineage: string | null;
  binding: string;
  tainted: Int;
  created_at: Int;
  version: Int;
}

export function sessionFromRow(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    lineage: r.lineage,
    binding: json<MissionBinding>(r.binding),
    tainted: num(r.tainted) !== 0,
    createdAt: num(r.created_at),
    version: num(r.version),
  };
}
