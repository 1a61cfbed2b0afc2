/**
 * Facts for continuity records and metrics, read from the evidence log itself (B3.3, B3.5): every
 * chain used is re-verified here (hashes, prev links, positions and the recorded head), so an
 * edited event or row is a failed criterion, not a silent pass.
 */
import type { JsonValue } from '../core/json.js';
import { occurrenceIdOf, type BypassPath } from '../occurrences/index.js';
import type { ActionEvidence, ChainEvent, HandoffFacts } from '../observations/index.js';
import type { SqlExecutor } from './engine.js';
import { EVIDENCE_COLUMNS, evidenceHashOfText, type EvidenceRow } from './evidence-log.js';

export interface VerifiedChain {
  readonly subject: string;
  readonly verifies: boolean;
  readonly events: readonly (ChainEvent & {
    readonly idx: number;
    readonly hash: string;
    readonly at: number;
    readonly actor: string;
  })[];
}

export async function readChain(ex: SqlExecutor, subject: string): Promise<VerifiedChain> {
  const rows = await ex.all<EvidenceRow>(
    `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE subject = ? ORDER BY idx`,
    [subject],
  );
  const head = await ex.get<{ head: string; count: number | string }>(
    'SELECT head, count FROM evidence_heads WHERE subject = ?',
    [subject],
  );
  let ok = rows.length === 0 ? head === undefined : head !== undefined && Number(head.count) === rows.length;
  let prev: string | null = null;
  const events = rows.map((row, i) => {
    const at = Number(row.at);
    let body: JsonValue = null;
    try {
      body = JSON.parse(row.body) as JsonValue;
    } catch {
      ok = false;
    }
    const hash = evidenceHashOfText(
      { prev: row.prev, subject: row.subject, type: row.type, at, actor: row.actor },
      row.body,
    );
    if (hash !== row.hash || row.prev !== prev || Number(row.idx) !== i + 1) ok = false;
    prev = row.hash;
    return {
      seq: Number(row.seq),
      idx: Number(row.idx),
      type: row.type,
      body,
      hash: row.hash,
      at,
      actor: row.actor,
    };
  });
  if (head !== undefined && head.head !== prev) ok = false;
  return { subject, verifies: ok, events };
}

export interface DomainFacts {
  readonly id: string;
  readonly bypassPaths: readonly BypassPath[];
}

