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
  Phase,
  PlannedEvent,
  RefusedDeliveryMemory,
  ReportKind,
  RegisteredProfile,
  HeldWorkItems,
  MissionGateView,
} from '../occurrences/index.js';
import { deferred, type Transaction } from './engine.js';
import { NO_HARNESS, type MissionGate } from './missions-gate.js';
import { appendEvidenceRun, deferEvidenceRun, startsChain, type EvidenceInput } from './evidence-log.js';
import { appendEvidenceRuns } from './evidence-runs.js';
import { insertHandovers } from './handovers.js';
import { domainLimitError, OpenStripes, preferredStripe } from './occurrences-limits.js';
import { OccurrencesReaderSql, type ProfileCache } from './occurrences-reader.js';
import { asStored, Held, type RawCounts } from './occurrences-held.js';
import * as pf from './occurrences-prefetch.js';
import * as rows from './occurrences-rows.js';
import { AUTHORITY_UPDATE, PendingAuthorityUpdates, PendingInserts } from './occurrences-fold.js';

const { jcs, num } = rows;
const OCC_COLS = rows.OCCURRENCE_COLUMNS.join(', ');
const OCC_MARKS = rows.OCCURRENCE_COLUMNS.map(() => '?').join(', ');

/** What this transaction knows of an occurrence: its phase and the stripe that counts it. */
interface OpenState {
  readonly phase: Phase;
  readonly stripe: number | null;
}

/** A planned event as the log appends it, its assembled text kept where it has one. */
function evidenceInput(e: PlannedEvent, at: number, actor: string): EvidenceInput {
  return {
    subject: e.subject,
    type: e.type,
    body: e.body,
    at,
    actor,
    ...(e.text !== undefined && { text: e.text }),
  };
}

export class OccurrencesRepositorySql extends OccurrencesReaderSql implements OccurrencesRepository {
  readonly #tx: Transaction;
  readonly #stripes: OpenStripes;
  /** The domain as read in this transaction: its limits bound the stripe claims. */
  #domain: DomainRecord | undefined;
  readonly #open = new Map<string, OpenState>();
  /** Requests read or written in this transaction (immutable once inserted). */
  readonly #requests = new Map<string, JsonObject>();

  readonly #gate: MissionGate;
  /** What `prefetchEntry` loaded, each answered once (occurrences-prefetch.ts). */
  readonly #prefetched: pf.Prefetched = new Map();
  /** Rows this transaction locked or wrote, as they now stand (occurrences-held.ts). */
  readonly #held = new Held();
  #domainRead = false;
  /** Occurrences this transaction inserted, and those it linked to a work item (a gate row). */
  readonly #inserted = new Set<string>();
  readonly #linked = new Set<string>();
  /** Deferred occurrence INSERTs a later UPDATE may still be written into (occurrences-fold.ts). */
  readonly #pendingInserts = new PendingInserts();
  /** Deferred authority UPDATEs a later one may still be written into (occurrences-fold.ts). */
  readonly #pendingAuthorities = new PendingAuthorityUpdates();
  /**
   * With `holdEvidence` (the unit of work's repository, which calls `flushEvidence` when the
   * command is done): the events appended so far, one run per subject in order, written together
   * at the flush — a create-and-enter's two runs on its occurrence's chain as ONE insert and ONE
   * head write instead of two each (issue 16 §1). Undefined: each run is written when appended.
   */
  #heldRuns: Map<string, EvidenceInput[]> | undefined;

  constructor(
    tx: Transaction,
    profiles?: ProfileCache,
    gate: MissionGate = NO_HARNESS,
    holdEvidence = false,
  ) {
    super(tx, tx.forUpdate, profiles);
    this.#tx = tx;
    this.#stripes = new OpenStripes(tx);
    this.#gate = gate;
    // Where the engine defers writes (PostgreSQL) each run already leaves with the next call.
    if (holdEvidence && tx.deferrable !== true) this.#heldRuns = new Map();
  }

