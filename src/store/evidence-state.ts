/**
 * The state rows checked against their own evidence chains (docs/store.md, "What verify catches").
 * An occurrence row and an authority budget row are what Baton decides from; their chains are what
 * it recorded deciding. AOC-REQ-004 and -012 make a recorded decision and the consumed-authority
 * record immutable, so a row that says something its chain does not (an unknown occurrence edited
 * to resolved/success, a budget handed back) is a verification problem, never a quiet new truth.
 *
 * The walk feeds every intact event of an `occurrence:` or `authority:` chain to `StateFold`, which
 * keeps, per occurrence, what its chain records: the creation facts (as one digest, to stay small
 * on a big store), the phase, outcome, effect and conflict flag, the entry, release and resolution
 * times, the entering generation and the provider reference. The authority budget is recomputed
 * from those occurrence chains, not taken from the `reservedAfter`/`consumedAfter` an event
 * carries: reserved is the sum of the amounts of the occurrences whose chain leaves them reserved,
 * consumed of those it records as entered (entered or resolved), which holds whatever order
 * concurrent transactions on PostgreSQL took their `seq` in. Updated-at times and row versions are
 * bookkeeping no event records, and are not compared.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../core/jcs.js';
import type { JsonValue } from '../core/json.js';
import { occurrenceIdOf, occurrenceSubject } from '../occurrences/index.js';
import type { SqlExecutor } from './engine.js';
import type { BrokenLink } from './evidence-chain.js';
import type { EvidenceEvent } from './evidence-log.js';
import { OCCURRENCE_COLUMNS } from './occurrences-rows.js';

const PAGE = 1000;
const AUTHORITY = 'authority:';

type Value = string | null;
type Row = Record<string, string | number | null>;

/** The columns an occurrence's creation fixes for good (occurrence_created records each). */
const CREATION_COLUMNS = [
  'lineage',
  'creation_scope',
  'creation_key',
  'creation_digest',
  'profile_id',
  'profile_version',
  'profile_digest',
  'account',
  'environment',
  'request_digest',
  'native_key_rule',
  'native_key',
  'captured_generation',
  'entry_deadline',
  'authority_id',
  'authority_amount',
  'authority_unit',
  'remedy_of',
  'remedy_kind',
  'reissue_of',
  'created_at',
] as const;

interface Expected {
  /** The seq of the chain's last event seen: where a problem with the row is reported. */
  seq: number;
  /** Digest of CREATION_COLUMNS' values as occurrence_created records them. */
  readonly creation: string;
  /** The JCS text of the linked identifiers it was created with. */
  readonly linkedAtCreation: string;
  readonly authorityId: string;
  readonly amount: number;
  phase: Value;
  outcome: Value;
  effect: Value;
  conflict: Value;
  enteredAt: Value;
  enteredGeneration: Value;
  releasedAt: Value;
  resolvedAt: Value;
  providerReference: Value;
}

interface AuthorityCreated {
  readonly seq: number;
  readonly unit: Value;
  readonly total: Value;
}

const str = (v: JsonValue | undefined | number | string | null): Value =>
  v === undefined || v === null ? null : typeof v === 'object' ? canonicalize(v) : String(v);

function field(body: JsonValue, ...path: string[]): JsonValue | undefined {
  let at: JsonValue | undefined = body;
  for (const k of path) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = at[k];
  }
  return at;
}

/** CREATION_COLUMNS' values as an occurrence_created event records them. */
function createdValues(body: JsonValue, at: number): Value[] {
  const f = (...p: string[]) => str(field(body, ...p));
  return [
    f('lineage'),
    f('creationBinding', 'scope'),
    f('creationBinding', 'key'),
    f('creationBinding', 'requestDigest'),
    f('provider', 'profileId'),
    f('provider', 'profileVersion'),
    f('provider', 'profileDigest'),
    f('provider', 'account'),
    f('provider', 'environment'),
    f('provider', 'requestDigest'),
    f('provider', 'nativeKeyRule'),
    f('provider', 'nativeKey'),
    f('capturedGeneration'),
    f('entryDeadline'),
    f('authority', 'id'),
    f('authority', 'amount'),
    f('authority', 'unit'),
    f('remedyOf'),
    f('remedyKind'),
    f('reissueOf'),
    String(at),
  ];
}

const digestOf = (values: readonly Value[]): string =>
  createHash('sha256').update(JSON.stringify(values)).digest('base64');

const rowValues = (row: Row, columns: readonly string[]): Value[] => columns.map((c) => str(row[c]));

export class StateFold {
  readonly #occurrences = new Map<string, Expected>();
  readonly #authorities = new Map<string, AuthorityCreated>();
  readonly #problems: BrokenLink[] = [];
  #lastSeq = 0;

  /** Every problem found, in the order found. */
  get problems(): readonly BrokenLink[] {
    return this.#problems;
  }

