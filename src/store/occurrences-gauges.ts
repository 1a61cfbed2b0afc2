/**
 * What `/metrics` reports of the occurrences without counting the table (docs/api.md, /metrics):
 * the domain's open counts are the sum of the 64 `aoc_open_stripes` rows the limits keep exact in
 * every transaction (occurrences-limits.ts), and the conflicting occurrences are found through the
 * `(phase, outcome, conflict)` index (migration 013) among the entered ones only — a conflict is sticky and keeps its
 * occurrence entered (occurrences/machine/observe.ts), and the entered ones are bounded by the
 * domain's in-flight limit. Neither read grows with the occurrences ever recorded.
 */
import type { StoreEngine } from './engine.js';

export interface OpenGauges {
  /** Occurrences reserved and not entered or released (phase `reserved`). */
  readonly reserved: number;
  /** Occurrences entered with an open effect (phase `entered`): the unresolved ones. */
  readonly entered: number;
  /** Entered occurrences whose evidence conflicts. */
  readonly conflicts: number;
}

const num = (v: number | string | null | undefined): number => Number(v ?? 0);

export const OPEN_GAUGES_SQL = [
  'SELECT SUM(pending) AS p, SUM(in_flight) AS f FROM aoc_open_stripes',
  "SELECT COUNT(*) AS n FROM aoc_occurrences WHERE phase = 'entered' AND conflict = 1",
] as const;

export function readOpenGauges(engine: StoreEngine): Promise<OpenGauges> {
  return engine.read(async (ex) => {
    const open = await ex.get<{ p: number | string | null; f: number | string | null }>(OPEN_GAUGES_SQL[0]);
    const conflicting = await ex.get<{ n: number | string }>(OPEN_GAUGES_SQL[1]);
    return { reserved: num(open?.p), entered: num(open?.f), conflicts: num(conflicting?.n) };
  });
}
