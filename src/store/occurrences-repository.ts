/**
 * The SQL implementation of the occurrences port (src/occurrences/ports.ts), written once in
 * portable SQL for both engines (engine.ts). Locks are `tx.forUpdate`; version columns make every
 * update a compare-and-set; unique indexes (migration 002) answer uniqueness, through
 * `INSERT … ON CONFLICT DO NOTHING` so a refused insert never aborts a PostgreSQL transaction.
 */
import { BatonError } from '../core/errors.js';
import type { Sha256Digest } from '../core/digest.js';
import type { JsonObject } from '../core/json.js';
import { exclusiveKey } from '../occurrences/index.js';
import type {
  AuthorityRecord,
  CredentialRecord,
  DomainRecord,
  LineageRecord,
  LinkedIdentifier,
  OccurrenceInsert,
  OccurrenceRecord,
  OccurrencesRepository,
  OpenCounts,
  PlannedEvent,
  RegisteredProfile,
  EvidenceEvent,
} from '../occurrences/index.js';
import type { Transaction } from './engine.js';
import { appendEvidence } from './evidence-log.js';
import { OccurrencesReaderSql, type ProfileCache } from './occurrences-reader.js';
import * as rows from './occurrences-rows.js';

const { jcs, num } = rows;
const OCC_COLS = rows.OCCURRENCE_COLUMNS.join(', ');
const OCC_MARKS = rows.OCCURRENCE_COLUMNS.map(() => '?').join(', ');

export class OccurrencesRepositorySql extends OccurrencesReaderSql implements OccurrencesRepository {
  readonly #tx: Transaction;

  constructor(tx: Transaction, profiles?: ProfileCache) {
    super(tx, tx.forUpdate, profiles);
    this.#tx = tx;
  }

