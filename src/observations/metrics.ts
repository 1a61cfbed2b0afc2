/**
 * Metrics that cannot flatter (OBS-14..17, B3.5–B3.7). They are reports only: nothing in
 * occurrences, missions or leases imports this module (OBS-15, lint rule in eslint.boundaries.js).
 */
import { decodeProtectedHeader } from 'jose';
import { BatonError, sha256 } from '../core/index.js';
import type { ObservationRecord, Status, VerificationClass } from './model.js';
import { producerNamespace } from './namespace.js';
import { recordClass } from './record-class.js';
import { addFractions, rational, type Rational } from './rational.js';
import { MICRO, type Weights } from './weights.js';

/** C-B7: the five criteria of "complete verified lineage" for one consequential action. */
export const FIC_CRITERIA = ['C1', 'C2', 'C3', 'C4', 'C5'] as const;
export type FicCriterion = (typeof FIC_CRITERIA)[number];

export interface AuditedAction {
  readonly occurrence: string;
  /** The criteria this action fails; empty = verified lineage. */
  readonly failed: readonly FicCriterion[];
}

export interface FicInput {
  /** |U|: occurrences entered in scope and window. */
  readonly universe: number;
  /** The audited subset (all of U, or a seeded sample). */
  readonly audited: readonly AuditedAction[];
  readonly sample: { readonly size: number; readonly seed: string } | null;
  /** True only when every AOC bypass-path kind is disclosed `absent` (then N is known). */
  readonly everyBypassAbsent: boolean;
}

export interface FicResult {
  readonly n: number;
  readonly v: number;
  readonly value: Rational | null;
  readonly reason: 'undefined_n_zero' | null;
  /** N when known, else null. */
  readonly universe: number | null;
  readonly q: Rational | null;
  readonly global_bound: { readonly lower: Rational; readonly upper: Rational } | null;
  readonly global_reason: 'universe_unknown' | 'undefined_n_zero' | null;
  readonly sample: { readonly size: number; readonly seed: string } | null;
  /** Every entered occurrence of the window was audited: no sample, or one whose size reached |U|. */
  readonly audited_all: boolean;
  readonly failures: readonly AuditedAction[];
}

export function ficObs(input: FicInput): FicResult {
  const n = input.audited.length;
  const v = input.audited.filter((a) => a.failed.length === 0).length;
  const failures = input.audited.filter((a) => a.failed.length > 0);
  const universe = input.everyBypassAbsent ? input.universe : null;
  const audited_all = input.sample === null || input.sample.size >= input.universe;
  const base = { n, v, sample: input.sample, audited_all, failures, universe };
  if (n === 0) {
    return {
      ...base,
      value: null,
      reason: 'undefined_n_zero',
      q: null,
      global_bound: null,
      global_reason: 'undefined_n_zero',
    };
  }
  const value = rational(v, n);
  if (universe === null || universe < n) {
    return { ...base, value, reason: null, q: null, global_bound: null, global_reason: 'universe_unknown' };
  }
  // OBS-17: q·F ≤ completeness ≤ q·F + (1 − q), with q = n/N: [v/N, (v + N − n)/N].
  return {
    ...base,
    value,
    reason: null,
    q: rational(n, universe),
    global_bound: { lower: rational(v, universe), upper: rational(v + universe - n, universe) },
    global_reason: null,
  };
}

