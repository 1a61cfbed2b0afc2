/**
 * `baton log verify` (DESIGN.md §2): re-walk every chain of the evidence log in one read snapshot
 * and cross-check it with the heads table, and every occurrence and authority budget row with what
 * its chains record (evidence-state.ts; docs/store.md, "What verify catches").
 */
import { BatonError } from '../core/errors.js';
import { occurrenceIdOf } from '../occurrences/index.js';
import type { SqlExecutor, StoreEngine } from './engine.js';
import { ChainWalker, type ChainReport, type HeadRecord } from './evidence-chain.js';
import { EVIDENCE_COLUMNS, type EvidenceEvent, type EvidenceRow } from './evidence-log.js';
import { StateFold } from './evidence-state.js';

export type { BrokenLink, ChainReport } from './evidence-chain.js';

export interface EvidenceProgress {
  readonly events: number;
  readonly subjects: number;
}

/** How far verify's second pass got: occurrence rows compared with their chains so far. */
export interface RowProgress {
  readonly occurrences: number;
}

const PAGE = 1000;

interface HeadsRow {
  subject: string;
  head: string;
  count: number | string;
  last_seq: number | string;
}

async function readHeads(tx: SqlExecutor): Promise<Map<string, HeadRecord>> {
  // Migration 4 gave every event its chain position (idx); a log from before it cannot be walked.
  const current = await tx.get<{ id: number }>('SELECT id FROM schema_migrations WHERE id = 4');
  if (current === undefined) {
    throw new BatonError('usage', 'the evidence log predates migration 4: run `baton migrate` first');
  }
  const rows = await tx.all<HeadsRow>('SELECT subject, head, count, last_seq FROM evidence_heads');
  const heads = new Map<string, HeadRecord>();
  for (const r of rows)
    heads.set(r.subject, { head: r.head, count: Number(r.count), last_seq: Number(r.last_seq) });
  return heads;
}

/**
 * Walk the whole log in `seq` order, page by page inside one snapshot. `visit` sees each event
 * whose own content is intact (the export writes them as it goes).
 *
 * The walk starts at the lowest seq present, whatever it is: Baton assigns seq from 1, but every
 * chain reader orders by idx and sees a row at seq 0 or below too, so the walk must see it to
 * report it (ChainWalker.feed). It stops at a seq that is not a safe integer: JavaScript cannot
 * hold it exactly, so the next page (`seq > ` its rounded value) would return it again forever.
 * That row is reported and the walk ends there (AOC-REQ-004, -012: a problem is reported, never
 * skipped, and never hangs the server's GET /v1/evidence/verify).
 */
export async function walkEvidence(
  tx: SqlExecutor,
  visit?: (event: EvidenceEvent) => void,
  onProgress?: (p: EvidenceProgress) => void,
  /** Awaited after each page: the export waits there for a slow reader (backpressure). */
  afterPage?: () => Promise<void>,
): Promise<ChainWalker> {
  const heads = await readHeads(tx);
  const walker = new ChainWalker();
  let after: number | undefined; // undefined: from the first row, whatever its seq
  for (;;) {
    const rows =
      after === undefined
        ? await tx.all<EvidenceRow>(
            `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events ORDER BY seq LIMIT ${PAGE}`,
          )
        : await tx.all<EvidenceRow>(
            `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE seq > ? ORDER BY seq LIMIT ${PAGE}`,
            [after],
          );
    let unsafe = false;
    for (const row of rows) {
      const event = walker.feed(row);
      if (event !== undefined) visit?.(event);
      // feed reported it; every later row has a larger seq, no safer, and cannot be paged past.
      if (!Number.isSafeInteger(Number(row.seq))) {
        unsafe = true;
        break;
      }
    }
    const last = rows.at(-1);
    if (last === undefined || unsafe) break;
    after = Number(last.seq);
    onProgress?.({ events: walker.events, subjects: walker.chains().size });
    await afterPage?.();
  }
  walker.finish(heads);
  return walker;
}

/**
 * Verify every chain of the log, then the occurrence and authority rows against what their chains
 * record, in the same snapshot (AOC-REQ-004, -012); never throws for a problem, only reports it.
 */
export async function verifyEvidence(
  engine: StoreEngine,
  onProgress?: (p: EvidenceProgress) => void,
  /** Told after each page of occurrence rows: the second pass is as long as the first on a big store. */
  onRows?: (p: RowProgress) => void,
): Promise<ChainReport> {
  return engine.read(async (tx) => {
    const fold = new StateFold();
    const walker = await walkEvidence(tx, (e) => fold.feed(e), onProgress);
    await fold.compareRows(tx, onRows);
    for (const p of fold.problems) walker.problem(p);
    return walker.report();
  });
}

/** One subject's chain, checked by the same walker as `verifyEvidence` (no second verifier). */
export interface SubjectVerification extends ChainReport {
  /** seq → the hash the walker recomputed, for every event whose content and link are intact. */
  readonly verified: ReadonlyMap<number, string>;
}

/**
 * Walk one subject's chain against its recorded head: what `baton occurrences show` marks event
 * by event. An event is verified when its hash recomputes and it links to the event before it; a
 * chain whose last events were removed is reported (`ok: false`) with no event to mark. For an
 * occurrence, its row is compared with what the chain records too: a row edited behind Baton's
 * back makes the chain's mark not ok, though every event in it stays verified.
 */
export async function verifySubject(tx: SqlExecutor, subject: string): Promise<SubjectVerification> {
  const rows = await tx.all<EvidenceRow>(
    `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE subject = ? ORDER BY seq`,
    [subject],
  );
  const head = await tx.get<HeadsRow>(
    'SELECT subject, head, count, last_seq FROM evidence_heads WHERE subject = ?',
    [subject],
  );
  const walker = new ChainWalker();
  const fold = new StateFold();
  const verified = new Map<number, string>();
  for (const row of rows) {
    const event = walker.feed(row);
    if (event === undefined) continue;
    verified.set(event.seq, event.hash);
    fold.feed(event);
  }
  const heads = new Map<string, HeadRecord>();
  if (head !== undefined) {
    heads.set(subject, { head: head.head, count: Number(head.count), last_seq: Number(head.last_seq) });
  }
  walker.finish(heads);
  const id = occurrenceIdOf(subject);
  if (id !== undefined) await fold.compareOne(tx, id);
  for (const p of fold.problems) walker.problem(p);
  return { ...walker.report(), verified };
}
