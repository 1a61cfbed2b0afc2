/**
 * Provider entry's Mission read in ONE statement (issue 11 §8, build spec A3.6): the governed
 * occurrence's gate row, its Mission view and its work item — view locked, then item locked, the
 * harness's lock order — inside the enter transaction. An ungoverned occurrence costs the same one
 * statement (no gate row) as the gate lookup alone did before.
 *
 * The one place the harness's SQL differs by engine: SQLite's write transaction already holds the
 * one writer lock, so plain LEFT JOINs read a state no other writer can change before COMMIT.
 * PostgreSQL cannot `FOR UPDATE` the nullable side of an outer join, so each locked row comes from
 * a LATERAL sub-select with its own `FOR UPDATE`; the item's sub-select refers to the view's, which
 * makes the executor lock the view first (a revocation locks the view, then the items: the same
 * order, so the two queue rather than deadlock) and return the latest committed version of each
 * row it waited for (READ COMMITTED), as the separate `lockView`/`lockItem` statements did.
 */
import type { EntryGateRead } from '../missions/index.js';
import type { Transaction } from './engine.js';
import * as rows from './missions-rows.js';

const GATE_COLUMNS = ['work_item_id', 'mission_origin', 'mission_id', 'action_class'] as const;

const aliased = (table: string, prefix: string, cols: readonly string[]): string =>
  cols.map((c) => `${table}.${c} AS ${prefix}${c}`).join(', ');

const SELECTED = [
  aliased('g', 'g_', GATE_COLUMNS),
  aliased('v', 'v_', rows.VIEW_COLUMNS),
  aliased('i', 'i_', rows.ITEM_COLUMNS),
].join(', ');

const SQLITE = `SELECT ${SELECTED} FROM msn_occurrence_gates g
  LEFT JOIN msn_views v ON v.origin = g.mission_origin AND v.mission_id = g.mission_id
  LEFT JOIN msn_items i ON i.id = g.work_item_id
  WHERE g.occurrence_id = ?`;

const POSTGRES = `SELECT ${SELECTED} FROM msn_occurrence_gates g
  LEFT JOIN LATERAL (SELECT ${rows.VIEW_COLUMNS.join(', ')} FROM msn_views
    WHERE origin = g.mission_origin AND mission_id = g.mission_id FOR UPDATE) v ON true
  LEFT JOIN LATERAL (SELECT ${rows.ITEM_COLUMNS.join(', ')} FROM msn_items
    WHERE id = g.work_item_id AND v.origin IS NOT NULL FOR UPDATE) i ON true
  WHERE g.occurrence_id = ?`;

type Row = Record<string, unknown>;

/** [column, alias] pairs, computed once: a row is rebuilt by plain property reads (no scans). */
const pairs = (prefix: string, cols: readonly string[]): (readonly [string, string])[] =>
  cols.map((c) => [c, `${prefix}${c}`] as const);
const VIEW_PAIRS = pairs('v_', rows.VIEW_COLUMNS);
const ITEM_PAIRS = pairs('i_', rows.ITEM_COLUMNS);

/** The columns of one table out of the joined row (`undefined` when its key is null: no row). */
function part<T>(row: Row, columns: readonly (readonly [string, string])[]): T | undefined {
  const key = columns[0];
  if (key === undefined || row[key[1]] === null || row[key[1]] === undefined) return undefined;
  const out: Row = {};
  for (const [column, alias] of columns) out[column] = row[alias];
  return out as T;
}

/**
 * The gate, view and item of `occurrenceId` (undefined: not governed). `lockItem` is asked only
 * when PostgreSQL's statement did not reach the item because the Mission has no view yet (entry
 * then stops as `unknown`, a path that moves the item and so must hold it).
 */
export async function lockEntryGate(
  tx: Transaction,
  occurrenceId: string,
  lockItem: (id: string) => Promise<EntryGateRead['item']>,
): Promise<EntryGateRead | undefined> {
  const row = await tx.get<Row>(tx.forUpdate === '' ? SQLITE : POSTGRES, [occurrenceId]);
  if (row === undefined) return undefined;
  if (typeof row['g_work_item_id'] !== 'string') return undefined;
  const gate = {
    occurrenceId,
    workItemId: row['g_work_item_id'],
    missionOrigin: row['g_mission_origin'] as string,
    missionId: row['g_mission_id'] as string,
    actionClass: row['g_action_class'] as EntryGateRead['gate']['actionClass'],
  };
  const viewRow = part<rows.ViewRow>(row, VIEW_PAIRS);
  const itemRow = part<rows.ItemRow>(row, ITEM_PAIRS);
  const view = viewRow === undefined ? undefined : rows.viewFromRow(viewRow);
  const item =
    itemRow !== undefined
      ? rows.itemFromRow(itemRow)
      : view === undefined && tx.forUpdate !== ''
        ? await lockItem(gate.workItemId)
        : undefined;
  return { gate, view, item };
}
