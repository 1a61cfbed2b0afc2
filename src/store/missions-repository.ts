/**
 * The SQL implementation of the harness port (src/missions/ports.ts): one portable SQL text for
 * both engines. Every item and view update is a compare-and-set on `version` (HAR-28); SET replay
 * is the UNIQUE (iss, jti) index (C-A18); events go to the one evidence log.
 */
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import {
  pin,
  validateMatrix,
  type EntryFacts,
  type EntryGateRead,
  type ItemFilter,
  type MissionsReader,
  type MissionsRepository,
  type MissionViewRecord,
  type OccurrenceGate,
  type PinnedMatrix,
  type PlannedEvent,
  type SessionRecord,
  type SetSeen,
  type StoredEvent,
  type VerifiedMissionStatus,
  type WorkItemRecord,
} from '../missions/index.js';
import { marks, type SqlExecutor, type SqlValue, type Transaction } from './engine.js';
import { appendEvidenceRun, listEvidence, type EvidenceInput } from './evidence-log.js';
import { appendEvidenceRuns } from './evidence-runs.js';
import { lockEntryFacts } from './missions-entry-facts.js';
import { lockEntryGate } from './missions-entry-gate.js';
import { lockedIssuerPinDigest } from './missions-issuers.js';
import { recordSetSeen } from './missions-sets-seen.js';
import { json, num } from './occurrences-rows.js';
import * as rows from './missions-rows.js';

const ITEM_COLS = rows.ITEM_COLUMNS.join(', ');
const VIEW_COLS = rows.VIEW_COLUMNS.join(', ');
/** The view's compare-and-set, built once (every applied SET sends it). */
const VIEW_UPDATE = `UPDATE msn_views SET ${rows.VIEW_COLUMNS.slice(2)
  .map((c) => `${c} = ?`)
  .join(', ')} WHERE origin = ? AND mission_id = ? AND version = ?`;
const VIEW_INSERT = `INSERT INTO msn_views (${VIEW_COLS}) VALUES (${marks(rows.VIEW_COLUMNS.length)}) ON CONFLICT DO NOTHING`;

export class MissionsReaderSql implements MissionsReader {
  readonly #ex: SqlExecutor;
  protected readonly lock: string;

  constructor(ex: SqlExecutor, lock = '') {
    this.#ex = ex;
    this.lock = lock;
  }

