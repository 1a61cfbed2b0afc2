/**
 * The continuity record store (B6, OBS-08): insert-only. The same (producer, record_id) with the
 * same bytes is a no-op; with other bytes a 409 `observation_record_conflict`; a correction is a new
 * record whose `supersedes` names a stored predecessor, which never changes, and that has no
 * correction yet (a second one is the same 409, rule `single_successor`), and that restates it
 * (`checkCorrection`: same scope, type, time and order, new evidence; else 400 `correction_unbound`). Every stored record
 * appends `observation_recorded` to its own evidence chain (`observation:<producer>/<record_id>`),
 * a correction also `observation_corrected` to its predecessor's.
 */
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import { digestBytes } from '../core/digest.js';
import { parseRfc3339 } from '../core/time.js';
import {
  checkCorrection,
  LOCAL_PRODUCER,
  producerNamespace,
  readRecordValue,
  type ObservationRecord,
} from '../observations/index.js';
import type { SqlExecutor, Transaction } from './engine.js';
import { appendEvidence } from './evidence-log.js';

/** The namespace of a record that names no producer (allowed locally, B2). */
export { LOCAL_PRODUCER };

export interface StoredRecord {
  readonly producer: string;
  readonly record_id: string;
  readonly digest: string;
  readonly record: ObservationRecord;
  readonly signed: boolean;
  readonly created_at: number;
}

interface RecordRow {
  producer: string;
  record_id: string;
  digest: string;
  body: string;
  envelope: string | null;
  created_at: number | string;
}

const COLUMNS = 'producer, record_id, digest, body, envelope, created_at';
export const observationSubject = (producer: string, id: string): string => `observation:${producer}/${id}`;

function fromRow(row: RecordRow): StoredRecord {
  return {
    producer: row.producer,
    record_id: row.record_id,
    digest: row.digest,
    record: JSON.parse(row.body) as ObservationRecord,
    signed: row.envelope !== null,
    created_at: Number(row.created_at),
  };
}

export interface InsertResult {
  readonly status: 'created' | 'exists';
  readonly stored: StoredRecord;
}

export async function getStoredRecord(
  ex: SqlExecutor,
  producer: string,
  id: string,
): Promise<StoredRecord | undefined> {
  const row = await ex.get<RecordRow>(
    `SELECT ${COLUMNS} FROM cop_records WHERE producer = ? AND record_id = ?`,
    [producer, id],
  );
  return row === undefined ? undefined : fromRow(row);
}

/** The record that corrects `id` (its `supersedes` names it), the earliest if a fork predates migration 032. */
async function successorOf(ex: SqlExecutor, producer: string, id: string): Promise<string | undefined> {
  const row = await ex.get<{ record_id: string }>(
    'SELECT record_id FROM cop_records WHERE producer = ? AND supersedes = ? ORDER BY created_at, record_id LIMIT 1',
    [producer, id],
  );
  return row?.record_id;
}

/**
 * OBS-08 ¶19: a correction replaces its predecessor, so a record has one successor. A second
 * correction of it would count beside the first (or disagree with it with nothing to say which
 * stands): refused, 409 `observation_record_conflict`, nothing stored. Correct the correction
 * instead (`supersedes` naming `successor`).
 */
function refuseSecondSuccessor(producer: string, id: string, supersedes: string, successor: string): never {
  throw new BatonError(
    'observation_record_conflict',
    `${supersedes} already has a correction (${successor}): a correction supersedes the latest record of its chain`,
    {
      rule: 'single_successor',
      path: '$.supersedes',
      producer,
      record_id: id,
      supersedes,
      successor,
    },
  );
}

/** The digest a record is stored under: SHA-256 of its JCS (envelope included). */
export const recordDigest = (record: ObservationRecord): string => digestBytes(canonicalize(record));

