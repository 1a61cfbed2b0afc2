/**
 * The continuity observation service over a store (B6): Baton's own handoff records projected
 * from the evidence log, records submitted by others, FIC_obs, CIF and the report. The projector
 * is idempotent on `record_id` and runs over the log whenever records are read (report, metrics,
 * GET), so the takeover transaction is untouched (docs/observations.md, "When the projector runs").
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { canonicalize } from '../core/jcs.js';
import { createLocalJwks, type VerificationKey } from '../core/jose.js';
import { systemClock, type Clock } from '../core/clock.js';
import { BatonError, isBatonError } from '../core/errors.js';
import { formatRfc3339, parseRfc3339 } from '../core/time.js';
import { BYPASS_PATH_KINDS } from '../occurrences/index.js';
import {
  HANDOFF_ANALYSIS_REVISION,
  HANDOFF_PRIOR_REVISIONS,
  HANDOFF_PROFILE,
  LOCAL_PRODUCER,
  buildReport,
  cif,
  currentRecords,
  failedCriteria,
  ficObs,
  inBatonNamespace,
  producerKeyUnpinned,
  producerNamespace,
  producerOf,
  projectBarrier,
  projectHandoff,
  readMeasurementProfile,
  recordClass,
  recordKey,
  refuse,
  refuseBatonNamespaceClaim,
  refuseReservedProfileId,
  revisedRecordId,
  seededSample,
  signRecord,
  verifyRecord,
  type CifResult,
  type ContinuityReport,
  type FicResult,
  type ObservationRecord,
  type PinnedProfile,
  type SeriesPoint,
} from '../observations/index.js';
import type { SqlExecutor, StoreEngine, Transaction } from './engine.js';
import { barrierFacts } from './observations-barriers.js';
import { lockedPinDigest, pinnedKeys } from './observations-producers.js';
import {
  actionEvidence,
  enteredOccurrences,
  handoffFacts,
  occurrenceLineages,
  readDomain,
  type DomainFacts,
} from './observations-facts.js';
import {
  getProfileBody,
  getStoredRecord,
  insertRecord,
  isContradicted,
  listConflicts,
  recordConflict,
  recordDigest,
  listStoredRecords,
  putProfile,
  recordWithCorrections,
  type InsertResult,
  type StoredRecord,
} from './observations-records.js';

/** Verify-then-store rounds a submission gets while its producer's pin keeps changing (`submit`). */
const SUBMIT_ATTEMPTS = 3;
/** The storing transaction's answer when the pin changed after verification: verify again. */
const PIN_CHANGED = Symbol('pin changed');

/** Records per projection transaction: bounded, so a first projection of a long log never holds the writer long. */
const PROJECTION_BATCH = 256;

export interface ProjectionResult {
  readonly created: number;
  readonly existing: number;
  /**
   * Corrections appended: stored records derived under an earlier analysis revision that the
   * current one derives otherwise (OBS-08 ¶19; `#revise`).
   */
  readonly corrected: number;
  /** Records whose facts changed since they were stored: the evidence was altered (never overwritten). */
  readonly conflicts: readonly string[];
  /**
   * Lineage scopes an incremental projection skipped (every generation already recorded): their
   * chains were not re-read, so their handoff records are not re-verified by this projection.
   * Empty for a full projection. CIF counts those records UNKNOWN (`cif`, OBS-13 ¶26).
   */
  readonly notRederived: readonly string[];
}

type ProjectionOutcome =
  | { readonly status: 'created' | 'exists' }
  | { readonly status: 'corrected' | 'conflict'; readonly record_id: string };

/**
 * Per analysis revision, the earlier revisions of the same analysis whose records the projector
 * corrects rather than reports as conflicts (OBS-08 ¶19). The barrier analysis has had one.
 */
const PRIOR_REVISIONS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  [HANDOFF_ANALYSIS_REVISION, new Set(HANDOFF_PRIOR_REVISIONS)],
]);

/**
 * Whether a stored record says what a re-derivation says, its analysis revision and signature
 * aside: then a record of an earlier revision stands (the current analysis agrees with it).
 */