export async function readDomain(ex: SqlExecutor): Promise<DomainFacts | undefined> {
  const row = await ex.get<{ id: string; bypass_paths: string }>('SELECT id, bypass_paths FROM aoc_domain');
  return row === undefined
    ? undefined
    : { id: row.id, bypassPaths: JSON.parse(row.bypass_paths) as BypassPath[] };
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

/** The phase an occurrence had just before `seq`, replayed from its chain. */
function phaseBefore(chain: VerifiedChain, seq: number): string | null {
  let phase: string | null = null;
  for (const e of chain.events) {
    if (e.seq >= seq) break;
    if (e.type === 'occurrence_created') phase = 'reserved';
    else if (e.type === 'provider_entered') phase = 'entered';
    else if (e.type === 'released') phase = 'released';
    else if (e.type === 'state_changed') {
      const to = obj(obj(e.body)['to'])['phase'];
      if (typeof to === 'string') phase = to;
    }
  }
  return phase;
}

async function lineageOccurrences(ex: SqlExecutor, lineage: string): Promise<string[]> {
  const rows = await ex.all<{ id: string }>('SELECT id FROM aoc_occurrences WHERE lineage = ? ORDER BY id', [
    lineage,
  ]);
  return rows.map((r) => r.id);
}

async function registeredDigests(ex: SqlExecutor, beforeSeq: number): Promise<Set<string>> {
  const rows = await ex.all<{ body: string }>(
    "SELECT body FROM evidence_events WHERE type = 'profile_registered' AND seq < ?",
    [beforeSeq],
  );
  return new Set(rows.map((r) => String(obj(JSON.parse(r.body))['digest'])));
}

/**
 * Handoff records already stored per lineage scope (one per generation, B3.3). Only records
 * shaped as the projector writes them count — signed, under Baton's handoff record ids — so no
 * other row under the producer (one stored before submissions were kept out of Baton's
 * namespace, OBS-08 ¶19) can make the incremental projector skip a lineage. A correction
 * (`supersedes`, appended when the analysis revision changed) restates a generation already
 * counted, so it is not counted again.
 */
async function recordedHandoffs(ex: SqlExecutor, domain: string): Promise<Map<string, number>> {
  const prefix = `urn:baton:${domain}:record:handoff:`;
  const rows = await ex.all<{ scope_id: string; n: number | string }>(
    "SELECT scope_id, COUNT(*) AS n FROM cop_records WHERE producer = ? AND event_type = 'handoff' AND envelope IS NOT NULL AND supersedes IS NULL AND substr(record_id, 1, ?) = ? GROUP BY scope_id",
    [`urn:baton:${domain}`, prefix.length, prefix],
  );
  return new Map(rows.map((r) => [r.scope_id, Number(r.n)]));
}

export interface HandoffScan {
  /** Facts to project (and, for recorded ones, to recheck against the stored bytes). */
  readonly facts: HandoffFacts[];
  /** Records not re-derived: lineages whose every generation already has its record (incremental). */
  readonly skipped: number;
  /**
   * The scope ids (`urn:baton:<domain>:lineage:<L>`) of those lineages: their chains were not read
   * by this scan, so their records are not re-verified by it (OBS-13 ¶26).
   */
  readonly skippedScopes: readonly string[];
}

/**
 * Facts for the handoff record of every takeover on every lineage. `incremental` skips a lineage
 * whose every generation already has its record (a generation only grows by takeover), so a
 * steady-state projection reads two small queries, not every chain; a full scan re-derives every
 * record, which is how an altered event surfaces as a conflict (`baton report`).
 */
export async function handoffFacts(
  ex: SqlExecutor,
  domain: string,
  only?: string,
  incremental = false,
): Promise<HandoffScan> {
  const rows =
    only === undefined
      ? await ex.all<{ id: string; generation: number | string }>(
          'SELECT id, generation FROM aoc_lineages ORDER BY id',
        )
      : await ex.all<{ id: string; generation: number | string }>(
          'SELECT id, generation FROM aoc_lineages WHERE id = ?',
          [only],
        );
  const recorded = incremental ? await recordedHandoffs(ex, domain) : new Map<string, number>();
  let skipped = 0;
  const skippedScopes: string[] = [];
  const lineages = rows.filter((r) => {
    const scope = `urn:baton:${domain}:lineage:${r.id}`;
    const n = recorded.get(scope) ?? 0;
    if (n < Number(r.generation)) return true;
    skipped += n;
    skippedScopes.push(scope);
    return false;
  });
  const out: HandoffFacts[] = [];
  if (lineages.length === 0) return { facts: out, skipped, skippedScopes };
  const domainChain = await readChain(ex, `domain:${domain}`);
  for (const { id: lineage } of lineages) {
    const chain = await readChain(ex, `lineage:${lineage}`);
    const occurrences = await Promise.all(
      (await lineageOccurrences(ex, lineage)).map((o) => readChain(ex, `occurrence:${o}`)),
    );
    let previousSeq = 0;
    for (const e of chain.events.filter((x) => x.type === 'generation_advanced')) {
      const body = obj(e.body);
      const delivered = obj(body['delivered']);
      const open = occurrences.filter((c) => {
        const p = phaseBefore(c, e.seq);
        return p === 'reserved' || p === 'entered';
      });
      const registered = await registeredDigests(ex, e.seq);
      const unregistered = open
        .map((c) => String(obj(obj(c.events[0]?.body)['provider'])['profileDigest']))
        .filter((d) => !registered.has(d));
      // B3.3 authority: MATCH iff the takeover transaction wrote no `authority:*` event. The log
      // records no transaction identity, only that every event one transaction appends carries its
      // one instant and actor (the takeover appends with one `now`): an `authority:*` event the
      // takeover wrote would share its `at` and `actor`. Candidates: every `authority_created` (the
      // one event Baton writes on an `authority:*` chain) with that instant and actor, by the
      // (type, at) index, and an `authority:*` event of any type adjacent in seq. None: MATCH.
      // Any: undecidable (an authority created by the same actor in the same millisecond looks
      // exactly like one written by the takeover), so UNKNOWN, never a guessed MISMATCH (OBS-13).
      const authorityEvents = await ex.get<{ n: number | string }>(
        "SELECT COUNT(*) AS n FROM evidence_events WHERE subject LIKE 'authority:%' AND at = ? AND actor = ? AND (type = 'authority_created' OR seq BETWEEN ? AND ?)",
        [e.at, e.actor, e.seq - 1, e.seq + 1],
      );
      const reconfigured = domainChain.events.filter((d) => d.seq > previousSeq && d.seq < e.seq).at(-1);
      out.push({
        domain,
        lineage,
        takeover: {
          seq: e.seq,
          idx: e.idx,
          hash: e.hash,
          at: e.at,
          generation: Number(body['generation']),
          retiredGeneration: body['retiredGeneration'] === null ? null : Number(body['retiredGeneration']),
          delivered: {
            reserved: (delivered['reserved'] as string[] | undefined) ?? [],
            unresolved: (delivered['unresolved'] as string[] | undefined) ?? [],
          },
        },
        authorityEventsAtTakeover: Number(authorityEvents?.n ?? 0),
        lineageChainVerifies: chain.verifies,
        occurrenceChainsVerify: occurrences.every((c) => c.verifies),
        domainChainVerifies: domainChain.verifies,
        openAtSeq: open.map((c) => occurrenceIdOf(c.subject) ?? c.subject),
        unregisteredProfileDigests: [...new Set(unregistered)],
        reconfiguredBy: previousSeq === 0 ? null : (reconfigured?.hash ?? null),
      });
      previousSeq = e.seq;
    }
  }
  return { facts: out, skipped, skippedScopes };
}

export interface EnteredOccurrence {
  readonly id: string;
  /** The lineage its `occurrence_created` event names (the row's when the log has none). */
  readonly lineage: string;
  /** Its first `provider_entered` event's time (the row's `entered_at` when the log has none). */
  readonly enteredAt: number;
  /**
   * The occurrence row agrees with the log about the entry: its `entered_at` is the first
   * `provider_entered` event's `at` and its `lineage` the one `occurrence_created` names.
   */
  readonly rowAgreesWithLog: boolean;
}

const IN_CHUNK = 500;

/** `SELECT … WHERE <column> IN (…)` over `ids`, in chunks (both engines bound a statement's parameters). */
async function allIn<R extends object>(
  ex: SqlExecutor,
  sql: (placeholders: string) => string,
  ids: readonly string[],
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < ids.length; i += IN_CHUNK) {
    const chunk = ids.slice(i, i + IN_CHUNK);
    out.push(...(await ex.all<R>(sql(chunk.map(() => '?').join(', ')), chunk)));
  }
  return out;
}