/** Store a record (already read and, if it crossed a boundary, verified) in the caller's transaction. */
export async function insertRecord(
  tx: Transaction,
  record: ObservationRecord,
  now: number,
  actor: string,
): Promise<InsertResult> {
  readRecordValue(record);
  const producer = producerNamespace(record);
  const body = canonicalize(record);
  const digest = digestBytes(body);
  const supersedes = record.supersedes ?? null;
  if (supersedes !== null) {
    const predecessor = await getStoredRecord(tx, producer, supersedes);
    if (predecessor === undefined) {
      throw new BatonError(
        'observation_record_invalid',
        '$.supersedes names no stored record of this producer',
        {
          rule: 'supersedes_unknown',
          path: '$.supersedes',
        },
      );
    }
    // Stored already: the same bytes again is a no-op, other bytes a conflict (below), even for a
    // correction of a fork stored before migration 032.
    if ((await getStoredRecord(tx, producer, record.record_id)) === undefined) {
      // Draft ¶39, ¶107: it restates its predecessor with new evidence, never rewrites it.
      checkCorrection(predecessor.record, record);
      const successor = await successorOf(tx, producer, supersedes);
      if (successor !== undefined) refuseSecondSuccessor(producer, record.record_id, supersedes, successor);
    }
  }
  // `successor_of` (migration 032) is `supersedes` under a unique index: of two corrections of one
  // record that both read "no successor yet" (two transactions at once on PostgreSQL), the second
  // INSERT waits for the first and, once it committed, does nothing (answered below).
  const { changes } = await tx.run(
    `INSERT INTO cop_records (producer, record_id, digest, body, event_type, scope_id, observed_at, supersedes, analysis_revision, envelope, created_at, successor_of)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [
      producer,
      record.record_id,
      digest,
      body,
      record.event_type,
      record.scope_id,
      parseRfc3339(record.observed_at),
      supersedes,
      record.analysis_revision ?? null,
      record.evidence_envelope?.value ?? null,
      now,
      supersedes,
    ],
  );
  if (changes === 0) {
    const existing = await getStoredRecord(tx, producer, record.record_id);
    if (existing === undefined) {
      // Not its id: the single-successor index. Another correction of the predecessor committed.
      const successor = supersedes === null ? undefined : await successorOf(tx, producer, supersedes);
      if (supersedes === null || successor === undefined)
        throw new BatonError('internal', 'a conflicting record vanished');
      refuseSecondSuccessor(producer, record.record_id, supersedes, successor);
    }
    if (existing.digest !== digest) {
      throw new BatonError(
        'observation_record_conflict',
        'this producer already stored other bytes under this record_id',
        {
          producer,
          record_id: record.record_id,
        },
      );
    }
    return { status: 'exists', stored: existing };
  }
  const subject = observationSubject(producer, record.record_id);
  await appendEvidence(tx, {
    subject,
    type: 'observation_recorded',
    body: { digest, event_type: record.event_type, supersedes },
    at: now,
    actor,
  });
  if (supersedes !== null) {
    await appendEvidence(tx, {
      subject: observationSubject(producer, supersedes),
      type: 'observation_corrected',
      body: { by: record.record_id, digest },
      at: now,
      actor,
    });
  }
  // What was just inserted (its JCS is `body`), without reading it back: a query and a parse per record.
  const stored: StoredRecord = {
    producer,
    record_id: record.record_id,
    digest,
    record,
    signed: record.evidence_envelope !== undefined,
    created_at: now,
  };
  return { status: 'created', stored };
}

/** A record and the corrections appended after it, oldest first (the original is never changed). */
export async function recordWithCorrections(
  ex: SqlExecutor,
  producer: string,
  id: string,
): Promise<{ record: StoredRecord; corrections: StoredRecord[] } | undefined> {
  const record = await getStoredRecord(ex, producer, id);
  if (record === undefined) return undefined;
  const corrections: StoredRecord[] = [];
  const seen = new Set([id]);
  for (let current = id; ;) {
    const next = await ex.get<RecordRow>(
      `SELECT ${COLUMNS} FROM cop_records WHERE producer = ? AND supersedes = ? ORDER BY created_at, record_id`,
      [producer, current],
    );
    if (next === undefined || seen.has(next.record_id)) break;
    seen.add(next.record_id);
    corrections.push(fromRow(next));
    current = next.record_id;
  }
  return { record, corrections };
}

export interface RecordFilter {
  readonly scope?: string;
  readonly eventType?: string;
  readonly from?: number;
  readonly to?: number;
}

export async function listStoredRecords(ex: SqlExecutor, filter: RecordFilter = {}): Promise<StoredRecord[]> {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.scope !== undefined) {
    where.push('scope_id = ?');
    params.push(filter.scope);
  }
  if (filter.eventType !== undefined) {
    where.push('event_type = ?');
    params.push(filter.eventType);
  }
  if (filter.from !== undefined) {
    where.push('observed_at >= ?');
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    where.push('observed_at <= ?');
    params.push(filter.to);
  }
  const rows = await ex.all<RecordRow>(
    `SELECT ${COLUMNS} FROM cop_records ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY observed_at, producer, record_id`,
    params,
  );
  return rows.map(fromRow);
}

export interface StoredArtifact {
  readonly locator: string;
  readonly digest: string;
  readonly representation: string;
  readonly mediaType: string;
  readonly bytes: Buffer;
}

export async function putArtifact(
  tx: Transaction,
  a: { locator: string; representation: string; mediaType: string; bytes: Uint8Array; redactedOf?: string },
  now: number,
): Promise<void> {
  const digest = digestBytes(a.bytes);
  const { changes } = await tx.run(
    `INSERT INTO cop_artifacts (locator, digest, representation, media_type, bytes, redacted_of, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [
      a.locator,
      digest,
      a.representation,
      a.mediaType,
      Buffer.from(a.bytes).toString('base64url'),
      a.redactedOf ?? null,
      now,
    ],
  );
  if (changes === 0) {
    const existing = await getArtifact(tx, a.locator);
    if (existing?.digest !== digest) {
      throw new BatonError('observation_record_conflict', 'another artifact is stored at this locator', {
        locator: a.locator,
      });
    }
  }
}

export async function getArtifact(ex: SqlExecutor, locator: string): Promise<StoredArtifact | undefined> {
  const row = await ex.get<{
    locator: string;
    digest: string;
    representation: string;
    media_type: string;
    bytes: string;
  }>('SELECT locator, digest, representation, media_type, bytes FROM cop_artifacts WHERE locator = ?', [
    locator,
  ]);
  return row === undefined
    ? undefined
    : {
        locator: row.locator,
        digest: row.digest,
        representation: row.representation,
        mediaType: row.media_type,
        bytes: Buffer.from(row.bytes, 'base64url'),
      };
}

export async function putProfile(
  tx: Transaction,
  p: { id: string; version: string; digest: string; body: string },
  now: number,
): Promise<'created' | 'exists'> {
  const { changes } = await tx.run(
    'INSERT INTO cop_profiles (id, version, digest, body, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
    [p.id, p.version, p.digest, p.body, now],
  );
  if (changes > 0) return 'created';
  const row = await tx.get<{ digest: string }>(
    'SELECT digest FROM cop_profiles WHERE id = ? AND version = ?',
    [p.id, p.version],
  );
  if (row?.digest !== p.digest) {
    throw new BatonError(
      'observation_record_conflict',
      'this profile id and version are pinned to another document',
      {
        id: p.id,
        version: p.version,
      },
    );
  }
  return 'exists';
}

export async function getProfileBody(
  ex: SqlExecutor,
  id: string,
  version?: string,
): Promise<string | undefined> {
  const row = await ex.get<{ body: string }>(
    version === undefined
      ? 'SELECT body FROM cop_profiles WHERE id = ? ORDER BY created_at DESC LIMIT 1'
      : 'SELECT body FROM cop_profiles WHERE id = ? AND version = ?',
    version === undefined ? [id] : [id, version],
  );
  return row?.body;
}

/**
 * A conflict the projector found (B3.2, OBS-13 ¶26): the stored record keeps its bytes, and this
 * row says the evidence log now derives `derivedDigest` for it. Idempotent on (producer, record_id,
 * derived digest); insert-only (migration 027).
 */
export async function recordConflict(
  tx: Transaction,
  c: { producer: string; record_id: string; storedDigest: string; derivedDigest: string; actor: string },
  now: number,
): Promise<void> {
  await tx.run(
    `INSERT INTO cop_conflicts (producer, record_id, stored_digest, derived_digest, detected_at, actor)
     VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [c.producer, c.record_id, c.storedDigest, c.derivedDigest, now, c.actor],
  );
}

/** Every record a projection ever found contradicted by the evidence log, once each. */
export async function listConflicts(
  ex: SqlExecutor,
): Promise<{ readonly producer: string; readonly record_id: string }[]> {
  return ex.all<{ producer: string; record_id: string }>(
    'SELECT DISTINCT producer, record_id FROM cop_conflicts ORDER BY producer, record_id',
  );
}

/** Whether a projection ever found this record contradicted by the evidence log. */
export async function isContradicted(ex: SqlExecutor, producer: string, id: string): Promise<boolean> {
  const row = await ex.get<{ n: number }>(
    'SELECT 1 AS n FROM cop_conflicts WHERE producer = ? AND record_id = ? LIMIT 1',
    [producer, id],
  );
  return row !== undefined;
}