function sameDerivation(stored: ObservationRecord, derived: ObservationRecord): boolean {
  const bare = (r: ObservationRecord): string =>
    canonicalize(
      Object.fromEntries(
        Object.entries(r).filter(([k]) => k !== 'evidence_envelope' && k !== 'analysis_revision'),
      ),
    );
  return bare(stored) === bare(derived);
}

export interface FicQuery {
  readonly lineage?: string;
  readonly from?: number;
  readonly to?: number;
  readonly sample?: { readonly size: number; readonly seed: string };
}

/** Which records a CIF (or a point of the series) counts: a window of `observed_at`, a lineage. */
export interface RecordScope {
  readonly lineage?: string;
  readonly from?: number;
  readonly to?: number;
}

/** Told about every record the projector writes or refuses (the server counts them, issue 12 §5). */
export interface ProjectionObserver {
  written(eventType: string): void;
  refused(code: string): void;
}

export interface ContinuityOptions {
  readonly engine: StoreEngine;
  /** The domain's Ed25519 private key: Baton signs its own records with it. */
  readonly signingKey: KeyObject;
  readonly clock?: Clock;
  readonly observer?: ProjectionObserver;
}

export class ContinuityStore {
  readonly #engine: StoreEngine;
  readonly #key: KeyObject;
  readonly #clock: Clock;
  readonly #observer: ProjectionObserver | undefined;
  readonly #publicKey: KeyObject;

  constructor(options: ContinuityOptions) {
    this.#observer = options.observer;
    this.#engine = options.engine;
    this.#key = options.signingKey;
    this.#publicKey = createPublicKey(options.signingKey);
    this.#clock = options.clock ?? systemClock;
  }

