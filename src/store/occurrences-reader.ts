/** The read half of the occurrences port: plain SELECTs, locking only when asked (inside a write). */
import type {
  AuthorityRecord,
  CredentialRecord,
  DomainRecord,
  EvidenceEvent,
  LineageRecord,
  OccurrenceFilter,
  OccurrenceQuery,
  OccurrenceRecord,
  OccurrencesReader,
  Outcome,
  PositionedEvent,
  Phase,
  RegisteredProfile,
  StateCount,
} from '../occurrences/index.js';
import type { Sha256Digest } from '../core/digest.js';
import type { JsonObject } from '../core/json.js';
import type { SqlExecutor, SqlValue } from './engine.js';
import { listEvidence, pageEvidence } from './evidence-log.js';
import { readHandovers } from './handovers.js';
import * as rows from './occurrences-rows.js';

// open_stripe is the store's own bookkeeping (occurrences-limits.ts), not part of the record.
const OCC_COLS = `${rows.OCCURRENCE_COLUMNS.join(', ')}, open_stripe`;
const MAX_LIST = 10_000;

const EQUALS: readonly [keyof OccurrenceQuery, string][] = [
  ['phase', 'phase'],
  ['outcome', 'outcome'],
  ['lineage', 'lineage'],
  ['profileId', 'profile_id'],
  ['creationKey', 'creation_key'],
];

/**
 * The WHERE of one page. The cursor is written `created_at <= ? AND (created_at < ? OR id < ?)`
 * rather than as a row value: both engines then see a plain range on the index's created_at
 * column (SQLite does not use an index for a row-value inequality in every version).
 */
function pageWhere(q: OccurrenceQuery): { where: string[]; params: SqlValue[] } {
  const where: string[] = [];
  const params: SqlValue[] = [];
  for (const [member, column] of EQUALS) {
    const value = q[member];
    if (typeof value === 'string') {
      where.push(`${column} = ?`);
      params.push(value);
    }
  }
  if (q.createdFrom !== undefined) {
    where.push('created_at >= ?');
    params.push(q.createdFrom);
  }
  if (q.createdBefore !== undefined) {
    where.push('created_at < ?');
    params.push(q.createdBefore);
  }
  if (q.after !== undefined) {
    where.push('created_at <= ? AND (created_at < ? OR id < ?)');
    params.push(q.after.createdAt, q.after.createdAt, q.after.id);
  }
  return { where, params };
}

type OccurrenceRowWithStripe = rows.OccurrenceRow & { open_stripe: number | string | null };

const CREDENTIAL_COLUMNS = ['secret_digest', 'lineage', 'generation', 'issued_at', 'retired_at'] as const;
type CredentialAs = Record<`c_${(typeof CREDENTIAL_COLUMNS)[number]}`, string | number | null>;
const VIEW_CREDENTIAL = CREDENTIAL_COLUMNS.map((c) => `c.${c} AS c_${c}`).join(', ');
const VIEW_OCCURRENCE = [...rows.OCCURRENCE_COLUMNS, 'open_stripe'].map((c) => `o.${c}`).join(', ');

function credentialOf(r: CredentialAs): rows.CredentialRow {
  return {
    secret_digest: r.c_secret_digest,
    lineage: r.c_lineage,
    generation: r.c_generation,
    issued_at: r.c_issued_at,
    retired_at: r.c_retired_at,
  } as rows.CredentialRow;
}

interface Viewed {
  readonly digest: string;
  readonly credential: CredentialRecord | undefined;
  readonly occurrenceId: string;
  occurrence?: OccurrenceRecord;
  credentialTaken?: boolean;
  occurrenceTaken?: boolean;
}

/**
 * Registered profiles, by `id\u0000version`. Safe to keep across transactions and processes: a
 * profile row is insert-only under its primary key and pinned by its digest (never updated).
 */
export type ProfileCache = Map<string, RegisteredProfile>;

export class OccurrencesReaderSql implements OccurrencesReader {
  readonly #ex: SqlExecutor;
  readonly #forUpdate: string;
  readonly #profiles: ProfileCache;
  /** What prefetchView loaded, each answered once. */
  #viewed: Viewed | undefined;

  constructor(ex: SqlExecutor, forUpdate = '', profiles: ProfileCache = new Map()) {
    this.#ex = ex;
    this.#forUpdate = forUpdate;
    this.#profiles = profiles;
  }