const OCCURRENCE = 'occurrence:';

/**
 * The FIC_obs universe U (B3.5): occurrences entered in the window (and lineage), one entry = one
 * consequential action — read from the evidence log, cross-checked with the occurrence rows. An
 * occurrence is in U when its `provider_entered` event or its row's `entered_at` is in the window
 * (and its `occurrence_created` event or its row names the lineage): editing the mutable row
 * (nulling or moving `entered_at`, changing `lineage`) cannot take an entry out of n. A row that
 * disagrees with the log is kept in U and marked, and fails C1 (B7-10: a tampered occurrence is in
 * n, not in v).
 */
export async function enteredOccurrences(
  ex: SqlExecutor,
  f: { lineage?: string; from?: number; to?: number },
): Promise<EnteredOccurrence[]> {
  const window = (column: string): { where: string; params: number[] } => {
    const where: string[] = [];
    const params: number[] = [];
    if (f.from !== undefined) {
      where.push(`${column} >= ?`);
      params.push(f.from);
    }
    if (f.to !== undefined) {
      where.push(`${column} <= ?`);
      params.push(f.to);
    }
    return { where: where.map((w) => ` AND ${w}`).join(''), params };
  };
  const inLog = window('at');
  const logged = await ex.all<{ subject: string }>(
    `SELECT DISTINCT subject FROM evidence_events WHERE type = 'provider_entered'${inLog.where}`,
    inLog.params,
  );
  const inRows = window('entered_at');
  const rowed = await ex.all<{ id: string }>(
    `SELECT id FROM aoc_occurrences WHERE entered_at IS NOT NULL${inRows.where}`,
    inRows.params,
  );
  const ids = [
    ...new Set([
      ...logged
        .filter((r) => r.subject.startsWith(OCCURRENCE))
        .map((r) => r.subject.slice(OCCURRENCE.length)),
      ...rowed.map((r) => r.id),
    ]),
  ].sort();
  if (ids.length === 0) return [];
  const subjects = ids.map((id) => `${OCCURRENCE}${id}`);
  const rows = new Map(
    (
      await allIn<{ id: string; lineage: string; entered_at: number | string | null }>(
        ex,
        (p) => `SELECT id, lineage, entered_at FROM aoc_occurrences WHERE id IN (${p})`,
        ids,
      )
    ).map((r) => [r.id, r]),
  );
  const events = await allIn<{ subject: string; type: string; body: string; at: number | string }>(
    ex,
    (p) =>
      `SELECT subject, type, body, at FROM evidence_events WHERE subject IN (${p}) AND type IN ('occurrence_created', 'provider_entered') ORDER BY seq`,
    subjects,
  );
  const created = new Map<string, string | null>();
  const entered = new Map<string, number>();
  for (const e of events) {
    const id = e.subject.slice(OCCURRENCE.length);
    if (e.type === 'occurrence_created' && !created.has(id)) {
      let lineage: unknown = null;
      try {
        lineage = obj(JSON.parse(e.body))['lineage'];
      } catch {
        // An unreadable body names no lineage; the chain check (C1) fails it too.
      }
      created.set(id, typeof lineage === 'string' ? lineage : null);
    } else if (e.type === 'provider_entered' && !entered.has(id)) entered.set(id, Number(e.at));
  }
  const out: EnteredOccurrence[] = [];
  for (const id of ids) {
    const row = rows.get(id);
    const logLineage = created.get(id) ?? null;
    const logAt = entered.get(id);
    const rowAt = row?.entered_at === null || row?.entered_at === undefined ? null : Number(row.entered_at);
    const lineage = logLineage ?? row?.lineage;
    const enteredAt = logAt ?? rowAt;
    if (lineage === undefined || enteredAt === null) continue; // neither side says it entered
    if (f.lineage !== undefined && row?.lineage !== f.lineage && logLineage !== f.lineage) continue;
    out.push({
      id,
      lineage,
      enteredAt,
      rowAgreesWithLog: row !== undefined && rowAt === logAt && row.lineage === logLineage,
    });
  }
  return out.sort((a, b) => a.enteredAt - b.enteredAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The lineages each occurrence belongs to, by its `occurrence_created` event and by its row (both,
 * when they disagree: a scope filter built on them then keeps it rather than drop it, B3.6).
 */
export async function occurrenceLineages(
  ex: SqlExecutor,
  ids: readonly string[],
): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const add = (id: string, lineage: unknown): void => {
    if (typeof lineage !== 'string') return;
    const set = out.get(id) ?? new Set<string>();
    set.add(lineage);
    out.set(id, set);
  };
  const unique = [...new Set(ids)];
  for (const r of await allIn<{ id: string; lineage: string }>(
    ex,
    (p) => `SELECT id, lineage FROM aoc_occurrences WHERE id IN (${p})`,
    unique,
  ))
    add(r.id, r.lineage);
  for (const e of await allIn<{ subject: string; body: string }>(
    ex,
    (p) =>
      `SELECT subject, body FROM evidence_events WHERE subject IN (${p}) AND type = 'occurrence_created'`,
    unique.map((id) => `${OCCURRENCE}${id}`),
  )) {
    try {
      add(e.subject.slice(OCCURRENCE.length), obj(JSON.parse(e.body))['lineage']);
    } catch {
      // An unreadable body names no lineage.
    }
  }
  return out;
}

interface BindingRow {
  profile_id: string;
  profile_version: string;
  profile_digest: string;
  account: string;
  environment: string;
  request_digest: string;
  native_key_rule: string;
  native_key: string | null;
  provider_reference: string | null;
}

export async function actionEvidence(ex: SqlExecutor, o: EnteredOccurrence): Promise<ActionEvidence> {
  const chain = await readChain(ex, `occurrence:${o.id}`);
  const lineage = await readChain(ex, `lineage:${o.lineage}`);
  const row = await ex.get<BindingRow>(
    'SELECT profile_id, profile_version, profile_digest, account, environment, request_digest, native_key_rule, native_key, provider_reference FROM aoc_occurrences WHERE id = ?',
    [o.id],
  );
  // C5's "Mission-bound" is the harness's gate row, the same one provider entry reads (C-B7, B7-10).
  const gate = await ex.get<{ mission_origin: string; mission_id: string }>(
    'SELECT mission_origin, mission_id FROM msn_occurrence_gates WHERE occurrence_id = ?',
    [o.id],
  );
  return {
    occurrence: o.id,
    rowAgreesWithLog: o.rowAgreesWithLog,
    missionGate: gate === undefined ? null : { origin: gate.mission_origin, id: gate.mission_id },
    chainVerifies: chain.verifies,
    events: chain.events,
    lineageChainVerifies: lineage.verifies,
    lineageEvents: lineage.events,
    storedBinding:
      row === undefined
        ? null
        : {
            profileId: row.profile_id,
            profileVersion: row.profile_version,
            profileDigest: row.profile_digest,
            account: row.account,
            environment: row.environment,
            requestDigest: row.request_digest,
            nativeKeyRule: row.native_key_rule,
            nativeKey: row.native_key,
            providerReference: row.provider_reference,
          },
  };
}
