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

/** Counts of `type` in `buckets` equal slices of [from, to); empty slices count 0. */
export async function evidenceHistogram(
  ex: SqlExecutor,
  q: { type: string; from: number; to: number; buckets: number },
): Promise<Bucket[]> {
  const width = Math.max(1, Math.ceil((q.to - q.from) / q.buckets));
  const rows = await ex.all<{ b: number | string; n: number | string }>(
    `SELECT (at - ?) / ? AS b, COUNT(*) AS n FROM evidence_events
      WHERE type = ? AND at >= ? AND at < ? GROUP BY b`,
    [q.from, width, q.type, q.from, q.to],
  );
  const counts = new Map(rows.map((r) => [Math.floor(Number(r.b)), Number(r.n)]));
  return Array.from({ length: q.buckets }, (_, i) => ({
    from: q.from + i * width,
    count: counts.get(i) ?? 0,
  }));
}
