/**
 * Provider entry's Mission read for the common answer, `continue` (issue 11 §8, build spec A3.6):
 * ONE statement that locks the governed occurrence's Mission view, then its work item (the
 * harness's lock order, as missions-entry-gate.ts explains per engine), and returns only the
 * columns `entryContinues` decides on, plus the item's session taint (HAR-29). A whole item and
 * view (some forty columns, two JSON documents) cost several times this read and its row objects;
 * only a stop needs them, and reads them then (`lockEntryGate`, the same rows, already locked).
 */
import type { EntryFacts, MissionBinding } from '../missions/index.js';
import type { Transaction } from './engine.js';
import { json, num, numOrNull } from './occurrences-rows.js';

type Int = number | string;

interface Row {
  g_item: string;
  v_origin: string | null;
  v_state: string | null;
  v_source: 'status' | 'signal' | null;
  v_hash: string | null;
  v_checked: Int | null;
  v_fresh: Int | null;
  v_expiry: Int | null;
  i_id: string | null;
  i_state: NonNullable<EntryFacts['item']>['state'] | null;
  i_hold: Int | null;
  i_expires: Int | null;
  i_session: string | null;
  i_class: NonNullable<EntryFacts['item']>['actionClass'] | null;
  i_binding: string | null;
  s_tainted: Int | null;
}

/** [column, alias] of the view and of the item: only what the continue decision reads. */
const VIEW: readonly (readonly [string, string])[] = [
  ['origin', 'v_origin'],
  ['state', 'v_state'],
  ['state_source', 'v_source'],
  ['authority_hash', 'v_hash'],
  ['checked_at', 'v_checked'],
  ['fresh_until', 'v_fresh'],
  ['mission_expiry', 'v_expiry'],
];
const ITEM: readonly (readonly [string, string])[] = [
  ['id', 'i_id'],
  ['state', 'i_state'],
  ['hold', 'i_hold'],
  ['expires_at', 'i_expires'],
  ['session_id', 'i_session'],
  ['action_class', 'i_class'],
  ['binding', 'i_binding'],
];
const select = (cols: typeof VIEW, table = ''): string =>
  cols.map(([c, a]) => `${table}${c} AS ${a}`).join(', ');

// SQLite: the write transaction holds the one writer lock, so plain LEFT JOINs suffice.
const SQLITE = `SELECT g.work_item_id AS g_item, ${select(VIEW, 'v.')}, ${select(ITEM, 'i.')}, s.tainted AS s_tainted
  FROM msn_occurrence_gates g
  LEFT JOIN msn_views v ON v.origin = g.mission_origin AND v.mission_id = g.mission_id
  LEFT JOIN msn_items i ON i.id = g.work_item_id
  LEFT JOIN msn_sessions s ON s.id = i.session_id
  WHERE g.occurrence_id = ?`;

// PostgreSQL: each locked row from a LATERAL sub-select with its own FOR UPDATE, view first; the
// session is read, not locked, as the full check's getSession reads it (a taint moves the item,
// which this statement locks, so an entry that waited for a taint sees the item stopped).
const POSTGRES = `SELECT g.work_item_id AS g_item, v.*, i.*, s.tainted AS s_tainted
  FROM msn_occurrence_gates g
  LEFT JOIN LATERAL (SELECT ${select(VIEW)} FROM msn_views
    WHERE origin = g.mission_origin AND mission_id = g.mission_id FOR UPDATE) v ON true
  LEFT JOIN LATERAL (SELECT ${select(ITEM)} FROM msn_items
    WHERE id = g.work_item_id AND v.v_origin IS NOT NULL FOR UPDATE) i ON true
  LEFT JOIN msn_sessions s ON s.id = i.i_session
  WHERE g.occurrence_id = ?`;

function factsOf(r: Row): EntryFacts {
  const view =
    r.v_origin === null
      ? undefined
      : {
          state: r.v_state,
          stateSource: r.v_source,
          authorityHash: r.v_hash,
          checkedAt: numOrNull(r.v_checked),
          freshUntil: numOrNull(r.v_fresh),
          missionExpiry: numOrNull(r.v_expiry),
        };
  const item =
    r.i_id === null || r.i_state === null || r.i_class === null || r.i_hold === null
      ? undefined
      : {
          id: r.i_id,
          state: r.i_state,
          hold: num(r.i_hold) !== 0,
          expiresAt: numOrNull(r.i_expires),
          sessionId: r.i_session,
          actionClass: r.i_class,
          binding: r.i_binding === null ? null : json<MissionBinding>(r.i_binding),
        };
  return { view, item, sessionTainted: r.s_tainted !== null && num(r.s_tainted) !== 0 };
}

/** The facts of `occurrenceId`'s Mission check (undefined: the occurrence is not governed). */
export async function lockEntryFacts(tx: Transaction, occurrenceId: string): Promise<EntryFacts | undefined> {
  const row = await tx.get<Row>(tx.forUpdate === '' ? SQLITE : POSTGRES, [occurrenceId]);
  return row === undefined ? undefined : factsOf(row);
}