  /** Write the held runs (see `#heldRuns`); the unit of work calls it before COMMIT. */
  async flushEvidence(): Promise<void> {
    const held = this.#heldRuns;
    if (held === undefined || held.size === 0) return;
    this.#heldRuns = new Map();
    await appendEvidenceRuns(this.#tx, [...held.values()]);
  }

  /** Mission build spec A3.6: locks the mission view and item after lineage and occurrence. */
  checkMissionGate(occurrenceId: string, actor: string): Promise<MissionGateView | undefined> {
    // An occurrence inserted by this transaction is known to no other until it commits, so it has
    // a gate row only if this transaction linked one: create-and-enter's entry reads nothing here
    // (issue 16 §1: no statement reads what the transaction already knows).
    if (this.#inserted.has(occurrenceId) && !this.#linked.has(occurrenceId))
      return Promise.resolve(undefined);
    return this.#gate.check(this.#tx, occurrenceId, actor);
  }

  heldWorkItems(lineage: string): Promise<HeldWorkItems> {
    return this.#gate.held(this.#tx, lineage);
  }

  linkWorkItem(occurrenceId: string, workItemId: string, lineage: string): Promise<void> {
    this.#linked.add(occurrenceId);
    return this.#gate.link(this.#tx, occurrenceId, workItemId, lineage);
  }

  protected override seen(record: OccurrenceRecord, stripe: number | null): void {
    this.#open.set(record.id, { phase: record.phase, stripe });
  }

  override async getDomain(): Promise<DomainRecord | undefined> {
    if (this.#domainRead) return this.#domain;
    const p = pf.take<DomainRecord>(this.#prefetched, pf.key.domain);
    this.#domain = p.found ? p.value : await super.getDomain();
    this.#domainRead = true;
    return this.#domain;
  }

  /**
   * PostgreSQL after migration 012: provider entry's reads and locks in one call (issue 16 §2);
   * elsewhere nothing, and each read goes to the database as it comes.
   */
  async prefetchEntry(credentialDigest: Sha256Digest, occurrenceId: string): Promise<void> {
    if (this.#tx.serverFunctions !== true) return;
    await pf.prefetchEntry(this.#tx, this.#prefetched, credentialDigest, occurrenceId);
    this.#stripes.seen(pf.stripesSeenIn(this.#prefetched));
  }

  /** As `prefetchEntry`, for an executor-reported observation (migration 014's `baton_lock_observe_head`). */
  async prefetchObserve(credentialDigest: Sha256Digest, occurrenceId: string): Promise<void> {
    if (this.#tx.deferrable !== true) return;
    await pf.prefetchObserve(this.#tx, this.#prefetched, credentialDigest, occurrenceId);
  }

  /** As `prefetchEntry`, for a plain create + reserve + bind (`baton_lock_create`). */
  async prefetchCreate(
    credentialDigest: Sha256Digest,
    creationKey: string,
    authorityId: string,
  ): Promise<void> {
    if (this.#tx.serverFunctions !== true) return;
    await pf.prefetchCreate(this.#tx, this.#prefetched, credentialDigest, creationKey, authorityId);
    this.#stripes.seen(pf.stripesSeenIn(this.#prefetched));
  }

  override async findCredential(secretDigest: Sha256Digest): Promise<CredentialRecord | undefined> {
    const held = this.#held.credentials;
    if (held.has(secretDigest)) return held.get(secretDigest);
    const p = pf.take<CredentialRecord>(this.#prefetched, pf.key.credential(secretDigest));
    const found = p.found ? p.value : await super.findCredential(secretDigest);
    held.set(secretDigest, found);
    return found;
  }

  async #limits(): Promise<DomainRecord['limits']> {
    const domain = this.#domain ?? (await this.getDomain());
    if (domain === undefined)
      throw new BatonError('domain_not_found', 'the coordination domain is not configured');
    return domain.limits;
  }

  async #changedOne(sql: string, params: Parameters<Transaction['run']>[1], what: string): Promise<void> {
    // Deferred where the engine can (one call per transition, docs/store.md): a version that moved
    // then re-runs the transaction statement by statement, which answers `conflict` here.
    if (deferred(this.#tx, sql, params ?? [], { expect: 1 })) return;
    const { changes } = await this.#tx.run(sql, params);
    if (changes !== 1) throw new BatonError('conflict', `the ${what} changed concurrently; retry`);
  }

  async lockDomain(): Promise<DomainRecord | undefined> {
    this.#domain = await this.domainRow(true);
    this.#domainRead = true;
    return this.#domain;
  }

  async insertDomain(d: DomainRecord): Promise<void> {
    this.#domainRead = false;
    await this.#tx.run(
      `INSERT INTO aoc_domain (singleton, id, kid, public_key, limits, bypass_paths, created_at, updated_at, version)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [d.id, d.kid, d.publicKey, jcs(d.limits), jcs(d.bypassPaths), d.createdAt, d.updatedAt, d.version],
    );
  }

  updateDomain(d: DomainRecord, previousVersion: number): Promise<void> {
    this.#domainRead = false;
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

  async lockLineage(id: string): Promise<LineageRecord | undefined> {
    const held = this.#held.lineages.get(id);
    if (held !== undefined) return held;
    const p = pf.take<LineageRecord>(this.#prefetched, pf.key.lineage(id));
    const found = p.found ? p.value : await this.lineageRow(id, true);
    if (found !== undefined) this.#held.lineages.set(id, found);
    return found;
  }

  async insertLineage(l: LineageRecord): Promise<void> {
    await this.#tx.run(
      'INSERT INTO aoc_lineages (id, generation, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?)',
      [l.id, l.generation, l.createdAt, l.updatedAt, l.version],
    );
    this.#held.lineages.set(l.id, l);
  }

  async updateLineage(l: LineageRecord, previousVersion: number): Promise<void> {
    this.#held.lineages.delete(l.id);
    // `generation < ?` in the WHERE clause: generations only grow, whatever the caller computed.
    await this.#changedOne(
      'UPDATE aoc_lineages SET generation = ?, updated_at = ?, version = ? WHERE id = ? AND version = ? AND generation < ?',
      [l.generation, l.updatedAt, l.version, l.id, previousVersion, l.generation],
      'lineage',
    );
    this.#held.lineages.set(l.id, l);
  }

  async insertCredential(c: CredentialRecord): Promise<boolean> {
    this.#held.credentials.clear();
    const { changes } = await this.#tx.run(
      `INSERT INTO aoc_credentials (secret_digest, lineage, generation, issued_at, retired_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
      [c.secretDigest, c.lineage, c.generation, c.issuedAt, c.retiredAt],
    );
    return changes === 1;
  }

  async retireCredentials(lineage: string, belowGeneration: number, at: number): Promise<void> {
    this.#held.credentials.clear();
    await this.#tx.run(
      'UPDATE aoc_credentials SET retired_at = ? WHERE lineage = ? AND generation < ? AND retired_at IS NULL',
      [at, lineage, belowGeneration],
    );
  }

  recordHandovers(lineage: string, generation: number, occurrenceIds: readonly string[]): Promise<void> {
    return insertHandovers(this.#tx, lineage, generation, occurrenceIds);
  }

  async lockAuthority(id: string): Promise<AuthorityRecord | undefined> {
    const held = this.#held.authorities.get(id);
    if (held !== undefined) return held;
    const p = pf.take<AuthorityRecord>(this.#prefetched, pf.key.authority(id));
    const found = p.found ? p.value : await this.authorityRow(id, true);
    if (found !== undefined) this.#held.authorities.set(id, found);
    return found;
  }

  async insertAuthority(a: AuthorityRecord): Promise<boolean> {
    const { changes } = await this.#tx.run(
      `INSERT INTO aoc_authorities (id, unit, total, reserved, consumed, created_at, updated_at, version)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [a.id, a.unit, a.total, a.reserved, a.consumed, a.createdAt, a.updatedAt, a.version],
    );
    return changes === 1;
  }

  async updateAuthority(a: AuthorityRecord, previousVersion: number): Promise<void> {
    this.#held.authorities.delete(a.id);
    // A row this transaction's waiting UPDATE writes takes these values there: one row version.
    if (this.#pendingAuthorities.fold(a, previousVersion)) {
      this.#held.authorities.set(a.id, a);
      return;
    }
    // Consumed never decreases (AOC-REQ-012): the statement itself refuses a lower value.
    if (!this.#pendingAuthorities.defer(this.#tx, a, previousVersion))
      await this.#changedOne(
        AUTHORITY_UPDATE,
        [a.reserved, a.consumed, a.updatedAt, a.version, a.id, previousVersion, a.consumed],
        'authority',
      );
    this.#held.authorities.set(a.id, a);
  }

  async lockOccurrence(id: string): Promise<OccurrenceRecord | undefined> {
    const held = this.#held.occurrences.get(id);
    if (held !== undefined) return held;
    const p = pf.take<pf.PrefetchedOccurrence>(this.#prefetched, pf.key.occurrence(id));
    if (p.found) {
      if (p.value === undefined) return undefined;
      this.seen(p.value.record, p.value.stripe);
      this.#requests.set(id, p.value.request);
      this.#held.occurrences.set(id, p.value.record);
      return p.value.record;
    }
    // With its request: provider entry needs it next, and this saves a round trip.
    const found = await this.occurrenceRow('id = ?', [id], true, true);
    if (found === undefined) return undefined;
    this.#requests.set(id, found.request);
    this.#held.occurrences.set(id, found.record);
    return found.record;
  }

  async findByCreationBinding(scope: string, key: string): Promise<OccurrenceRecord | undefined> {
    const p = pf.take<pf.PrefetchedOccurrence>(this.#prefetched, pf.key.binding(scope, key));
    if (p.found) {
      if (p.value !== undefined) this.seen(p.value.record, p.value.stripe);
    }
    const found = p.found
      ? p.value?.record
      : await this.occurrenceRow('creation_scope = ? AND creation_key = ?', [scope, key], true);
    // Read FOR UPDATE: held until commit.
    if (found !== undefined) this.#held.occurrences.set(found.id, found);
    return found;
  }

  async insertOccurrence(
    o: OccurrenceRecord,
    request: JsonObject,
    requestJcs?: string,
  ): Promise<OccurrenceInsert> {
    const stripe = await this.#countNew(o);
    const sql = `INSERT INTO aoc_occurrences (${OCC_COLS}, request, open_stripe) VALUES (${OCC_MARKS}, ?, ?) ON CONFLICT DO NOTHING`;
    const values = rows.occurrenceValues(o);
    const params = [...values, requestJcs ?? jcs(request), stripe];
    // Deferred, a taken binding, native key or identifier re-runs the transaction statement by
    // statement, which answers it below as ever (engine.ts `defer`).
    if (!this.#pendingInserts.defer(this.#tx, o.id, sql, params)) {
      const { changes } = await this.#tx.run(sql, params);
      // Refused (the service then throws, which rolls the stripe claim back with everything else).
      if (changes !== 1) {
        const taken = await this.findByCreationBinding(o.creationBinding.scope, o.creationBinding.key);
        return { ok: false, taken: taken === undefined ? 'native_key' : 'creation_binding' };
      }
    }
    for (const l of o.linkedIds) {
      if (!(await this.addLinkedId(o, l))) return { ok: false, taken: 'linked_identifier', identifier: l };
    }
    // Its evidence chain (`occurrence:<id>`, docs/store.md) starts in this transaction.
    startsChain(this.#tx, `occurrence:${o.id}`);
    this.#inserted.add(o.id);
    this.#requests.set(o.id, request);
    this.#held.occurrences.set(o.id, asStored(o, values));
    this.#held.moved(o.lineage, null, o.phase);
    return { ok: true };
  }

  /**
   * A new occurrence counts as pending in the domain: take a unit in a stripe below its share, or
   * refuse as the machine would (AOC-REQ-006). This is the check that holds under concurrency; the
   * machine's check before it saw only committed totals.
   */
  async #countNew(o: OccurrenceRecord): Promise<number> {
    if (o.phase !== 'reserved') throw new BatonError('internal', 'a new occurrence must be reserved');
    const limit = (await this.#limits()).maxPendingPerDomain;
    const stripe = await this.#stripes.claim('pending', limit, preferredStripe(o.id));
    if (stripe === undefined) throw domainLimitError('pending', limit);
    this.#open.set(o.id, { phase: o.phase, stripe });
    return stripe;
  }

  /** Move the occurrence's unit between the domain's pending and in-flight counts as its phase changes. */
  async #recount(o: OccurrenceRecord): Promise<number | null> {
    const before = this.#open.get(o.id) ?? (await this.#openState(o.id));
    const stripe = before.stripe ?? 0;
    const change = `${before.phase}>${o.phase}`;
    if (change === 'reserved>entered') {
      const limit = (await this.#limits()).maxInFlightPerDomain;
      const to = await this.#stripes.claim('in_flight', limit, stripe, stripe);
      if (to === undefined) throw domainLimitError('in_flight', limit);
      if (to !== stripe) await this.#stripes.release('pending', stripe);
      return to;
    }
    if (change === 'reserved>released') await this.#stripes.release('pending', stripe);
    else if (change === 'entered>resolved') await this.#stripes.release('in_flight', stripe);
    else if (change === 'resolved>entered') await this.#stripes.add('in_flight', stripe);
    return before.stripe;
  }

  async #openState(id: string): Promise<OpenState> {
    const r = await this.#tx.get<{ phase: Phase; open_stripe: number | string | null }>(
      `SELECT phase, open_stripe FROM aoc_occurrences WHERE id = ?${this.#tx.forUpdate}`,
      [id],
    );
    if (r === undefined) throw new BatonError('conflict', 'the occurrence changed concurrently; retry');
    return { phase: r.phase, stripe: rows.numOrNull(r.open_stripe) };
  }

  async updateOccurrence(o: OccurrenceRecord, previousVersion: number): Promise<void> {
    this.#held.occurrences.delete(o.id);
    const from = this.#open.get(o.id)?.phase;
    const stripe = await this.#recount(o);
    this.#open.set(o.id, { phase: o.phase, stripe });
    // Only the mutable state is written (UPDATED_COLUMNS' order); the provider reference only
    // from NULL (write-once).
    const linkedIds = jcs(o.linkedIds);
    const values = [
      o.phase,
      o.outcome,
      o.effect,
      o.conflict ? 1 : 0,
      o.enteredAt,
      o.enteredGeneration,
      o.releasedAt,
      o.resolvedAt,
      linkedIds,
      o.provider.providerReference,
      o.updatedAt,
      o.version,
      stripe,
    ];
    const ref = o.provider.providerReference;
    // A row this transaction's waiting INSERT writes takes these values there: one row version.
    if (!this.#pendingInserts.fold(o.id, previousVersion, values, ref))
      await this.#changedOne(
        `UPDATE aoc_occurrences SET phase = ?, outcome = ?, effect = ?, conflict = ?, entered_at = ?,
         entered_generation = ?, released_at = ?, resolved_at = ?, linked_ids = ?, provider_reference = ?,
         updated_at = ?, version = ?, open_stripe = ?
       WHERE id = ? AND version = ? AND (provider_reference IS NULL OR provider_reference = ?)`,
        [...values, o.id, previousVersion, ref],
        'occurrence',
      );
    this.#held.occurrences.set(o.id, asStored(o, rows.occurrenceValues(o, linkedIds)));
    this.#held.moved(o.lineage, from, o.phase);
  }

  async addLinkedId(o: Pick<OccurrenceRecord, 'id' | 'provider'>, l: LinkedIdentifier): Promise<boolean> {
    const sql = `INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`;
    const params = [o.id, l.type, l.value, exclusiveKey(o.provider, l)];
    // Deferred, an identifier bound elsewhere re-runs the transaction statement by statement.
    if (deferred(this.#tx, sql, params, { expect: 1 })) return true;
    const { changes } = await this.#tx.run(sql, params);
    return changes === 1;
  }

  async findReissueOf(sourceId: string): Promise<string | undefined> {
    // The source row is locked (lockOccurrence): a reissue that committed before it is seen here,
    // one that has not yet taken that lock will see this one's (READ COMMITTED, docs/store.md).
    const r = await this.#tx.get<{ id: string }>('SELECT id FROM aoc_occurrences WHERE reissue_of = ?', [
      sourceId,
    ]);
    return r?.id;
  }

  async getRequest(occurrenceId: string): Promise<JsonObject | undefined> {
    // The request column is written once, at insert (AOC-REQ-003): what was read stays true.
    const known = this.#requests.get(occurrenceId);
    if (known !== undefined) return known;
    const r = await this.#tx.get<{ request: string }>('SELECT request FROM aoc_occurrences WHERE id = ?', [
      occurrenceId,
    ]);
    return r && rows.json<JsonObject>(r.request);
  }

  /**
   * The lineage's counts are exact: every command that adds to them holds the lineage row. The
   * domain's are the committed totals; the stripe claim at write time is what enforces the domain
   * limit under concurrency (occurrences-limits.ts).
   */
  async countOpen(lineage: string): Promise<OpenCounts> {
    const held = this.#held.counts(lineage);
    if (held !== undefined) return held;
    const p = pf.take<RawCounts>(this.#prefetched, pf.key.counts(lineage));
    const r = p.found ? p.value : await this.#counts(lineage);
    this.#held.countsRead(lineage, r);
    const n = (k: 'lp' | 'lf' | 'dp' | 'df'): number => num(r?.[k] ?? 0);
    return {
      lineage: { pending: n('lp'), inFlight: n('lf') },
      domain: { pending: n('dp'), inFlight: n('df') },
    };
  }

  #counts(lineage: string): Promise<Record<'lp' | 'lf' | 'dp' | 'df', number | string | null> | undefined> {
    return this.#tx.get<Record<'lp' | 'lf' | 'dp' | 'df', number | string | null>>(
      `SELECT
         (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'reserved' AND lineage = ?) AS lp,
         (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'entered' AND lineage = ?) AS lf,
         (SELECT SUM(pending) FROM aoc_open_stripes) AS dp,
         (SELECT SUM(in_flight) FROM aoc_open_stripes) AS df`,
      [lineage, lineage],
    );
  }

  /** Consecutive events of one subject go in one run (one INSERT, one head write: evidence-log.ts). */
  async appendEvents(events: readonly PlannedEvent[], at: number, actor: string): Promise<void> {
    const held = this.#heldRuns;
    if (held !== undefined) {
      for (const e of events) {
        const input = evidenceInput(e, at, actor);
        const run = held.get(e.subject);
        if (run === undefined) held.set(e.subject, [input]);
        else run.push(input);
      }
      return;
    }
    for (let i = 0; i < events.length;) {
      const subject = events[i]?.subject;
      const run: EvidenceInput[] = [];
      for (; i < events.length && events[i]?.subject === subject; i++) {
        const e = events[i] as PlannedEvent;
        run.push(evidenceInput(e, at, actor));
      }
      // Deferred where the engine can: the hashes are checked when the call has run, before COMMIT.
      if (this.#tx.deferrable === true) deferEvidenceRun(this.#tx, run);
      else await appendEvidenceRun(this.#tx, run);
    }
  }

  /** Webhook intake (issue 13 §2): the unique native-key index names at most one occurrence. */
  async lockByNativeKey(
    profileId: string,
    account: string,
    environment: string,
    nativeKey: string,
  ): Promise<OccurrenceRecord | undefined> {
    const where = 'profile_id = ? AND account = ? AND environment = ? AND native_key = ?';
    const found = await this.occurrenceRow(where, [profileId, account, environment, nativeKey], true);
    // Read FOR UPDATE: held until commit, so the observation that follows does not read it again.
    if (found !== undefined) this.#held.occurrences.set(found.id, found);
    return found;
  }

  /**
   * Webhook intake by bound reference (migration 034): the ids first, so that two occurrences with
   * one reference (never written, see ReconciliationStore.boundVersionByReference) lock nothing.
   */
  async lockByReference(
    profileId: string,
    account: string,
    environment: string,
    reference: string,
  ): Promise<OccurrenceRecord | undefined> {
    const ids = await this.#tx.all<{ id: string }>(
      'SELECT id FROM aoc_occurrences WHERE profile_id = ? AND account = ? AND environment = ? AND provider_reference = ? LIMIT 2',
      [profileId, account, environment, reference],
    );
    const [only] = ids;
    if (only === undefined || ids.length !== 1) return undefined;
    const found = await this.occurrenceRow('id = ? AND provider_reference = ?', [only.id, reference], true);
    if (found !== undefined) this.#held.occurrences.set(found.id, found);
    return found;
  }

  /** Migration 010's primary key is the rule: a second insert of one (profile, event id) changes nothing. */
  async rememberProviderEvent(
    profileId: string,
    eventId: string,
    occurrenceId: string | null,
    at: number,
  ): Promise<boolean> {
    const { changes } = await this.#tx.run(
      'INSERT INTO prv_webhook_events (profile_id, event_id, occurrence_id, received_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [profileId, eventId, occurrenceId, at],
    );
    return changes === 1;
  }

  /**
   * Refused deliveries share migration 010's table under their own namespace, `refused:<occurrence
   * id>` in `profile_id` (a profile id never holds ':', so no provider's event ids meet them): the
   * primary key answers `seen`, and the count of one occurrence's rows is a range of that key, at
   * most cap + 1 rows long. The occurrence is locked by the caller, so two deliveries about it are
   * counted one after the other on both engines.
   */
  async rememberRefusedDelivery(
    occurrenceId: string,
    fingerprint: string,
    at: number,
    cap: number,
  ): Promise<RefusedDeliveryMemory> {
    return this.#remember(`refused:${occurrenceId}`, occurrenceId, fingerprint, at, cap);
  }

  /** The same rule under `<kind>:<occurrence id>` (`ack:entered:…`, `reconcile:…`), apart from refused deliveries. */
  rememberReport(
    occurrenceId: string,
    kind: ReportKind,
    fingerprint: string,
    at: number,
    cap: number,
  ): Promise<RefusedDeliveryMemory> {
    return this.#remember(`${kind}:${occurrenceId}`, occurrenceId, fingerprint, at, cap);
  }

  async #remember(
    ns: string,
    occurrenceId: string,
    fingerprint: string,
    at: number,
    cap: number,
  ): Promise<RefusedDeliveryMemory> {
    // The common case — a report not seen, under the cap — is one statement (an acknowledgement is
    // on every lifecycle's path: issue 16's statement budget). The caller holds the occurrence's
    // row lock, so nothing else counts or inserts under this namespace meanwhile.
    const fresh = await this.#tx.run(REMEMBER_UNDER_CAP, [ns, fingerprint, occurrenceId, at, ns, cap]);
    if (fresh.changes === 1) return 'fresh';
    const seen = await this.#tx.get<{ one: number }>(
      'SELECT 1 AS one FROM prv_webhook_events WHERE profile_id = ? AND event_id = ?',
      [ns, fingerprint],
    );
    if (seen !== undefined) return 'seen';
    // The mark is one more row: `cap_reached` holds no ':' so no fingerprint equals it.
    const { changes } = await this.#tx.run(REMEMBER, [ns, CAP_MARK, occurrenceId, at]);
    return changes === 1 ? 'cap_reached' : 'over_cap';
  }
}

const CAP_MARK = 'cap_reached';
const REMEMBER =
  'INSERT INTO prv_webhook_events (profile_id, event_id, occurrence_id, received_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING';
/** Inserts only while the namespace keeps fewer than the cap (the casts type the parameters on PostgreSQL). */
const REMEMBER_UNDER_CAP =
  'INSERT INTO prv_webhook_events (profile_id, event_id, occurrence_id, received_at) ' +
  'SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT) ' +
  'WHERE (SELECT COUNT(*) FROM prv_webhook_events WHERE profile_id = ?) < CAST(? AS BIGINT) ' +
  'ON CONFLICT DO NOTHING';
