/**
 * `baton log verify` (DESIGN.md §2): re-walk every chain of the evidence log in one read snapshot
 * and cross-check it with the heads table and the global counter (docs/store.md, "What verify
 * catches").
 */
import { BatonError } from '../core/errors.js';
import type { SqlExecutor, StoreEngine } from './engine.js';
import { ChainWalker, type ChainReport, type HeadRecord } from './evidence-chain.js';
import { EVIDENCE_COLUMNS, type EvidenceEvent, type EvidenceRow } from './evidence-log.js';

export type { BrokenLink, ChainReport } from './evidence-chain.js';

export interface EvidenceProgress {
  readonly events: number;
  readonly subjects: number;
}

const PAGE = 1000;

interface HeadsRow {
  subject: string;
  head: string;
  count: number | string;
  last_seq: number | string;
}

async function readRecorded(tx: SqlExecutor): Promise<{ heads: Map<string, HeadRecord>; lastSeq: number }> {
  const counter = await tx.get<{ last_seq: number | string }>(
    'SELECT last_seq FROM evidence_counter WHERE id = 1',
  );
  if (counter === undefined) {
    throw new BatonError('store_corrupt', 'the evidence counter is missing (has `baton migrate` run?)');
  }
  const rows = await tx.all<HeadsRow>('SELECT subject, head, count, last_seq FROM evidence_heads');
  const heads = new Map<string, HeadRecord>();
  for (const r of rows)
    heads.set(r.subject, { head: r.head, count: Number(r.count), last_seq: Number(r.last_seq) });
  return { heads, lastSeq: Number(counter.last_seq) };
}

/**
 * Walk the whole log in `seq` order, page by page inside one snapshot. `visit` sees each event
 * whose own content is intact (the export writes them as it goes).
 */
export async function walkEvidence(
  tx: SqlExecutor,
  visit?: (event: EvidenceEvent) => void,
  onProgress?: (p: EvidenceProgress) => void,
): Promise<ChainWalker> {
  const recorded = await readRecorded(tx);
  const walker = new ChainWalker(recorded.lastSeq);
  let after = 0;
  for (;;) {
    const rows = await tx.all<EvidenceRow>(
      `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE seq > ? ORDER BY seq LIMIT ${PAGE}`,
      [after],
    );
    for (const row of rows) {
      const event = walker.feed(row);
      if (event !== undefined) visit?.(event);
    }
    const last = rows.at(-1);
    if (last === undefined) break;
    after = Number(last.seq);
    onProgress?.({ events: walker.events, subjects: walker.chains().size });
  }
  walker.finish(recorded.heads, recorded.lastSeq);
  return walker;
}

/** Verify every chain of the log; never throws for a broken chain, only reports it. */
export async function verifyEvidence(
  engine: StoreEngine,
  onProgress?: (p: EvidenceProgress) => void,
): Promise<ChainReport> {
  return engine.read(async (tx) => (await walkEvidence(tx, undefined, onProgress)).report());
}