/** A seeded sample of `size` ids: ordered by SHA-256(seed ‖ id), so anyone can redraw it. */
export function seededSample(ids: readonly string[], size: number, seed: string): string[] {
  if (!Number.isSafeInteger(size) || size < 0)
    throw new BatonError('input_invalid', 'sample size must be a non-negative integer');
  return [...ids]
    .map((id) => ({ id, key: sha256(`${seed}\u0000${id}`).toString('hex') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, size)
    .map((x) => x.id)
    .sort();
}

export interface DimensionTally {
  readonly match: number;
  readonly mismatch: number;
  readonly unknown: number;
  readonly d: Rational | null;
  readonly unresolved: boolean;
}

export interface CifResult {
  readonly complete: boolean;
  readonly value: Rational | null;
  readonly unresolved: readonly string[];
  readonly per_dimension: Readonly<Record<string, DimensionTally>>;
  /**
   * Ids of counted records the evidence log now contradicts (the projector re-derived other bytes):
   * each of their dimensions counts UNKNOWN, `conflicting_evidence` (B3.2, OBS-13 ¶26).
   */
  readonly conflicting: readonly string[];
  /**
   * Ids of counted signed records whose producer's current pin no longer holds the key (`kid`) that
   * signed them (the key was replaced or unpinned): each of their dimensions counts UNKNOWN,
   * `producer_key_unpinned` (OBS-12 ¶25: the issuer is authenticated only while its key is pinned).
   */
  readonly producer_key_unpinned: readonly string[];
  /**
   * Ids of counted records derived from evidence this answer did not re-verify (Baton's handoff
   * records of a lineage an incremental projection skipped): each of their dimensions counts
   * UNKNOWN (OBS-13 ¶26: stale or unverifiable evidence never yields MATCH).
   */
  readonly not_reverified: readonly string[];
  readonly weights_version: string;
  /** The measurement profile the answer was computed under, when a store pinned one (OBS-14). */
  readonly profile?: { readonly id: string; readonly version: string; readonly digest: string };
  /** OBS-15: stated in every answer. */
  readonly authorizes: false;
}

/** Evidence classes that state an observation (OBS-06 ¶17); NOT_RUN and SIMULATED observe nothing. */
const STATED_EVIDENCE: readonly VerificationClass[] = ['MANUAL_UNATTESTED', 'OBSERVED_WITH_STATED_EVIDENCE'];

/**
 * ¶26 (OBS-13): missing evidence yields UNKNOWN, never MATCH. A record decides an invariant only
 * when its class (`recordClass`: its classification capped by its weakest evidence item, the one
 * definition the report labels with) states an observation. So a record holding any NOT_RUN or
 * SIMULATED item is that class in CIF as in the report, and its MATCH decides nothing.
 */
export function decidesOnStatedEvidence(r: ObservationRecord): boolean {
  return STATED_EVIDENCE.includes(recordClass(r));
}

/** A record's identity across producers (OBS-08 ¶19): its producer namespace and its id. */
export const recordKey = (r: Pick<ObservationRecord, 'producer' | 'record_id'>): string =>
  JSON.stringify([producerNamespace(r), r.record_id]);

const NONE: ReadonlySet<string> = new Set();

/**
 * The one status a record gives a dimension, or undefined when it does not code it. Listing the
 * dimension twice with different statuses is a contradiction: ¶26 and B3.2 say it is not repaired
 * by averaging — it is UNKNOWN (`conflicting_evidence`), the record itself kept as stored. So is
 * every dimension of a record in `conflicting` (`recordKey`s): one whose stored bytes the evidence
 * log now contradicts (B3.2: disagreeing evidence ⇒ keep both, UNKNOWN). The same status listed
 * twice counts once, so no record weighs double.
 */
export function statusOf(
  r: ObservationRecord,
  dimension: string,
  conflicting: ReadonlySet<string> = NONE,
): Status | undefined {
  const seen = new Set(r.invariants.filter((i) => i.dimension === dimension).map((i) => i.status));
  if (seen.size === 0) return undefined;
  if (seen.size > 1 || conflicting.has(recordKey(r))) return 'UNKNOWN';
  const [status] = [...seen] as [Status];
  if ((status === 'MATCH' || status === 'MISMATCH') && !decidesOnStatedEvidence(r)) return 'UNKNOWN';
  return status;
}

/**
 * The records whose results stand: a correction (`supersedes`, OBS-08 ¶19) replaces its
 * predecessor of the same producer, which stays stored but no longer counts — evidence is not
 * averaged with the result that replaced it. Producers are compared as the store keys them
 * (`producerNamespace`): a record without `producer` is in the local namespace, `urn:baton:local`.
 *
 * A record has one successor (the store refuses a second correction, migration 032), but a store
 * written before that may hold a fork: two or more current records descending from one original.
 * None of them replaced the others, and picking one would decide between them; so they count as
 * one record (the first by `record_id`, its other members kept) whose every dimension any of them
 * codes is UNKNOWN, `conflicting_evidence` (B3.2: disagreeing evidence ⇒ keep both, UNKNOWN) —
 * never once per competing correction.
 */
export function currentRecords(records: readonly ObservationRecord[]): ObservationRecord[] {
  const key = (r: ObservationRecord, id: string): string => JSON.stringify([producerNamespace(r), id]);
  const byKey = new Map(records.map((r) => [key(r, r.record_id), r]));
  const superseded = new Set(
    records.flatMap((r) =>
      r.supersedes === undefined || r.supersedes === null ? [] : [key(r, r.supersedes)],
    ),
  );
  const current = records.filter((r) => !superseded.has(key(r, r.record_id)));
  // The original each current record descends from (as far as `records` names it).
  const rootOf = (r: ObservationRecord): string => {
    let at = key(r, r.record_id);
    const seen = new Set([at]);
    for (
      let cur: ObservationRecord | undefined = r;
      cur?.supersedes !== undefined && cur.supersedes !== null;
    ) {
      const up = key(cur, cur.supersedes);
      if (seen.has(up)) break;
      seen.add(up);
      at = up;
      cur = byKey.get(up);
    }
    return at;
  };
  const isCorrection = (r: ObservationRecord): boolean => r.supersedes !== undefined && r.supersedes !== null;
  const groups = new Map<string, ObservationRecord[]>();
  for (const r of current.filter(isCorrection)) {
    const root = rootOf(r);
    groups.set(root, [...(groups.get(root) ?? []), r]);
  }
  const out: ObservationRecord[] = [];
  for (const r of current) {
    const group = isCorrection(r) ? (groups.get(rootOf(r)) ?? [r]) : [r];
    if (group.length === 1) out.push(r);
    else if (group[0] === r) out.push(forkAsOne(group, JSON.parse(rootOf(r)) as [string, string]));
  }
  return out;
}

/** A fork's competing corrections as one record: every dimension they code UNKNOWN (`currentRecords`). */
function forkAsOne(group: readonly ObservationRecord[], [, original]: [string, string]): ObservationRecord {
  const members = [...group].sort((a, b) =>
    a.record_id < b.record_id ? -1 : a.record_id > b.record_id ? 1 : 0,
  );
  const ids = members.map((m) => m.record_id);
  const dimensions = [...new Set(members.flatMap((m) => m.invariants.map((i) => i.dimension)))];
  const reason = `conflicting_evidence: ${ids.join(', ')} each correct ${original}`;
  const [first] = members as [ObservationRecord];
  return {
    ...first,
    invariants: dimensions.map((dimension) => ({ dimension, status: 'UNKNOWN', reference: null, reason })),
  };
}

/**
 * CIF = Σ wᵢdᵢ, dᵢ = mismatchᵢ / (matchᵢ + mismatchᵢ); missing never imputed as 0 (OBS-14). Each
 * current record (corrections replace their predecessors) gives each dimension at most one status
 * (`statusOf`): contradictions and decisions without stated evidence count as UNKNOWN.
 */
export function cif(
  records: readonly ObservationRecord[],
  weights: Weights,
  required: readonly string[],
  weightsVersion: string,
  options: {
    readonly conflicting?: ReadonlySet<string>;
    readonly unpinned?: ReadonlySet<string>;
    readonly notReverified?: ReadonlySet<string>;
  } = {},
): CifResult {
  const unpinned = options.unpinned ?? NONE;
  const notReverified = options.notReverified ?? NONE;
  // Each reason makes every dimension of the record UNKNOWN (`statusOf`); each is listed apart.
  const conflicting = new Set([...(options.conflicting ?? NONE), ...unpinned, ...notReverified]);
  const contradicted = options.conflicting ?? NONE;
  const perDimension: Record<string, DimensionTally> = {};
  const unresolved: string[] = [];
  const terms: [bigint, bigint][] = [];
  const current = currentRecords(records);
  // ¶27: a required dimension is always tested for resolution, weighted or not (profiles are
  // refused when one is unweighted, but this function does not rely on its caller for that).
  const dimensions = [...weights.names, ...required.filter((r) => !weights.names.includes(r))];
  for (const dim of dimensions) {
    const statuses = current.flatMap((r) => statusOf(r, dim, conflicting) ?? []);
    const match = statuses.filter((s) => s === 'MATCH').length;
    const mismatch = statuses.filter((s) => s === 'MISMATCH').length;
    const unknown = statuses.filter((s) => s === 'UNKNOWN').length;
    const open = match + mismatch === 0 || (required.includes(dim) && unknown > 0);
    perDimension[dim] = {
      match,
      mismatch,
      unknown,
      d: match + mismatch === 0 ? null : rational(mismatch, match + mismatch),
      unresolved: open,
    };
    if (open) unresolved.push(dim);
    else
      terms.push([
        BigInt(weights.micro[dim] ?? 0) * BigInt(mismatch),
        BigInt(MICRO) * BigInt(match + mismatch),
      ]);
  }
  const complete = unresolved.length === 0;
  const [num, den] = addFractions(terms);
  return {
    complete,
    value: complete ? rational(num, den) : null,
    unresolved,
    per_dimension: perDimension,
    conflicting: current.filter((r) => contradicted.has(recordKey(r))).map((r) => r.record_id),
    producer_key_unpinned: current.filter((r) => unpinned.has(recordKey(r))).map((r) => r.record_id),
    not_reverified: current.filter((r) => notReverified.has(recordKey(r))).map((r) => r.record_id),
    weights_version: weightsVersion,
    authorizes: false,
  };
}

/** The `kid` of a signed record's envelope (its JWS protected header); undefined when unreadable. */
export function envelopeKid(r: ObservationRecord): string | undefined {
  const value = r.evidence_envelope?.value;
  if (value === undefined) return undefined;
  try {
    const { kid } = decodeProtectedHeader(value);
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined; // not a readable JWS header: no key to check, so it decides nothing
  }
}

/**
 * Whether a signed record of another producer than `own` is no longer backed by its producer's pin:
 * `pinnedKids` (the producer's current pin; undefined = none) does not hold the key that signed it,
 * or its `kid` is unreadable. Fail closed: such a record stays stored but decides nothing (CIF
 * UNKNOWN `producer_key_unpinned`). Unsigned local records and Baton's own are not judged here.
 */
export function producerKeyUnpinned(
  r: ObservationRecord,
  own: string,
  pinnedKids: ReadonlySet<string> | undefined,
): boolean {
  if (r.evidence_envelope === undefined || producerNamespace(r) === own) return false;
  const kid = envelopeKid(r);
  return kid === undefined || pinnedKids === undefined || !pinnedKids.has(kid);
}

/** B3.7: E_mock = P·(1 − G·R), P, G, R ∈ {0, 1}; always SIMULATED (OBS-24). */
export function eMock(
  p: 0 | 1,
  g: 0 | 1,
  r: 0 | 1,
): { readonly value: 0 | 1; readonly classification: 'SIMULATED' } {
  return { value: p === 1 && !(g === 1 && r === 1) ? 1 : 0, classification: 'SIMULATED' };
}