  /** Feed one intact event, in seq order; events of other subjects are ignored. */
  feed(e: EvidenceEvent): void {
    this.#lastSeq = e.seq;
    if (e.subject.startsWith(AUTHORITY)) {
      if (e.type === 'authority_created') {
        const id = e.subject.slice(AUTHORITY.length);
        this.#authorities.set(id, {
          seq: e.seq,
          unit: str(field(e.body, 'unit')),
          total: str(field(e.body, 'total')),
        });
      }
      return;
    }
    const id = occurrenceIdOf(e.subject);
    if (id === undefined) return;
    if (e.type === 'occurrence_created') {
      this.#occurrences.set(id, created(e));
      return;
    }
    const x = this.#occurrences.get(id);
    if (x === undefined) return;
    x.seq = e.seq;
    apply(x, e);
  }

  #add(seq: number, subject: string, reason: string): void {
    if (this.#problems.length < 10_000) this.#problems.push({ seq, subject, reason });
  }

  /** Compare one occurrence row with what its chain records (once: the entry is then dropped). */
  async compareOccurrence(ex: SqlExecutor, row: Row): Promise<void> {
    const id = String(row['id']);
    const subject = occurrenceSubject(id);
    const x = this.#occurrences.get(id);
    if (x === undefined) {
      this.#add(
        this.#lastSeq,
        subject,
        'the occurrence row has no occurrence_created event in its evidence chain',
      );
      return;
    }
    this.#occurrences.delete(id);
    const differing = mutableDiffs(x, row);
    if (digestOf(rowValues(row, CREATION_COLUMNS)) !== x.creation) {
      differing.unshift(...(await creationDiffs(ex, subject, row)));
    }
    if (differing.length > 0) {
      this.#add(
        x.seq,
        subject,
        `the occurrence row's ${differing.join(', ')} ${differing.length === 1 ? 'differs' : 'differ'} from what its evidence chain records`,
      );
    }
  }

  /** Every occurrence row, page by page, then every authority row (after the whole walk). */
  async compareRows(ex: SqlExecutor, onRows?: (p: { readonly occurrences: number }) => void): Promise<void> {
    // The budget sums are taken before the comparison drops each occurrence it has compared.
    const sums = this.#sums();
    let after = '';
    let compared = 0;
    for (;;) {
      const rows = await ex.all<Row>(
        `SELECT ${OCCURRENCE_COLUMNS.join(', ')} FROM aoc_occurrences WHERE id > ? ORDER BY id LIMIT ${PAGE}`,
        [after],
      );
      for (const row of rows) await this.compareOccurrence(ex, row);
      const last = rows.at(-1);
      if (last === undefined) break;
      after = String(last['id']);
      compared += rows.length;
      onRows?.({ occurrences: compared });
    }
    for (const [id, x] of this.#occurrences) {
      this.#add(
        x.seq,
        occurrenceSubject(id),
        'the evidence chain records the occurrence but its row is missing',
      );
    }
    await this.#compareAuthorities(ex, sums);
  }

  /**
   * One occurrence's row (the detail's check, `verifySubject`): after its chain alone was fed.
   * A row that is missing while its chain records the occurrence is a problem too.
   */
  async compareOne(ex: SqlExecutor, id: string): Promise<void> {
    const row = await ex.get<Row>(
      `SELECT ${OCCURRENCE_COLUMNS.join(', ')} FROM aoc_occurrences WHERE id = ?`,
      [id],
    );
    if (row !== undefined) await this.compareOccurrence(ex, row);
    const x = this.#occurrences.get(id);
    if (row === undefined && x !== undefined) {
      this.#add(
        x.seq,
        occurrenceSubject(id),
        'the evidence chain records the occurrence but its row is missing',
      );
    }
  }

  #sums(): Map<string, { reserved: number; consumed: number }> {
    const sums = new Map<string, { reserved: number; consumed: number }>();
    for (const x of this.#occurrences.values()) {
      const s = sums.get(x.authorityId) ?? { reserved: 0, consumed: 0 };
      if (x.phase === 'reserved') s.reserved += x.amount;
      else if (x.phase === 'entered' || x.phase === 'resolved') s.consumed += x.amount;
      sums.set(x.authorityId, s);
    }
    return sums;
  }

  async #compareAuthorities(
    ex: SqlExecutor,
    sums: Map<string, { reserved: number; consumed: number }>,
  ): Promise<void> {
    let after = '';
    for (;;) {
      const rows = await ex.all<Row>(
        `SELECT id, unit, total, reserved, consumed FROM aoc_authorities WHERE id > ? ORDER BY id LIMIT ${PAGE}`,
        [after],
      );
      for (const row of rows) this.#compareAuthority(row, sums);
      const last = rows.at(-1);
      if (last === undefined) break;
      after = String(last['id']);
    }
    for (const [id, a] of this.#authorities) {
      this.#add(
        a.seq,
        `${AUTHORITY}${id}`,
        'the evidence chain records the authority budget but its row is missing',
      );
    }
  }

  #compareAuthority(row: Row, sums: Map<string, { reserved: number; consumed: number }>): void {
    const id = String(row['id']);
    const subject = `${AUTHORITY}${id}`;
    const a = this.#authorities.get(id);
    if (a === undefined) {
      this.#add(
        this.#lastSeq,
        subject,
        'the authority row has no authority_created event in its evidence chain',
      );
      return;
    }
    this.#authorities.delete(id);
    const s = sums.get(id) ?? { reserved: 0, consumed: 0 };
    const expected: [string, Value][] = [
      ['unit', a.unit],
      ['total', a.total],
      ['reserved', String(s.reserved)],
      ['consumed', String(s.consumed)],
    ];
    const differing = expected.filter(([c, v]) => str(row[c]) !== v).map(([c]) => c);
    if (differing.length > 0) {
      this.#add(
        this.#lastSeq,
        subject,
        `the authority row's ${differing.join(', ')} ${differing.length === 1 ? 'differs' : 'differ'} from what the evidence chains of the budget and its occurrences record`,
      );
    }
  }
}