  #lock(lock: boolean): string {
    return lock ? this.#forUpdate : '';
  }

  protected async domainRow(lock: boolean): Promise<DomainRecord | undefined> {
    const r = await this.#ex.get<rows.DomainRow>(
      `SELECT id, kid, public_key, limits, bypass_paths, created_at, updated_at, version FROM aoc_domain WHERE singleton = 1${this.#lock(lock)}`,
    );
    return r && rows.domainFromRow(r);
  }

  protected async lineageRow(id: string, lock: boolean): Promise<LineageRecord | undefined> {
    const r = await this.#ex.get<rows.LineageRow>(
      `SELECT id, generation, created_at, updated_at, version FROM aoc_lineages WHERE id = ?${this.#lock(lock)}`,
      [id],
    );
    return r && rows.lineageFromRow(r);
  }

  protected async authorityRow(id: string, lock: boolean): Promise<AuthorityRecord | undefined> {
    const r = await this.#ex.get<rows.AuthorityRow>(
      `SELECT id, unit, total, reserved, consumed, created_at, updated_at, version FROM aoc_authorities WHERE id = ?${this.#lock(lock)}`,
      [id],
    );
    return r && rows.authorityFromRow(r);
  }

  protected async occurrenceRow(
    where: string,
    params: SqlValue[],
    lock: boolean,
  ): Promise<OccurrenceRecord | undefined>;
  protected async occurrenceRow(
    where: string,
    params: SqlValue[],
    lock: boolean,
    withRequest: true,
  ): Promise<{ record: OccurrenceRecord; request: JsonObject } | undefined>;
  protected async occurrenceRow(
    where: string,
    params: SqlValue[],
    lock: boolean,
    withRequest = false,
  ): Promise<OccurrenceRecord | { record: OccurrenceRecord; request: JsonObject } | undefined> {
    const r = await this.#ex.get<OccurrenceRowWithStripe & { request?: string }>(
      `SELECT ${OCC_COLS}${withRequest ? ', request' : ''} FROM aoc_occurrences WHERE ${where}${this.#lock(lock)}`,
      params,
    );
    if (r === undefined) return undefined;
    const record = rows.occurrenceFromRow(r);
    this.seen(record, rows.numOrNull(r.open_stripe));
    return withRequest ? { record, request: rows.json<JsonObject>(r.request ?? '') } : record;
  }

  /**
   * The credential and the occurrence in ONE statement (issue 16 §2): a LEFT JOIN on the
   * occurrence's primary key, so no credential means no row, and a missing occurrence NULL columns.
   * Visibility is still the service's (refuseUnlessOwn): nothing here compares lineages.
   */
  async prefetchView(secretDigest: Sha256Digest, occurrenceId: string): Promise<void> {
    const r = await this.#ex.get<OccurrenceRowWithStripe & CredentialAs>(
      `SELECT ${VIEW_CREDENTIAL}, ${VIEW_OCCURRENCE} FROM aoc_credentials c
       LEFT JOIN aoc_occurrences o ON o.id = ? WHERE c.secret_digest = ?`,
      [occurrenceId, secretDigest],
    );
    const credential = r && rows.credentialFromRow(credentialOf(r));
    this.#viewed = { digest: secretDigest, credential, occurrenceId };
    if (r !== undefined && r.id !== null) {
      this.#viewed.occurrence = rows.occurrenceFromRow(r);
      this.seen(this.#viewed.occurrence, rows.numOrNull(r.open_stripe));
    }
  }

  /** An executor credential by its secret's digest (authentication inside the command, issue 16 §1). */
  async findCredential(secretDigest: Sha256Digest): Promise<CredentialRecord | undefined> {
    const v = this.#viewed;
    if (v?.digest === secretDigest && v.credentialTaken !== true) {
      v.credentialTaken = true;
      return v.credential;
    }
    const r = await this.#ex.get<rows.CredentialRow>(
      'SELECT secret_digest, lineage, generation, issued_at, retired_at FROM aoc_credentials WHERE secret_digest = ?',
      [secretDigest],
    );
    return r && rows.credentialFromRow(r);
  }

  /** Told of every occurrence read, with the stripe that counts it (the repository keeps them). */
  protected seen(_record: OccurrenceRecord, _stripe: number | null): void {}

  getDomain(): Promise<DomainRecord | undefined> {
    return this.domainRow(false);
  }

  async getProfile(id: string, version: string): Promise<RegisteredProfile | undefined> {
    const key = `${id}\u0000${version}`;
    const cached = this.#profiles.get(key);
    if (cached !== undefined) return cached;
    const r = await this.#ex.get<rows.ProfileRow>(
      'SELECT id, version, digest, document, registered_at FROM aoc_profiles WHERE id = ? AND version = ?',
      [id, version],
    );
    const profile = r && rows.profileFromRow(r);
    if (profile !== undefined && this.#profiles.size < 1_000) this.#profiles.set(key, profile);
    return profile;
  }

  getLineage(id: string): Promise<LineageRecord | undefined> {
    return this.lineageRow(id, false);
  }

  async pageCredentials(
    lineage: string,
    afterGeneration: number,
    limit: number,
  ): Promise<CredentialRecord[]> {
    // A keyset range over the unique (lineage, generation) index: about a page of entries read.
    const list = await this.#ex.all<rows.CredentialRow>(
      'SELECT secret_digest, lineage, generation, issued_at, retired_at FROM aoc_credentials WHERE lineage = ? AND generation > ? ORDER BY generation LIMIT ?',
      [lineage, afterGeneration, limit],
    );
    return list.map(rows.credentialFromRow);
  }

  async retiredGenerations(lineage: string): Promise<number[]> {
    const list = await this.#ex.all<{ generation: number | string }>(
      'SELECT generation FROM aoc_credentials WHERE lineage = ? AND retired_at IS NOT NULL ORDER BY generation',
      [lineage],
    );
    return list.map((row) => Number(row.generation));
  }

  getAuthority(id: string): Promise<AuthorityRecord | undefined> {
    return this.authorityRow(id, false);
  }

  async listProfiles(limit: number): Promise<RegisteredProfile[]> {
    const list = await this.#ex.all<rows.ProfileRow>(
      'SELECT id, version, digest, document, registered_at FROM aoc_profiles ORDER BY id, version LIMIT ?',
      [limit],
    );
    return list.map(rows.profileFromRow);
  }

  async listAuthorities(limit: number, after?: string): Promise<AuthorityRecord[]> {
    // Keyset over the primary key: a page after `after` costs the same wherever it starts.
    const list = await this.#ex.all<rows.AuthorityRow>(
      `SELECT id, unit, total, reserved, consumed, created_at, updated_at, version FROM aoc_authorities${after === undefined ? '' : ' WHERE id > ?'} ORDER BY id LIMIT ?`,
      after === undefined ? [limit] : [after, limit],
    );
    return list.map(rows.authorityFromRow);
  }

  getOccurrence(id: string): Promise<OccurrenceRecord | undefined> {
    const v = this.#viewed;
    // Answered from prefetchView only when its credential row was there (else nothing was joined).
    if (v?.occurrenceId === id && v.credential !== undefined && v.occurrenceTaken !== true) {
      v.occurrenceTaken = true;
      return Promise.resolve(v.occurrence);
    }
    return this.occurrenceRow('id = ?', [id], false);
  }

  async listOccurrences(filter: OccurrenceFilter): Promise<OccurrenceRecord[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.lineage !== undefined) {
      where.push('lineage = ?');
      params.push(filter.lineage);
    }
    if (filter.phases !== undefined) {
      where.push(`phase IN (${filter.phases.map(() => '?').join(', ') || 'NULL'})`);
      params.push(...filter.phases);
    }
    const limit = Math.min(Math.max(1, Math.trunc(filter.limit ?? MAX_LIST)), MAX_LIST);
    const list = await this.#ex.all<rows.OccurrenceRow>(
      `SELECT ${OCC_COLS} FROM aoc_occurrences${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at, id LIMIT ${limit}`,
      params,
    );
    return list.map(rows.occurrenceFromRow);
  }

  async pageOccurrences(query: OccurrenceQuery): Promise<OccurrenceRecord[]> {
    const { where, params } = pageWhere(query);
    const limit = Math.min(Math.max(1, Math.trunc(query.limit)), MAX_LIST);
    const list = await this.#ex.all<rows.OccurrenceRow>(
      `SELECT ${OCC_COLS} FROM aoc_occurrences${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      params,
    );
    return list.map(rows.occurrenceFromRow);
  }

  async countByState(): Promise<StateCount[]> {
    const list = await this.#ex.all<{
      phase: string;
      outcome: string;
      conflict: number | string;
      n: number | string;
    }>(
      'SELECT phase, outcome, conflict, COUNT(*) AS n FROM aoc_occurrences GROUP BY phase, outcome, conflict',
    );
    return list.map((r) => ({
      phase: r.phase as Phase,
      outcome: r.outcome as Outcome,
      conflict: rows.num(r.conflict) === 1,
      count: rows.num(r.n),
    }));
  }

  listEvents(subject: string): Promise<EvidenceEvent[]> {
    return listEvidence(this.#ex, subject);
  }

  async listHandovers(occurrenceId: string, lineage: string): Promise<EvidenceEvent[]> {
    return (await readHandovers(this.#ex, occurrenceId, lineage)).map(({ idx: _idx, ...event }) => event);
  }

  pageEvents(subject: string, after: number, limit: number): Promise<PositionedEvent[]> {
    return pageEvidence(this.#ex, subject, after, limit);
  }
}
