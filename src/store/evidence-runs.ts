/**
 * Runs of SEVERAL subjects appended together (a poll answer's evidence: one run per Mission,
 * issue 11 §8): the same chains, hashes and rows as `appendEvidenceRun` per subject, in a fixed
 * number of statements instead of three per subject — one read of the heads this transaction does
 * not know yet, one multi-row INSERT of every event, one compare-and-set UPDATE of the heads that
 * existed and one INSERT of the new ones (each in chunks of at most CHUNK subjects).
 * Where the database runs Baton's server functions (PostgreSQL, migration 012) each run is still
 * one `baton_append_evidence` call, as `appendEvidenceRun` makes it.
 */
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import type { Transaction } from './engine.js';
import {
  appendEvidenceRun,
  checkInput,
  evidenceHashOfText,
  knownHeadsOf,
  type EvidenceInput,
  type Head,
} from './evidence-log.js';

/** Subjects per statement: 8 parameters an event row, far below SQLite's 32,766 and pg's 65,535. */
const CHUNK = 200;

interface PlannedRow {
  readonly subject: string;
  readonly idx: number;
  readonly params: readonly (string | number | null)[];
}

interface PlannedHead {
  readonly subject: string;
  readonly prev: string | null;
  readonly hash: string;
  readonly count: number;
  /** The idx of the run's last event, whose seq becomes the head's `last_seq`. */
  readonly lastIdx: number;
}

export async function appendEvidenceRuns(
  tx: Transaction,
  runs: readonly (readonly EvidenceInput[])[],
): Promise<void> {
  const nonEmpty = runs.filter((r) => r.length > 0);
  if (tx.serverFunctions === true || nonEmpty.length < 2) {
    for (const run of nonEmpty) await appendEvidenceRun(tx, run);
    return;
  }
  for (let i = 0; i < nonEmpty.length; i += CHUNK) await appendChunk(tx, nonEmpty.slice(i, i + CHUNK));
}

async function appendChunk(tx: Transaction, runs: readonly (readonly EvidenceInput[])[]): Promise<void> {
  const subjects = runs.map(subjectOf);
  if (new Set(subjects).size !== subjects.length)
    throw new BatonError('internal', 'evidence runs name each subject once');
  const known = knownHeadsOf(tx);
  await readHeads(tx, known, subjects);
  const rows: PlannedRow[] = [];
  const heads: PlannedHead[] = [];
  for (const run of runs) plan(run, known.get(subjectOf(run)) as Head, rows, heads);
  const seqs = await insertRows(tx, rows);
  await writeHeads(tx, heads, seqs);
  for (const h of heads) known.set(h.subject, { hash: h.hash, count: h.count });
}

function subjectOf(run: readonly EvidenceInput[]): string {
  const first = run[0] as EvidenceInput;
  for (const e of run) {
    checkInput(e);
    if (e.subject !== first.subject) throw new BatonError('internal', 'an evidence run has one subject');
  }
  return first.subject;
}

/** The heads this transaction does not know yet, in one SELECT (locked on PostgreSQL). */
async function readHeads(
  tx: Transaction,
  known: Map<string, Head>,
  subjects: readonly string[],
): Promise<void> {
  const unknown = subjects.filter((s) => !known.has(s));
  if (unknown.length === 0) return;
  const found = await tx.all<{ subject: string; head: string; count: number | string }>(
    `SELECT subject, head, count FROM evidence_heads WHERE subject IN (${marks(unknown.length)})${tx.forUpdate}`,
    unknown,
  );
  for (const s of unknown) known.set(s, { hash: null, count: 0 });
  for (const r of found) known.set(r.subject, { hash: r.head, count: Number(r.count) });
}

function plan(run: readonly EvidenceInput[], head: Head, rows: PlannedRow[], heads: PlannedHead[]): void {
  let prev = head.hash;
  run.forEach((e, i) => {
    const idx = head.count + 1 + i;
    const text = canonicalize(e.body);
    const hash = evidenceHashOfText(
      { prev, subject: e.subject, type: e.type, at: e.at, actor: e.actor },
      text,
    );
    rows.push({ subject: e.subject, idx, params: [e.subject, idx, e.type, text, e.at, e.actor, prev, hash] });
    prev = hash;
  });
  const last = rows[rows.length - 1] as PlannedRow;
  heads.push({
    subject: last.subject,
    prev: head.hash,
    hash: prev as string,
    count: last.idx,
    lastIdx: last.idx,
  });
}

/** Every event in one INSERT; the seq of each (subject, idx) as the database assigned it. */
async function insertRows(tx: Transaction, rows: readonly PlannedRow[]): Promise<Map<string, number>> {
  const sql = `INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash) VALUES ${Array(rows.length).fill('(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
     ON CONFLICT DO NOTHING RETURNING seq, subject, idx`;
  const back = await tx.all<{ seq: number | string; subject: string; idx: number | string }>(
    sql,
    rows.flatMap((r) => r.params),
  );
  // This transaction read or wrote every head it chains from, under the writer lock (SQLite) or
  // the head rows' locks: a position already taken is corruption, not a race (fail closed).
  if (back.length !== rows.length)
    throw new BatonError('store_corrupt', 'the evidence chain already has events at these positions', {
      subject: rows.find((r) => !back.some((b) => b.subject === r.subject && Number(b.idx) === r.idx))
        ?.subject,
    });
  return new Map(back.map((b) => [`${b.subject}\u0000${Number(b.idx)}`, Number(b.seq)]));
}

async function writeHeads(
  tx: Transaction,
  heads: readonly PlannedHead[],
  seqs: Map<string, number>,
): Promise<void> {
  const seqOf = (h: PlannedHead): number => {
    const seq = seqs.get(`${h.subject}\u0000${h.lastIdx}`);
    if (seq === undefined)
      throw new BatonError('store_corrupt', 'an appended event came back without its seq');
    return seq;
  };
  const fresh = heads.filter((h) => h.prev === null);
  const moved = heads.filter((h) => h.prev !== null);
  if (fresh.length > 0)
    await tx.run(
      `INSERT INTO evidence_heads (subject, head, count, last_seq) VALUES ${Array(fresh.length).fill('(?, ?, ?, ?)').join(', ')}`,
      fresh.flatMap((h) => [h.subject, h.hash, h.count, seqOf(h)]),
    );
  if (moved.length === 0) return;
  // A compare-and-set per head, all in one statement (VALUES names its columns column1…5).
  const { changes } = await tx.run(
    `UPDATE evidence_heads SET head = v.column3, count = v.column4, last_seq = v.column5
       FROM (VALUES ${Array(moved.length).fill('(?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT))').join(', ')}) AS v
      WHERE evidence_heads.subject = v.column1 AND evidence_heads.head = v.column2`,
    moved.flatMap((h) => [h.subject, h.prev, h.hash, h.count, seqOf(h)]),
  );
  if (changes !== moved.length)
    throw new BatonError('store_corrupt', 'the evidence head moved during an append');
}

function marks(n: number): string {
  return Array(n).fill('?').join(', ');
}