function created(e: EvidenceEvent): Expected {
  const linked = field(e.body, 'linkedIds');
  return {
    seq: e.seq,
    creation: digestOf(createdValues(e.body, e.at)),
    linkedAtCreation: canonicalize(Array.isArray(linked) ? linked : []),
    authorityId: str(field(e.body, 'authority', 'id')) ?? '',
    amount: Number(field(e.body, 'authority', 'amount') ?? 0),
    phase: 'reserved',
    outcome: 'unknown',
    effect: 'unresolved',
    conflict: '0',
    enteredAt: null,
    enteredGeneration: null,
    releasedAt: null,
    resolvedAt: null,
    providerReference: null,
  };
}

/** What one later event of the chain records (occurrences/machine: enter, release, observe). */
function apply(x: Expected, e: EvidenceEvent): void {
  if (e.type === 'provider_entered') {
    x.phase = 'entered';
    x.enteredAt = String(e.at);
    x.enteredGeneration = str(field(e.body, 'generation'));
  } else if (e.type === 'released') {
    x.phase = 'released';
    x.releasedAt = String(e.at);
  } else if (e.type === 'provider_reference_bound') {
    x.providerReference = str(field(e.body, 'providerReference'));
  } else if (e.type === 'state_changed') {
    const to = (k: string) => str(field(e.body, 'to', k));
    const phase = to('phase');
    // A resolution keeps its first time; leaving resolved (a conflict) clears it (observe.ts).
    x.resolvedAt = phase === 'resolved' ? (x.phase === 'resolved' ? x.resolvedAt : String(e.at)) : null;
    x.phase = phase;
    x.outcome = to('outcome');
    x.effect = to('effect');
    x.conflict = field(e.body, 'to', 'conflict') === true ? '1' : '0';
  }
}

function mutableDiffs(x: Expected, row: Row): string[] {
  // A bound provider reference is appended to the linked identifiers (machine/observe.ts).
  const linked =
    x.providerReference === null
      ? x.linkedAtCreation
      : canonicalize([
          ...(JSON.parse(x.linkedAtCreation) as JsonValue[]),
          { type: 'provider_reference', value: x.providerReference },
        ]);
  const expected: [string, Value][] = [
    ['phase', x.phase],
    ['outcome', x.outcome],
    ['effect', x.effect],
    ['conflict', x.conflict],
    ['entered_at', x.enteredAt],
    ['entered_generation', x.enteredGeneration],
    ['released_at', x.releasedAt],
    ['resolved_at', x.resolvedAt],
    ['provider_reference', x.providerReference],
    ['linked_ids', linked],
  ];
  return expected.filter(([c, v]) => normalized(c, row[c]) !== v).map(([c]) => c);
}

function normalized(column: string, v: string | number | null | undefined): Value {
  // SQLite and PostgreSQL both store the flag as 0/1 (an integer; a string from a BIGINT column).
  if (column === 'conflict') return Number(v) === 1 ? '1' : '0';
  return str(v);
}

/**
 * Which creation columns differ: the digest only says that one does, so the chain's
 * occurrence_created is read again (only for a row that differs) to name them.
 */
async function creationDiffs(ex: SqlExecutor, subject: string, row: Row): Promise<string[]> {
  const e = await ex.get<{ body: string; at: number | string }>(
    "SELECT body, at FROM evidence_events WHERE subject = ? AND type = 'occurrence_created' ORDER BY seq LIMIT 1",
    [subject],
  );
  if (e === undefined) return ['creation columns'];
  let body: JsonValue;
  try {
    body = JSON.parse(e.body) as JsonValue;
  } catch {
    return ['creation columns'];
  }
  const want = createdValues(body, Number(e.at));
  const have = rowValues(row, CREATION_COLUMNS);
  const named = CREATION_COLUMNS.filter((_, i) => want[i] !== have[i]);
  return named.length > 0 ? [...named] : ['creation columns'];
}
