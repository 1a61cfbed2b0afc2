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
import { marks, type Transaction } from './engine.js';
import {
  appendEvidenceRun,
  bodyTexts,
  chainRun,
  checkRun,
  EVENT_ROW_PARAMS,
  insertEventRows,
  knownHeadsOf,
  type EvidenceInput,
  type Head,
} from './evidence-log.js';

/** Subjects per statement: 8 parameters an event row, far below SQLite's 32,766 and pg's 65,535. */
const CHUNK = 200;

interface PlannedHead {
  readonly subject: string;
  readonly prev: string | null;
  readonly hash: string;
  /** The run's last idx (the chain's new count), whose event's seq becomes the head's `last_seq`. */
  readonly count: number;
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
  const subjects = runs.map(checkRun);
  if (new Set(subjects).size !== subjects.length)
    throw new BatonError('internal', 'evidence runs name each subject once');
  const known = knownHeadsOf(tx);
  await readHeads(tx, known, subjects);
  const params: (string | number | null)[] = [];
  const heads: PlannedHead[] = [];
  runs.forEach((run, i) => {
    const head = known.get(subjects[i] as string) as Head;
    const chained = chainRun(run, bodyTexts(run), head);
    params.push(...chained.params);
    const last = chained.planned[chained.planned.length - 1] as (typeof chained.planned)[number];
    heads.push({
      subject: last.subject,
      prev: head.hash,
      hash: last.hash,
      count: last.idx,
    });
  });
  const events = runs.reduce((n, run) => n + run.length, 0);
  const seqs = await insertRows(tx, events, params, heads);
  await writeHeads(tx, heads, seqs);
  for (const h of heads) known.set(h.subject, { hash: h.hash, count: h.count });
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

/** Every event in one INSERT; the seq of each (subject, idx) as the database assigned it. */
async function insertRows(
  tx: Transaction,
  events: number,
  params: readonly (string | number | null)[],
  heads: readonly PlannedHead[],
): Promise<Map<string, number>> {
  const { seqs } = await insertEventRows(tx, events, params);
  // This transaction read or wrote every head it chains from, under the writer lock (SQLite) or
  // the head rows' locks: a position already taken is corruption, not a race (fail closed).
  if (seqs === undefined)
    throw new BatonError('store_corrupt', 'the evidence chain already has events at these positions', {
      subjects: heads.map((h) => h.subject).join(' '),
    });
  // Each row's subject and idx are its first two parameters (chainRun).
  return new Map(
    seqs.map((seq, i) => [
      `${String(params[i * EVENT_ROW_PARAMS])}\u0000${Number(params[i * EVENT_ROW_PARAMS + 1])}`,
      seq,
    ]),
  );
}

async function writeHeads(
  tx: Transaction,
  heads: readonly PlannedHead[],
  seqs: Map<string, number>,
): Promise<void> {
  const seqOf = (h: PlannedHead): number => {
    const seq = seqs.get(`${h.subject}\u0000${h.count}`);
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