  async #changedOne(sql: string, params: Parameters<Transaction['run']>[1], what: string): Promise<void> {
    const { changes } = await this.#tx.run(sql, params);
    if (changes !== 1) throw new BatonError('conflict', `the ${what} changed concurrently; retry`);
  }

  lockDomain(): Promise<DomainRecord | undefined> {
    return this.domainRow(true);
  }

  async insertDomain(d: DomainRecord): Promise<void> {
    await this.#tx.run(
      `INSERT INTO aoc_domain (singleton, id, kid, public_key, limits, bypass_paths, created_at, updated_at, version)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [d.id, d.kid, d.publicKey, jcs(d.limits), jcs(d.bypassPaths), d.createdAt, d.updatedAt, d.version],
    );
  }

  updateDomain(d: DomainRecord, previousVersion: number): Promise<void> {
    return this.#changedOne(
      'UPDATE aoc_domain SET limits = ?, bypass_paths = ?, updated_at = ?, version = ? WHERE singleton = 1 AND version = ?',
      [jcs(d.limits), jcs(d.bypassPaths), d.updatedAt, d.version, previousVersion],
      'domain',
    );
  }

  async insertProfile(p: RegisteredProfile): Promise<boolean> {
    const { changes } = await this.#tx.run(
      `INSERT INTO aoc_profiles (id, version, digest, document, registered_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
      [p.id, p.version, p.digest, jcs(p.document), p.registeredAt],
    );
    return changes === 1;
  }

  lockLineage(id: string): Promise<LineageRecord | undefined> {
    return this.lineageRow(id, true);
  }

  async insertLineage(l: LineageRecord): Promise<void> {
    await this.#tx.run(
      'INSERT INTO aoc_lineages (id, generation, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?)',
      [l.id, l.generation, l.createdAt, l.updatedAt, l.version],
    );
  }

  updateLineage(l: LineageRecord, previousVersion: number): Promise<void> {
    // `generation < ?` in the WHERE clause: generations only grow, whatever the caller computed.
    return this.#changedOne(
      'UPDATE aoc_lineages SET generation = ?, updated_at = ?, version = ? WHERE id = ? AND version = ? AND generation < ?',
      [l.generation, l.updatedAt, l.version, l.id, previousVersion, l.generation],
      'lineage',
    );
  }

  async findCredential(secretDigest: Sha256Digest): Promise<CredentialRecord | undefined> {
    const r = await this.#tx.get<rows.CredentialRow>(
      'SELECT secret_digest, lineage, generation, issued_at, retired_at FROM aoc_credentials WHERE secret_digest = ?',
      [secretDigest],
    );
    return r && rows.credentialFromRow(r);
  }

  async insertCredential(c: CredentialRecord): Promise<boolean> {
    const { changes } = await this.#tx.run(
      `INSERT INTO aoc_credentials (secret_digest, lineage, generation, issued_at, retired_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
      [c.secretDigest, c.lineage, c.generation, c.issuedAt, c.retiredAt],
    );
    return changes === 1;
  }

  async retireCredentials(lineage: string, belowGeneration: number, at: number): Promise<void> {
    await this.#tx.run(
      'UPDATE aoc_credentials SET retired_at = ? WHERE lineage = ? AND generation < ? AND retired_at IS NULL',
      [at, lineage, belowGeneration],
    );
  }

  lockAuthority(id: string): Promise<AuthorityRecord | undefined> {
    return this.authorityRow(id, true);
  }

  async insertAuthority(a: AuthorityRecord): Promise<boolean> {
    const { changes } = await this.#tx.run(
      `INSERT INTO aoc_authorities (id, unit, total, reserved, consumed, created_at, updated_at, version)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [a.id, a.unit, a.total, a.reserved, a.consumed, a.createdAt, a.updatedAt, a.version],
    );
    return changes === 1;
  }

  updateAuthority(a: AuthorityRecord, previousVersion: number): Promise<void> {
    // Consumed never decreases (AOC-REQ-012): the statement itself refuses a lower value.
    return this.#changedOne(
      `UPDATE aoc_authorities SET reserved = ?, consumed = ?, updated_at = ?, version = ?
       WHERE id = ? AND version = ? AND consumed <= ?`,
      [a.reserved, a.consumed, a.updatedAt, a.version, a.id, previousVersion, a.consumed],
      'authority',
    );
  }

  lockOccurrence(id: string): Promise<OccurrenceRecord | undefined> {
    return this.occurrenceRow('id = ?', [id], true);
  }

  findByCreationBinding(scope: string, key: string): Promise<OccurrenceRecord | undefined> {
    return this.occurrenceRow('creation_scope = ? AND creation_key = ?', [scope, key], true);
  }

  async insertOccurrence(o: OccurrenceRecord, request: JsonObject): Promise<OccurrenceInsert> {
    const { changes } = await this.#tx.run(
      `INSERT INTO aoc_occurrences (${OCC_COLS}, request) VALUES (${OCC_MARKS}, ?) ON CONFLICT DO NOTHING`,
      [...rows.occurrenceValues(o), jcs(request)],
    );
    if (changes !== 1) {
      const taken = await this.findByCreationBinding(o.creationBinding.scope, o.creationBinding.key);
      return { ok: false, taken: taken === undefined ? 'native_key' : 'creation_binding' };
    }
    for (const l of o.linkedIds) {
      if (!(await this.addLinkedId(o, l))) return { ok: false, taken: 'linked_identifier', identifier: l };
    }
    return { ok: true };
  }

  async updateOccurrence(o: OccurrenceRecord, previousVersion: number): Promise<void> {
    // Only the mutable state is written; the provider reference only from NULL (write-once).
    await this.#changedOne(
      `UPDATE aoc_occurrences SET phase = ?, outcome = ?, effect = ?, conflict = ?, entered_at = ?,
         entered_generation = ?, released_at = ?, resolved_at = ?, linked_ids = ?, provider_reference = ?,
         updated_at = ?, version = ?
       WHERE id = ? AND version = ? AND (provider_reference IS NULL OR provider_reference = ?)`,
      [
        o.phase,
        o.outcome,
        o.effect,
        o.conflict ? 1 : 0,
        o.enteredAt,
        o.enteredGeneration,
        o.releasedAt,
        o.resolvedAt,
        jcs(o.linkedIds),
        o.provider.providerReference,
        o.updatedAt,
        o.version,
        o.id,
        previousVersion,
        o.provider.providerReference,
      ],
      'occurrence',
    );
  }

  async addLinkedId(o: Pick<OccurrenceRecord, 'id' | 'provider'>, l: LinkedIdentifier): Promise<boolean> {
    const { changes } = await this.#tx.run(
      `INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [o.id, l.type, l.value, exclusiveKey(o.provider, l)],
    );
    return changes === 1;
  }

  async getRequest(occurrenceId: string): Promise<JsonObject | undefined> {
    const r = await this.#tx.get<{ request: string }>('SELECT request FROM aoc_occurrences WHERE id = ?', [
      occurrenceId,
    ]);
    return r && rows.json<JsonObject>(r.request);
  }

  async countOpen(lineage: string): Promise<OpenCounts> {
    const list = await this.#tx.all<{ phase: string; mine: number | string | null; total: number | string }>(
      `SELECT phase, SUM(CASE WHEN lineage = ? THEN 1 ELSE 0 END) AS mine, COUNT(*) AS total
       FROM aoc_occurrences WHERE phase IN ('reserved', 'entered') GROUP BY phase`,
      [lineage],
    );
    const get = (phase: string, k: 'mine' | 'total'): number =>
      num(list.find((r) => r.phase === phase)?.[k] ?? 0);
    return {
      lineage: { pending: get('reserved', 'mine'), inFlight: get('entered', 'mine') },
      domain: { pending: get('reserved', 'total'), inFlight: get('entered', 'total') },
    };
  }

  async appendEvent(e: PlannedEvent & { at: number; actor: string }): Promise<EvidenceEvent> {
    return appendEvidence(this.#tx, {
      subject: e.subject,
      type: e.type,
      body: e.body,
      at: e.at,
      actor: e.actor,
    });
  }
}
