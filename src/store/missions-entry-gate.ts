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

/** The members of `row` that start with `prefix`, without it (`undefined` when `key` is null). */
function part<T>(row: Row, prefix: string, key: string): T | undefined {
  if (row[`${prefix}${key}`] === null || row[`${prefix}${key}`] === undefined) return undefined;
  const out: Row = {};
  for (const [k, value] of Object.entries(row)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = value;
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
  const g = part<Record<(typeof GATE_COLUMNS)[number], string>>(row, 'g_', 'work_item_id');
  if (g === undefined) return undefined;
  const gate = {
    occurrenceId,
    workItemId: g.work_item_id,
    missionOrigin: g.mission_origin,
    missionId: g.mission_id,
    actionClass: g.action_class as EntryGateRead['gate']['actionClass'],
  };
  const viewRow = part<rows.ViewRow>(row, 'v_', 'origin');
  const itemRow = part<rows.ItemRow>(row, 'i_', 'id');
  const view = viewRow === undefined ? undefined : rows.viewFromRow(viewRow);
  const item =
    itemRow !== undefined
      ? rows.itemFromRow(itemRow)
      : view === undefined && tx.forUpdate !== ''
        ? await lockItem(gate.workItemId)
        : undefined;
  return { gate, view, item };
}
