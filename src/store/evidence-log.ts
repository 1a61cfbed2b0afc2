/**
 * The append-only evidence log (DESIGN.md §2). Every state change appends one event; the events
 * of one subject (an occurrence, a lineage, a mission…) form a hash chain:
 *   hash = digestJcs({ prev, subject, type, body, at, actor })
 * with `prev` the hash of the subject's previous event (null for its first), `body` the JSON value
 * (stored as its JCS text) and `at` integer Unix milliseconds. This module has no UPDATE or
 * DELETE of `evidence_events`: nothing Baton does rewrites history.
 */
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import { digestJcs, type Sha256Digest } from '../core/digest.js';
import type { JsonValue } from '../core/json.js';
import type { SqlExecutor, Transaction } from './engine.js';

export interface EvidenceInput {
  /** The chain this event belongs to, e.g. `occurrence:<id>`. */
  readonly subject: string;
  readonly type: string;
  readonly body: JsonValue;
  /** Unix time in milliseconds (an integer). */
  readonly at: number;
  /** Who caused the change (a principal id, `system`, …); never a credential. */
  readonly actor: string;
}

export interface EvidenceEvent extends EvidenceInput {
  /** Global, gap-free position in the log (1, 2, 3, …). */
  readonly seq: number;
  readonly prev: string | null;
  readonly hash: Sha256Digest;
}

/** A row as stored: `body` is JCS text; integer columns may come back as strings (pg BIGINT). */
export interface EvidenceRow {
  seq: number | string;
  subject: string;
  type: string;
  body: string;
  at: number | string;
  actor: string;
  prev: string | null;
  hash: string;
}

export const EVIDENCE_COLUMNS = 'seq, subject, type, body, at, actor, prev, hash';

const MAX_LABEL = 512;

/** The hash of an event: what links a chain (docs/store.md, "Hash input"). */
export function evidenceHash(e: Omit<EvidenceEvent, 'seq' | 'hash'>): Sha256Digest {
  return digestJcs({
    prev: e.prev,
    subject: e.subject,
    type: e.type,
    body: e.body,
    at: e.at,
    actor: e.actor,
  });
}

function checkLabel(name: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_LABEL) {
    throw new BatonError(
      'input_invalid',
      `evidence ${name} must be a non-empty string of at most ${MAX_LABEL}`,
      {
        member: name,
      },
    );
  }
}

function checkInput(e: EvidenceInput): void {
  checkLabel('subject', e.subject);
  checkLabel('type', e.type);
  checkLabel('actor', e.actor);
  if (!Number.isSafeInteger(e.at) || e.at < 0) {
    throw new BatonError('input_invalid', 'evidence at must be a non-negative integer of milliseconds', {
      member: 'at',
    });
  }
}

interface HeadRow {
  head: string;
}

/**
 * Append one event in the caller's transaction, so the event commits or rolls back with the state
 * change it records. The counter row is taken first: on PostgreSQL that lock orders all appenders,
 * so two transactions appending to the same subjects in different orders cannot deadlock.
 */
export async function appendEvidence(tx: Transaction, e: EvidenceInput): Promise<EvidenceEvent> {
  checkInput(e);
  const bodyText = canonicalize(e.body);
  const counter = await tx.get<{ last_seq: number | string }>(
    'UPDATE evidence_counter SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq',
  );
  if (counter === undefined) {
    throw new BatonError('store_corrupt', 'the evidence counter is missing (has `baton migrate` run?)');
  }
  const seq = Number(counter.last_seq);
  const head = await tx.get<HeadRow>(`SELECT head FROM evidence_heads WHERE subject = ?${tx.forUpdate}`, [
    e.subject,
  ]);
  const body = JSON.parse(bodyText) as JsonValue;
  const base = { subject: e.subject, type: e.type, body, at: e.at, actor: e.actor, prev: head?.head ?? null };
  const hash = evidenceHash(base);
  await tx.run(`INSERT INTO evidence_events (${EVIDENCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
    seq,
    e.subject,
    e.type,
    bodyText,
    e.at,
    e.actor,
    base.prev,
    hash,
  ]);
  if (head === undefined) {
    await tx.run('INSERT INTO evidence_heads (subject, head, count, last_seq) VALUES (?, ?, 1, ?)', [
      e.subject,
      hash,
      seq,
    ]);
  } else {
    const { changes } = await tx.run(
      'UPDATE evidence_heads SET head = ?, count = count + 1, last_seq = ? WHERE subject = ? AND head = ?',
      [hash, seq, e.subject, head.head],
    );
    if (changes !== 1) throw new BatonError('store_corrupt', 'the evidence head moved during an append');
  }
  return { ...base, seq, hash };
}

/** Decode a stored row; a body that is not JSON is corruption. */
export function eventFromRow(row: EvidenceRow): EvidenceEvent {
  let body: JsonValue;
  try {
    body = JSON.parse(row.body) as JsonValue;
  } catch (cause) {
    throw new BatonError(
      'store_corrupt',
      `evidence event ${row.seq} has a body that is not JSON`,
      {},
      { cause },
    );
  }
  return {
    seq: Number(row.seq),
    subject: row.subject,
    type: row.type,
    body,
    at: Number(row.at),
    actor: row.actor,
    prev: row.prev,
    hash: row.hash as Sha256Digest,
  };
}

/** The events of one subject, oldest first (not verified: `verifyEvidence` does that). */
export async function listEvidence(tx: SqlExecutor, subject: string): Promise<EvidenceEvent[]> {
  const rows = await tx.all<EvidenceRow>(
    `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE subject = ? ORDER BY seq`,
    [subject],
  );
  return rows.map(eventFromRow);
}