  protected async view(
    origin: string,
    missionId: string,
    lock: boolean,
  ): Promise<MissionViewRecord | undefined> {
    const r = await this.#ex.get<rows.ViewRow>(
      `SELECT ${VIEW_COLS} FROM msn_views WHERE origin = ? AND mission_id = ?${lock ? this.lock : ''}`,
      [origin, missionId],
    );
    return r === undefined ? undefined : rows.viewFromRow(r);
  }

  getView(origin: string, missionId: string): Promise<MissionViewRecord | undefined> {
    return this.view(origin, missionId, false);
  }

  protected async item(id: string, lock: boolean): Promise<WorkItemRecord | undefined> {
    const r = await this.#ex.get<rows.ItemRow>(
      `SELECT ${ITEM_COLS} FROM msn_items WHERE id = ?${lock ? this.lock : ''}`,
      [id],
    );
    return r === undefined ? undefined : rows.itemFromRow(r);
  }

  getItem(id: string): Promise<WorkItemRecord | undefined> {
    return this.item(id, false);
  }

  async listItems(f: ItemFilter): Promise<WorkItemRecord[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (f.mission !== undefined) {
      where.push('mission_origin = ? AND mission_id = ?');
      params.push(f.mission.origin, f.mission.id);
    }
    if (f.lineage !== undefined) {
      where.push('lineage = ?');
      params.push(f.lineage);
    }
    if (f.states !== undefined && f.states.length > 0) {
      where.push(`state IN (${marks(f.states.length)})`);
      params.push(...f.states);
    }
    if (f.after !== undefined) {
      where.push('(created_at > ? OR (created_at = ? AND id > ?))');
      params.push(f.after.createdAt, f.after.createdAt, f.after.id);
    }
    const sql = `SELECT ${ITEM_COLS} FROM msn_items${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, id LIMIT ?`;
    const found = await this.#ex.all<rows.ItemRow>(sql, [...params, f.limit ?? 1000]);
    return found.map(rows.itemFromRow);
  }

  protected async session(id: string, lock: boolean): Promise<SessionRecord | undefined> {
    const r = await this.#ex.get<rows.SessionRow>(
      `SELECT id, lineage, binding, tainted, created_at, version FROM msn_sessions WHERE id = ?${lock ? this.lock : ''}`,
      [id],
    );
    return r === undefined ? undefined : rows.sessionFromRow(r);
  }

  getSession(id: string): Promise<SessionRecord | undefined> {
    return this.session(id, false);
  }

  async getMatrix(ref: string): Promise<PinnedMatrix | undefined> {
    const r = await this.#ex.get<{ document: string; digest: string }>(
      'SELECT document, digest FROM msn_stop_matrices WHERE ref = ?',
      [ref],
    );
    if (r === undefined) return undefined;
    const pinned = pin(validateMatrix(json(r.document)));
    if (pinned.digest !== r.digest)
      throw new BatonError('store_corrupt', 'a stored stop matrix no longer matches its digest');
    return pinned;
  }

  async listEvents(subject: string): Promise<StoredEvent[]> {
    const events = await listEvidence(this.#ex, subject);
    return events.map((e) => ({
      subject: e.subject,
      type: e.type,
      body: e.body,
      seq: e.seq,
      at: e.at,
      actor: e.actor,
      hash: e.hash,
    }));
  }

  async listCacheFlags(origin: string, missionId: string): Promise<{ reason: string; at: number }[]> {
    const found = await this.#ex.all<{ reason: string; flagged_at: number | string }>(
      'SELECT reason, flagged_at FROM msn_cache_flags WHERE mission_origin = ? AND mission_id = ? ORDER BY flagged_at',
      [origin, missionId],
    );
    return found.map((r) => ({ reason: r.reason, at: num(r.flagged_at) }));
  }

  async getGate(occurrenceId: string): Promise<OccurrenceGate | undefined> {
    const r = await this.#ex.get<{
      occurrence_id: string;
      work_item_id: string;
      mission_origin: string;
      mission_id: string;
      action_class: OccurrenceGate['actionClass'];
    }>(
      'SELECT occurrence_id, work_item_id, mission_origin, mission_id, action_class FROM msn_occurrence_gates WHERE occurrence_id = ?',
      [occurrenceId],
    );
    return r === undefined
      ? undefined
      : {
          occurrenceId: r.occurrence_id,
          workItemId: r.work_item_id,
          missionOrigin: r.mission_origin,
          missionId: r.mission_id,
          actionClass: r.action_class,
        };
  }
}

export class MissionsRepositorySql extends MissionsReaderSql implements MissionsRepository {
  readonly #tx: Transaction;
  /** In a batch (`batch()`): the events held until its flush, and the views locked or saved. */
  #deferred: EvidenceInput[] | undefined;
  #views: Map<string, MissionViewRecord> | undefined;
  /** Issuer pins read (and held) in this transaction: a batch's SETs of one issuer read it once. */
  readonly #pins = new Map<string, string | undefined>();

  constructor(tx: Transaction) {
    super(tx, tx.forUpdate);
    this.#tx = tx;
  }

