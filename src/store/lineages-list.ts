/**
 * The lineages list of the console (issue 14 §3 "Lineages"): one page in id order, read through
 * the lineages' primary key by keyset (`id > ?`), so any page costs about a page of index entries
 * whatever the number of lineages (issue 14 §4: every list is paginated by index).
 */
import type { SqlExecutor } from './engine.js';
import { num } from './occurrences-rows.js';

export interface LineageSummary {
  readonly id: string;
  /** The current generation; generation − 1 generations were retired by takeovers. */
  readonly generation: number;
  readonly createdAt: number;
  /** When the lineage last changed (its latest takeover). */
  readonly updatedAt: number;
}

export async function pageLineages(
  ex: SqlExecutor,
  after: string | undefined,
  limit: number,
): Promise<LineageSummary[]> {
  const rows = await ex.all<{
    id: string;
    generation: number | string;
    created_at: number | string;
    updated_at: number | string;
  }>(
    `SELECT id, generation, created_at, updated_at FROM aoc_lineages${after === undefined ? '' : ' WHERE id > ?'} ORDER BY id LIMIT ${Math.trunc(limit)}`,
    after === undefined ? [] : [after],
  );
  return rows.map((r) => ({
    id: r.id,
    generation: num(r.generation),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  }));
}