  async #domain(ex: SqlExecutor): Promise<DomainFacts> {
    const d = await readDomain(ex);
    if (d === undefined)
      throw new BatonError('domain_not_found', 'the coordination domain is not configured');
    return d;
  }

  /**
   * Write the handoff record of every takeover (of one lineage, or all) not yet recorded (B3.3)
   * and, unless a lineage is named, every revocation-barrier record (B3.4); safe to run any
   * number of times. By default every record is re-derived and compared with the stored bytes
   * (an altered event is a conflict); `incremental` skips lineages already fully recorded (the
   * read routes: their cost stays flat as the log grows).
   */
  async project(
    actor = 'system:observations',
    lineage?: string,
    options: { readonly incremental?: boolean } = {},
  ): Promise<ProjectionResult> {
    const { records, skipped, notRederived } = await this.#engine.read(async (ex) => {
      const domain = (await this.#domain(ex)).id;
      const scan = await handoffFacts(ex, domain, lineage, options.incremental === true);
      const handoffs = scan.facts.map(projectHandoff);
      const common = { skipped: scan.skipped, notRederived: scan.skippedScopes };
      if (lineage !== undefined) return { records: handoffs, ...common };
      const barriers = (await barrierFacts(ex, domain)).map(projectBarrier);
      return { records: [...handoffs, ...barriers], ...common };
    });
    const signed = await Promise.all(records.map((r) => signRecord(r, this.#key)));
    let created = 0;
    let existing = skipped;
    let corrected = 0;
    const conflicts: string[] = [];
    for (let i = 0; i < signed.length; i += PROJECTION_BATCH) {
      const batch = signed.slice(i, i + PROJECTION_BATCH);
      const derived = records.slice(i, i + PROJECTION_BATCH);
      const outcomes = await this.#engine.transaction((tx) => this.#insertAll(tx, batch, derived, actor));
      outcomes.forEach((o, j) => {
        const r = batch[j] as ObservationRecord;
        if (o.status === 'created') {
          created++;
          this.#observer?.written(r.event_type);
        } else if (o.status === 'corrected') {
          // A new record under its own id (not the derived one's): counted as written.
          corrected++;
          this.#observer?.written(r.event_type);
        } else if (o.status === 'exists') existing++;
        else if (o.status === 'conflict') {
          this.#observer?.refused('observation_record_conflict');
          conflicts.push(o.record_id);
        }
      });
    }
    return { created, existing, corrected, conflicts, notRederived };
  }

  /**
   * One transaction per batch (one COMMIT instead of one per record). A conflict is found by a
   * read after `ON CONFLICT DO NOTHING`, never by a failed statement, so the batch goes on.
   * `derived[j]` is `batch[j]` before signing (a correction is signed under its own id).
   */
  async #insertAll(
    tx: Transaction,
    batch: readonly ObservationRecord[],
    derived: readonly ObservationRecord[],
    actor: string,
  ): Promise<ProjectionOutcome[]> {
    const out: ProjectionOutcome[] = [];
    for (const [j, r] of batch.entries()) {
      try {
        out.push({ status: (await insertRecord(tx, r, this.#clock.wallMs(), actor)).status });
      } catch (error) {
        if (!isBatonError(error, 'observation_record_conflict')) throw error;
        out.push(await this.#revise(tx, r, derived[j] as ObservationRecord, actor));
      }
    }
    return out;
  }

  /**
   * A re-derived record whose id is stored with other bytes. OBS-08 ¶19: derived labels name their
   * analysis revision and a correction appends, naming its predecessor. So when the latest stored
   * record of its correction chain was derived under an earlier revision of the same analysis
   * (`PRIOR_REVISIONS`) and says something else, the re-derivation is appended as a correction
   * (`revisedRecordId`, `supersedes` that record): the rules changed, not the evidence. When it
   * says the same, it stands (`exists`). Anything else — a record derived under the current
   * revision (or an unknown one) with other bytes, or one already recorded as contradicted — is a
   * conflict (B3.2, OBS-13 ¶26), recorded in `cop_conflicts` so every later read counts it UNKNOWN.
   */
  async #revise(
    tx: Transaction,
    signed: ObservationRecord,
    derived: ObservationRecord,
    actor: string,
  ): Promise<ProjectionOutcome> {
    const producer = producerNamespace(derived);
    const chain = await recordWithCorrections(tx, producer, derived.record_id);
    if (chain === undefined) throw new BatonError('internal', 'a conflicting record vanished');
    const head = chain.corrections.at(-1) ?? chain.record;
    const revision = derived.analysis_revision ?? '';
    const headRevision = head.record.analysis_revision ?? '';
    const conflict = async (candidate: ObservationRecord): Promise<ProjectionOutcome> => {
      await recordConflict(
        tx,
        {
          producer,
          record_id: head.record_id,
          storedDigest: head.digest,
          derivedDigest: recordDigest(candidate),
          actor,
        },
        this.#clock.wallMs(),
      );
      return { status: 'conflict', record_id: head.record_id };
    };
    const contradicted = await isContradicted(tx, producer, head.record_id);
    if (head !== chain.record && headRevision === revision) {
      // A correction already restates the record under this revision: it must be these bytes.
      const expected = await signRecord(
        { ...derived, record_id: head.record_id, supersedes: head.record.supersedes ?? null },
        this.#key,
      );
      return recordDigest(expected) === head.digest && !contradicted
        ? { status: 'exists' }
        : conflict(expected);
    }
    if (contradicted || !(PRIOR_REVISIONS.get(revision)?.has(headRevision) ?? false)) {
      return conflict(signed);
    }
    if (sameDerivation(head.record, derived)) return { status: 'exists' };
    const correction = await signRecord(
      { ...derived, record_id: revisedRecordId(derived.record_id, revision), supersedes: head.record_id },
      this.#key,
    );
    try {
      await insertRecord(tx, correction, this.#clock.wallMs(), actor);
    } catch (error) {
      // Its id already holds other bytes outside the chain: nothing is written, a conflict.
      if (!isBatonError(error, 'observation_record_conflict')) throw error;
      return conflict(correction);
    }
    return { status: 'corrected', record_id: correction.record_id };
  }

  /**
   * Store a record someone submitted (already read by the caller). Who may stand as its producer
   * (OBS-08 ¶19: ids are unique within a producer's namespace; OBS-12 ¶25: across a trust boundary
   * the issuer is authenticated; B7-13: an unsigned record offered across a boundary is refused):
   * - unsigned: only the local producer `urn:baton:local` (the record names none, or names it) —
   *   the authenticated operators of this deployment, each submission's actor in its evidence;
   * - any other producer: signed, and verified here under a key pinned for that producer
   *   (Baton's own domain key for `urn:baton:<domain>`; for others the keys in `cop_producers`,
   *   read now, so a pin changed by any server applies to this submission, and read again under
   *   lock in the storing transaction: changed meanwhile, the record is verified again, up to
   *   `SUBMIT_ATTEMPTS` times, then `store_busy`), with this domain as audience. No pin, no record: nobody can squat another producer's ids or supersede its records.
   * Baton's own namespace stays closed to submissions (B7-12): only the projector writes under
   * `urn:baton:<domain>`, so a forged record can neither pose as Baton's evidence nor take the id
   * of a handoff record Baton has yet to project. Posting back the exact bytes of a record Baton
   * stored (an exported, signed record) is still the usual no-op. A refusal stores nothing.
   */
  async submit(record: ObservationRecord, actor: string): Promise<InsertResult> {
    for (let attempt = 1; ; attempt++) {
      const domain = (await this.#engine.read((ex) => this.#domain(ex))).id;
      const pinDigest = await this.#authenticate(record, domain);
      const result = await this.#engine.transaction(async (tx) => {
        const domain = (await this.#domain(tx)).id;
        const producer = producerNamespace(record);
        if (inBatonNamespace(producer, domain) || inBatonNamespace(record.record_id, domain)) {
          const existing = await getStoredRecord(tx, producer, record.record_id);
          if (existing !== undefined && existing.digest === recordDigest(record)) {
            return { status: 'exists', stored: existing } as const;
          }
          refuseBatonNamespaceClaim(record, producer, domain);
        }
        // OBS-12 ¶25: the keys the record verified under must still be the pinned ones when it is
        // stored; a pin changed meanwhile (rotation, unpin) sends it back to verification.
        if (pinDigest !== undefined && (await lockedPinDigest(tx, producer)) !== pinDigest)
          return PIN_CHANGED;
        return insertRecord(tx, record, this.#clock.wallMs(), actor);
      });
      if (result !== PIN_CHANGED) return result;
      if (attempt === SUBMIT_ATTEMPTS)
        throw new BatonError(
          'store_busy',
          "the producer's pinned keys kept changing while the record was verified: submit it again",
        );
    }
  }

  /**
   * The producer a submission claims is authenticated, or the submission is refused (`submit`).
   * Returns the digest of the pinned keys it verified under (undefined: unsigned, or Baton's own).
   */
  async #authenticate(record: ObservationRecord, domain: string): Promise<string | undefined> {
    const producer = producerNamespace(record);
    if (record.evidence_envelope === undefined) {
      // Baton's own namespace is answered `reserved_namespace` in the transaction (B7-12).
      if (producer === LOCAL_PRODUCER || inBatonNamespace(producer, domain)) return undefined;
      refuse(
        'producer_unauthenticated',
        '$.producer',
        `names a producer other than ${LOCAL_PRODUCER} without a signature: sign it with a key pinned for that producer (OBS-12)`,
      );
    }
    const own = producerOf(domain);
    const pin = producer === own ? undefined : await this.#pinned(producer);
    const key = pin === undefined ? this.#publicKey : pin.key;
    await verifyRecord(record, { key, audience: own, producers: [producer], now: this.#clock.wallMs() });
    return pin?.keysDigest;
  }

  /**
   * The keys pinned for another producer (`ProducerKeys`), as a key set the envelope's `kid` selects
   * from (`createLocalJwks`: each key under the kid rule and the Ed25519 key policy); a kid none of
   * them has is `kid_mismatch`. None pinned: refused before any signature is looked at.
   */
  async #pinned(producer: string): Promise<{ key: VerificationKey; keysDigest: string }> {
    const pin = await this.#engine.read((ex) => pinnedKeys(ex, producer));
    if (pin === undefined || pin.keys.length === 0)
      refuse('envelope', '$.producer', 'is not a producer this verifier accepts: no key is pinned for it');
    return { key: createLocalJwks({ keys: pin.keys.map((k) => ({ ...k })) }), keysDigest: pin.keysDigest };
  }

  get(
    producer: string,
    id: string,
  ): Promise<{ record: StoredRecord; corrections: StoredRecord[] } | undefined> {
    return this.#engine.read((ex) => recordWithCorrections(ex, producer, id));
  }

  list(filter: Parameters<typeof listStoredRecords>[1] = {}): Promise<StoredRecord[]> {
    return this.#engine.read((ex) => listStoredRecords(ex, filter));
  }

  async registerProfile(
    input: string | Uint8Array | Record<string, unknown>,
  ): Promise<PinnedProfile & { status: 'created' | 'exists' }> {
    const pinned = readMeasurementProfile(input);
    // Baton's built-in ids are not for registration: refused before anything is stored.
    refuseReservedProfileId(pinned.profile);
    const status = await this.#engine.transaction((tx) =>
      putProfile(
        tx,
        {
          id: pinned.profile.id,
          version: pinned.profile.version,
          digest: pinned.digest,
          body: JSON.stringify(pinned.profile),
        },
        this.#clock.wallMs(),
      ),
    );
    return { ...pinned, status };
  }

  async #profile(id?: string): Promise<PinnedProfile> {
    if (id === undefined || id === HANDOFF_PROFILE.id) return readMeasurementProfile({ ...HANDOFF_PROFILE });
    const body = await this.#engine.read((ex) => getProfileBody(ex, id));
    if (body === undefined) throw new BatonError('not_found', 'no measurement profile with this id', { id });
    return readMeasurementProfile(body);
  }

  /** FIC_obs over the entered occurrences of a window (B3.5). */
  async fic(q: FicQuery = {}): Promise<FicResult> {
    return this.#engine.read(async (ex) => {
      const domain = await this.#domain(ex);
      const universe = await enteredOccurrences(ex, q);
      const chosen =
        q.sample === undefined
          ? universe
          : (() => {
              const ids = new Set(
                seededSample(
                  universe.map((u) => u.id),
                  q.sample.size,
                  q.sample.seed,
                ),
              );
              return universe.filter((u) => ids.has(u.id));
            })();
      const audited = [];
      for (const o of chosen)
        audited.push({ occurrence: o.id, failed: failedCriteria(await actionEvidence(ex, o)) });
      return ficObs({
        universe: universe.length,
        audited,
        sample: q.sample === undefined ? null : { size: q.sample.size, seed: q.sample.seed },
        everyBypassAbsent: BYPASS_PATH_KINDS.every((k) =>
          domain.bypassPaths.some((p) => p.kind === k && p.status === 'absent'),
        ),
      });
    });
  }

  /**
   * The `recordKey`s of the records found contradicted by the evidence log: every conflict a
   * projection recorded (`cop_conflicts`, durable: a later read that does not re-derive the record
   * still counts it), and any `conflicts` a caller passes (ids of Baton's own records).
   */
  async #conflicting(conflicts: readonly string[] | undefined): Promise<ReadonlySet<string>> {
    const { producer, recorded } = await this.#engine.read(async (ex) => ({
      producer: producerOf((await this.#domain(ex)).id),
      recorded: await listConflicts(ex),
    }));
    return new Set([
      ...recorded.map((c) => recordKey(c)),
      ...(conflicts ?? []).map((record_id) => recordKey({ producer, record_id })),
    ]);
  }

  /**
   * The `recordKey`s of the signed records of other producers whose producer's CURRENT pin does not
   * hold the key that signed them (`producerKeyUnpinned`): the key was replaced or unpinned since.
   * They stay stored, and count UNKNOWN `producer_key_unpinned` (OBS-12 ¶25, fail closed: a record
   * is authenticated by a key this verifier still accepts, not by having been accepted once).
   */
  async #unpinned(records: readonly ObservationRecord[]): Promise<ReadonlySet<string>> {
    return this.#engine.read(async (ex) => {
      const own = producerOf((await this.#domain(ex)).id);
      const pins = new Map<string, ReadonlySet<string> | undefined>();
      const out = new Set<string>();
      for (const r of records) {
        if (r.evidence_envelope === undefined) continue;
        const producer = producerNamespace(r);
        if (!pins.has(producer)) {
          const pin = producer === own ? undefined : await pinnedKeys(ex, producer);
          pins.set(producer, pin === undefined ? undefined : new Set(pin.keys.map((k) => k.kid)));
        }
        if (producerKeyUnpinned(r, own, pins.get(producer))) out.add(recordKey(r));
      }
      return out;
    });
  }

  /**
   * The `recordKey`s of Baton's own handoff records (corrections included) about a lineage whose
   * chains the caller's projection did not re-read (`ProjectionResult.notRederived`): derived from
   * evidence verified then, not now, so each of their dimensions counts UNKNOWN (OBS-13 ¶26: stale
   * or unverifiable evidence never yields MATCH).
   */
  async #notReverified(
    records: readonly ObservationRecord[],
    scopes: readonly string[],
  ): Promise<ReadonlySet<string>> {
    if (scopes.length === 0) return new Set();
    const own = producerOf((await this.#engine.read((ex) => this.#domain(ex))).id);
    const skipped = new Set(scopes);
    return new Set(
      records
        .filter((r) => r.event_type === 'handoff' && producerNamespace(r) === own && skipped.has(r.scope_id))
        .map((r) => recordKey(r)),
    );
  }

  /** The ids of Baton's own records found contradicted by the evidence log (as `#conflicting`). */
  async conflicts(extra: readonly string[] = []): Promise<string[]> {
    const { producer, recorded } = await this.#engine.read(async (ex) => ({
      producer: producerOf((await this.#domain(ex)).id),
      recorded: await listConflicts(ex),
    }));
    return [
      ...new Set([...recorded.filter((c) => c.producer === producer).map((c) => c.record_id), ...extra]),
    ].sort();
  }

  /**
   * The records of a scope (B3.6: dᵢ over the records in the window): `observed_at` in
   * [from, to]; with a lineage, the records about it — its scope (`…:lineage:<L>`), one of its
   * generations as a runtime, or an occurrence of it as `outcome.operation_ref` (a barrier record;
   * the occurrence's lineage by its `occurrence_created` event or its row, either one).
   */
  async #inScope(q: RecordScope): Promise<(r: ObservationRecord) => boolean> {
    const inWindow = (r: ObservationRecord): boolean => {
      const at = parseRfc3339(r.observed_at);
      return (q.from === undefined || at >= q.from) && (q.to === undefined || at <= q.to);
    };
    const lineage = q.lineage;
    if (lineage === undefined) return inWindow;
    const domain = (await this.#engine.read((ex) => this.#domain(ex))).id;
    const scope = `urn:baton:${domain}:lineage:${lineage}`;
    const occurrencePrefix = `urn:baton:${domain}:occurrence:`;
    const all = await this.list();
    const refs = all.flatMap((s) => {
      const ref = s.record.outcome.operation_ref;
      return typeof ref === 'string' && ref.startsWith(occurrencePrefix)
        ? [ref.slice(occurrencePrefix.length)]
        : [];
    });
    const lineages = await this.#engine.read((ex) => occurrenceLineages(ex, refs));
    const ofLineage = (runtime: string | null): boolean =>
      runtime !== null && runtime.startsWith(`${scope}:generation:`);
    return (r) => {
      if (!inWindow(r)) return false;
      if (r.scope_id === scope || ofLineage(r.source_runtime) || ofLineage(r.destination_runtime))
        return true;
      const ref = r.outcome.operation_ref;
      return (
        typeof ref === 'string' &&
        ref.startsWith(occurrencePrefix) &&
        (lineages.get(ref.slice(occurrencePrefix.length))?.has(lineage) ?? false)
      );
    };
  }

  /**
   * The records whose results stand (`currentRecords`), then those of the scope: a correction
   * replaces its predecessor even when one of them lies outside the window or lineage (OBS-08
   * ¶19). CIF and every point of the series count these, so the two never disagree.
   */
  async #currentInScope(q: RecordScope): Promise<ObservationRecord[]> {
    const inScope = await this.#inScope(q);
    return currentRecords((await this.list()).map((r) => r.record)).filter(inScope);
  }

  /**
   * CIF over the current records of a scope under a measurement profile (B3.6). Each dimension of
   * a record found contradicted by the evidence log (recorded by a projection, or in `conflicts`)
   * counts UNKNOWN `conflicting_evidence` (B3.2, OBS-13), never its stored MATCH or MISMATCH.
   */
  async cif(
    q: RecordScope & {
      profile?: string;
      conflicts?: readonly string[];
      notRederived?: readonly string[];
    } = {},
  ): Promise<CifResult> {
    const pinned = await this.#profile(q.profile);
    const records = await this.#currentInScope(q);
    const result = cif(records, pinned.weights, pinned.profile.required, pinned.profile.weights_version, {
      conflicting: await this.#conflicting(q.conflicts),
      unpinned: await this.#unpinned(records),
      notReverified: await this.#notReverified(records, q.notRederived ?? []),
    });
    // The answer names the profile it was computed under (OBS-14: calibration/version recorded).
    return {
      ...result,
      profile: { id: pinned.profile.id, version: pinned.profile.version, digest: pinned.digest },
    };
  }

  /**
   * FIC_obs and CIF after each handoff, cumulatively over the records observed by then: the
   * report's charts. The scope (window, lineage) is the report's: only handoffs in it are points,
   * and each point counts FIC_obs and CIF within it (B3.6). `conflicts` as in `cif`.
   */
  async series(q: RecordScope & { conflicts?: readonly string[] } = {}): Promise<SeriesPoint[]> {
    const all = await this.#currentInScope(q);
    // A point per takeover: Baton's own handoff records (its producer; a submitted record cannot
    // stand there, B7-12). A record others submit with `event_type: "handoff"` counts in CIF, not
    // as a point of its own.
    const baton = producerOf((await this.#engine.read((ex) => this.#domain(ex))).id);
    const handoffs = all.filter((r) => r.event_type === 'handoff' && producerNamespace(r) === baton);
    const pinned = await this.#profile();
    const conflicting = await this.#conflicting(q.conflicts);
    const unpinned = await this.#unpinned(all);
    const points: SeriesPoint[] = [];
    // parseRfc3339, as the scope and the report's CIF read `observed_at` (a leap second, :60, is a
    // valid instant there; Date.parse made it NaN, so the point counted nothing). Once per record.
    const at = new Map(all.map((r) => [r, parseRfc3339(r.observed_at)]));
    for (const h of handoffs) {
      const to = at.get(h) ?? Number.NaN;
      const f = await this.fic({
        ...(q.lineage !== undefined && { lineage: q.lineage }),
        ...(q.from !== undefined && { from: q.from }),
        to,
      });
      // Every record in scope observed by then (barrier records too), as the report's own CIF counts them.
      const c = cif(
        all.filter((r) => (at.get(r) ?? Number.NaN) <= to),
        pinned.weights,
        pinned.profile.required,
        pinned.profile.weights_version,
        { conflicting, unpinned },
      );
      points.push({
        at: h.observed_at,
        label: `${h.scope_id} generation ${String(h.authority_epoch)}`,
        fic: f.value?.decimal ?? null,
        cif: c.value?.decimal ?? null,
      });
    }
    return points;
  }

  /** Project, then report (B3.8, OBS-18). */
  async report(q: FicQuery = {}): Promise<ContinuityReport & { projection: ProjectionResult }> {
    const projection = await this.project();
    const scope: RecordScope = {
      ...(q.lineage !== undefined && { lineage: q.lineage }),
      ...(q.from !== undefined && { from: q.from }),
      ...(q.to !== undefined && { to: q.to }),
    };
    const domain = await this.#engine.read((ex) => this.#domain(ex));
    const records = await this.list();
    const unpinned = await this.#unpinned(records.map((r) => r.record));
    const report = buildReport({
      now: formatRfc3339(this.#clock.wallMs()),
      producer: producerOf(domain.id),
      records: records.map((r) => ({
        event_type: r.record.event_type,
        signed: r.signed,
        correction: r.record.supersedes !== undefined && r.record.supersedes !== null,
        producer: r.producer,
        verification: recordClass(r.record),
        producer_unpinned: unpinned.has(recordKey(r.record)),
      })),
      fic: await this.fic(q),
      // B3.6: CIF and the series over the same window and lineage as FIC_obs. B3.2, OBS-13: a
      // record the re-derivation contradicts counts UNKNOWN, and the labels say so.
      cif: await this.cif({ ...scope, conflicts: projection.conflicts }),
      series: await this.series({ ...scope, conflicts: projection.conflicts }),
      bypassPaths: domain.bypassPaths,
      // Every conflict ever recorded, not only this projection's (B3.2: they stay contradicted).
      conflicts: await this.conflicts(projection.conflicts),
    });
    return { ...report, projection };
  }
}