  async #one(sql: string, params: readonly SqlValue[], what: string): Promise<void> {
    const { changes } = await this.#tx.run(sql, params);
    if (changes !== 1) throw new BatonError('work_item_conflict', `the ${what} changed concurrently; retry`);
  }

  async lockView(origin: string, missionId: string): Promise<MissionViewRecord | undefined> {
    const key = `${origin}#${missionId}`;
    const held = this.#views?.get(key);
    if (held !== undefined) return held;
    const v = await this.view(origin, missionId, true);
    if (v !== undefined) this.#views?.set(key, v);
    return v;
  }

  async saveView(v: MissionViewRecord, previousVersion: number): Promise<void> {
    await this.#saveView(v, previousVersion);
    this.#views?.set(`${v.origin}#${v.missionId}`, v);
  }

  async #saveView(v: MissionViewRecord, previousVersion: number): Promise<void> {
    if (previousVersion === 0) {
      await this.#one(VIEW_INSERT, rows.viewValues(v), 'mission view');
      return;
    }
    await this.#one(
      VIEW_UPDATE,
      [...rows.viewValues(v).slice(2), v.origin, v.missionId, previousVersion],
      'mission view',
    );
  }

  recordSet(iss: string, jti: string, digest: string, at: number, expiresAtMs: number): Promise<SetSeen> {
    return recordSetSeen(this.#tx, iss, jti, digest, at, expiresAtMs);
  }

  async lockIssuerPin(origin: string): Promise<string | undefined> {
    if (this.#pins.has(origin)) return this.#pins.get(origin);
    const digest = await lockedIssuerPinDigest(this.#tx, origin);
    this.#pins.set(origin, digest);
    return digest;
  }

  async archiveStatus(s: VerifiedMissionStatus, at: number): Promise<void> {
    await this.#tx.run(
      'INSERT INTO msn_status_archive (jws_digest, origin, mission_id, jws, kid, thumbprint, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [s.jwsDigest, s.origin, s.missionId, s.jws, s.kid, s.jwkThumbprint, at],
    );
    await this.#tx.run(
      'INSERT INTO msn_keys (origin, kid, thumbprint, jwk, first_seen_at) VALUES (?, ?, ?, NULL, ?) ON CONFLICT DO NOTHING',
      [s.origin, s.kid, s.jwkThumbprint, at],
    );
  }

  async insertMatrix(m: PinnedMatrix, at: number): Promise<boolean> {
    await this.#tx.run(
      'INSERT INTO msn_stop_matrices (ref, digest, document, registered_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [m.ref, m.digest, canonicalize(m.matrix), at],
    );
    const r = await this.#tx.get<{ digest: string }>('SELECT digest FROM msn_stop_matrices WHERE ref = ?', [
      m.ref,
    ]);
    return r?.digest === m.digest;
  }

  async insertSession(s: SessionRecord): Promise<boolean> {
    const { changes } = await this.#tx.run(
      'INSERT INTO msn_sessions (id, lineage, mission_origin, mission_id, binding, tainted, created_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [
        s.id,
        s.lineage,
        s.binding.mission_origin,
        s.binding.mission_id,
        canonicalize(s.binding),
        s.tainted ? 1 : 0,
        s.createdAt,
        s.version,
      ],
    );
    return changes === 1;
  }

  lockSession(id: string): Promise<SessionRecord | undefined> {
    return this.session(id, true);
  }

  updateSession(s: SessionRecord, previousVersion: number): Promise<void> {
    return this.#one(
      'UPDATE msn_sessions SET tainted = ?, version = ? WHERE id = ? AND version = ?',
      [s.tainted ? 1 : 0, s.version, s.id, previousVersion],
      'session',
    );
  }

  async insertItem(i: WorkItemRecord): Promise<boolean> {
    const { changes } = await this.#tx.run(
      `INSERT INTO msn_items (${ITEM_COLS}) VALUES (${marks(rows.ITEM_COLUMNS.length)}) ON CONFLICT DO NOTHING`,
      rows.itemValues(i),
    );
    return changes === 1;
  }

  lockItem(id: string): Promise<WorkItemRecord | undefined> {
    return this.item(id, true);
  }

  updateItem(i: WorkItemRecord, previousVersion: number): Promise<void> {
    // Only the mutable state: identity, binding and kind never change in place.
    return this.#one(
      'UPDATE msn_items SET state = ?, hold = ?, occurrence_id = ?, claimed_generation = ?, updated_at = ?, version = ? WHERE id = ? AND version = ?',
      [
        i.state,
        i.hold ? 1 : 0,
        i.occurrenceId,
        i.claimedGeneration,
        i.updatedAt,
        i.version,
        i.id,
        previousVersion,
      ],
      'work item',
    );
  }

  rebindItem(i: WorkItemRecord, previousVersion: number): Promise<void> {
    const b = i.binding;
    if (b === null) return Promise.reject(new BatonError('internal', 'a rebind needs a binding'));
    return this.#one(
      'UPDATE msn_items SET mission_origin = ?, mission_id = ?, binding = ?, matrix_digest = ?, state = ?, hold = ?, updated_at = ?, version = ? WHERE id = ? AND version = ?',
      [
        b.mission_origin,
        b.mission_id,
        canonicalize(b),
        i.matrixDigest,
        i.state,
        i.hold ? 1 : 0,
        i.updatedAt,
        i.version,
        i.id,
        previousVersion,
      ],
      'work item',
    );
  }

  async lockSessionItems(sessionId: string): Promise<WorkItemRecord[]> {
    const found = await this.#tx.all<rows.ItemRow>(
      `SELECT ${ITEM_COLS} FROM msn_items WHERE session_id = ? AND state IN ('queued', 'running', 'paused') ORDER BY id${this.lock}`,
      [sessionId],
    );
    return found.map(rows.itemFromRow);
  }

  async lockDependents(origin: string, missionId: string): Promise<WorkItemRecord[]> {
    // The Mission's items and the handles whose parent is it, in any state, and their descendants
    // (HAR-04, seed §9: "and their descendants (by parent_id)") to a fixpoint: the walk passes
    // through finished items too, so child work under a handle that already completed is reached.
    // UNION (not UNION ALL) ends a parent_id cycle. The live and held ones are locked in one
    // statement, in id order.
    const found = await this.#tx.all<rows.ItemRow>(
      `WITH RECURSIVE tree (id) AS (
         SELECT id FROM msn_items
          WHERE (mission_origin = ? AND mission_id = ?) OR (parent_mission_origin = ? AND parent_mission_id = ?)
         UNION
         SELECT c.id FROM msn_items c JOIN tree t ON c.parent_id = t.id
       )
       SELECT ${ITEM_COLS} FROM msn_items
        WHERE id IN (SELECT id FROM tree) AND state IN ('queued', 'running', 'paused', 'suppressed', 'handed_off')
        ORDER BY id${this.lock}`,
      [origin, missionId, origin, missionId],
    );
    const items = found.map(rows.itemFromRow);
    // A live item whose parent is finished: its finished ancestors up to the Mission's own item or
    // handle are read (not locked, they never change again) so the stop decision sees the whole
    // chain — an item under a finished independent handle whose Mission is active continues.
    const seen = new Set(items.map((i) => i.id));
    const isSeed = (i: WorkItemRecord): boolean =>
      (i.binding?.mission_origin === origin && i.binding.mission_id === missionId) ||
      (i.handle?.parent_mission.origin === origin && i.handle.parent_mission.id === missionId);
    for (const live of [...items]) {
      for (let cur = live; !isSeed(cur) && cur.parentId !== null && !seen.has(cur.parentId);) {
        const up = await this.item(cur.parentId, false);
        if (up === undefined) break;
        seen.add(up.id);
        items.push(up);
        cur = up;
      }
    }
    return items;
  }

  lockEntryFacts(occurrenceId: string): Promise<EntryFacts | undefined> {
    return lockEntryFacts(this.#tx, occurrenceId);
  }

  lockEntryGate(occurrenceId: string): Promise<EntryGateRead | undefined> {
    return lockEntryGate(this.#tx, occurrenceId, (id) => this.item(id, true));
  }

  async linkOccurrence(g: OccurrenceGate): Promise<void> {
    await this.#tx.run(
      `INSERT INTO msn_occurrence_gates (occurrence_id, work_item_id, mission_origin, mission_id, action_class) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (occurrence_id) DO UPDATE SET work_item_id = excluded.work_item_id`,
      [g.occurrenceId, g.workItemId, g.missionOrigin, g.missionId, g.actionClass],
    );
  }

  async flagCache(origin: string, missionId: string, reason: string, at: number): Promise<void> {
    await this.#tx.run(
      'INSERT INTO msn_cache_flags (mission_origin, mission_id, reason, flagged_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [origin, missionId, reason, at],
    );
  }

  async appendEvents(events: readonly PlannedEvent[], at: number, actor: string): Promise<void> {
    const inputs = events.map((e) => ({ subject: e.subject, type: e.type, body: e.body, at, actor }));
    if (this.#deferred !== undefined) this.#deferred.push(...inputs);
    else await this.#append(inputs);
  }

  batch(): () => Promise<void> {
    this.#deferred ??= [];
    this.#views ??= new Map();
    return async () => {
      const held = this.#deferred ?? [];
      this.#deferred = undefined;
      this.#views = undefined;
      // One run per subject, subjects in order of first appearance: each chain keeps its order.
      const by = new Map<string, EvidenceInput[]>();
      for (const e of held) {
        const run = by.get(e.subject);
        if (run === undefined) by.set(e.subject, [e]);
        else run.push(e);
      }
      await appendEvidenceRuns(this.#tx, [...by.values()]);
    };
  }

  async #append(events: readonly EvidenceInput[]): Promise<void> {
    for (let i = 0; i < events.length;) {
      const subject = events[i]?.subject;
      const run: EvidenceInput[] = [];
      for (; i < events.length && events[i]?.subject === subject; i++) run.push(events[i] as EvidenceInput);
      await appendEvidenceRun(this.#tx, run);
    }
  }
}
