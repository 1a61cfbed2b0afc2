/**
 * Evidence by type, for the console's overview (issue 14; docs/api.md "Evidence by type"): the
 * latest events of one type (recent takeovers) and counts of one type per time bucket (entries
 * over time). Both read the `(type, at)` index of migration 011, so they touch only the rows
 * they answer with, whatever the size of the log.
 */
import type { SqlExecutor } from './engine.js';
import { EVIDENCE_COLUMNS, eventFromRow, type EvidenceEvent, type EvidenceRow } from './evidence-log.js';

export async function recentEvidence(ex: SqlExecutor, type: string, limit: number): Promise<EvidenceEvent[]> {
  const rows = await ex.all<EvidenceRow>(
    `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE type = ? ORDER BY at DESC, seq DESC LIMIT ?`,
    [type, limit],
  );
  return rows.map(eventFromRow);
}

export interface Bucket {
  readonly from: number;
  readonly count: number;
}

/**
 * Counts of `type` in `buckets` slices that tile [from, to) exactly: slice i starts at
 * `from + floor(i * span / buckets)` (span = to - from, in ms), so the slices differ by at most
 * 1 ms, the first starts at `from` and the last ends at `to` — none starts at or after `to`. The
 * caller keeps `buckets` within 1..span, so no slice is empty of time; empty slices count 0.
 */
export async function evidenceHistogram(
  ex: SqlExecutor,
  q: { type: string; from: number; to: number; buckets: number },
): Promise<Bucket[]> {
  const span = q.to - q.from;
  // The slice of offset d = at - from is the last i with floor(i * span / buckets) <= d, that is
  // floor(((d + 1) * buckets - 1) / span), in integers on both engines (at >= from): SQLite binds
  // a JS number as a REAL, whose quotient would group each event apart, hence the casts.
  const rows = await ex.all<{ b: number | string; n: number | string }>(
    `SELECT ((at - CAST(? AS BIGINT) + 1) * CAST(? AS BIGINT) - 1) / CAST(? AS BIGINT) AS b,
        COUNT(*) AS n FROM evidence_events
      WHERE type = ? AND at >= ? AND at < ? GROUP BY b`,
    [q.from, q.buckets, span, q.type, q.from, q.to],
  );
  const counts = new Map(rows.map((r) => [Math.floor(Number(r.b)), Number(r.n)]));
  return Array.from({ length: q.buckets }, (_, i) => ({
    from: q.from + Math.floor((i * span) / q.buckets),
    count: counts.get(i) ?? 0,
  }));
}
