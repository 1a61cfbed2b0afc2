/**
 * The append-only evidence log (DESIGN.md §2). Every state change appends one event; the events
 * of one subject (an occurrence, a lineage, a mission…) form a hash chain (`idx` 1, 2, 3…):
 *   hash = digestJcs({ prev, subject, type, body, at, actor })
 * with `prev` the hash of the subject's previous event (null for its first), `body` the JSON value
 * (stored as its JCS text) and `at` integer Unix milliseconds. This module has no UPDATE or
 * DELETE of `evidence_events`: nothing Baton does rewrites history.
 */
import { BatonError } from '../core/errors.js';
import { canonicalize, jcsString } from '../core/jcs.js';
import { digestBytes, type Sha256Digest } from '../core/digest.js';
import type { JsonValue } from '../core/json.js';
import { deferred, type DeferredWrite, type SqlExecutor, type Transaction } from './engine.js';
import { unstorableText } from './errors.js';

export interface EvidenceInput {
  /** The chain this event belongs to, e.g. `occurrence:<id>`. */
  readonly subject: string;
  readonly type: string;
  readonly body: JsonValue;
  /** Unix time in milliseconds (an integer). */
  readonly at: number;
  /** Who caused the change (a principal id, `system`, …); never a credential. */
  readonly actor: string;
  /**
   * The body's JCS text, where its producer assembled it for a fixed shape (`canonicalize(body)`
   * exactly; tests hold each producer to that): stored and hashed as is, not serialized again.
   */
  readonly text?: string;
}

export interface EvidenceEvent extends EvidenceInput {
  /**
   * Position in the whole log, assigned by the database at append: unique, and increasing along
   * each chain. Not gap-free on PostgreSQL (a rolled-back append uses up its number) and, across
   * subjects, not commit order.
   */
  readonly seq: number;
  readonly prev: string | null;
  readonly hash: Sha256Digest;
}

/** An event as appended: also its position in its subject's chain (1, 2, 3…, unique per subject). */
export interface AppendedEvent extends EvidenceEvent {
  readonly idx: number;
}

/** A row as stored: `body` is JCS text; integer columns may come back as strings (pg BIGINT). */
export interface EvidenceRow {
  seq: number | string;
  subject: string;
  /** Absent in an export line (the chain position follows from the prev links there). */
  idx?: number | string;
  type: string;
  body: string;
  at: number | string;
  actor: string;
  prev: string | null;
  hash: string;
}

export const EVIDENCE_COLUMNS = 'seq, subject, idx, type, body, at, actor, prev, hash';

/** The longest event `type` and `actor`. */
const MAX_LABEL = 512;
/**
 * The longest `subject`: room for the longest chain name Baton composes from ids it accepts, a
 * continuity record's `observation:<producer>/<record_id>` (B2; MAX_PRODUCER_ID, MAX_RECORD_ID:
 * 12 + 512 + 1 + 512), so no pin or record its reader accepted is refused here for its chain's
 * name (test/observations/producers-store.test.ts stores the longest of both).
 */
export const MAX_SUBJECT = 1040;

/** Each event's body as JCS text: what is stored and what the hash covers. */
export function bodyTexts(run: readonly EvidenceInput[]): string[] {
  return run.map((e) => e.text ?? canonicalize(e.body));
}

/**
 * The hash of an event from its body's JCS text, without serializing the body again: the JCS of
 * the hash input, whose members sort as actor < at < body < prev < subject < type, is assembled
 * from the JCS of each member (docs/store.md, "Hash input").
 */
export function evidenceHashOfText(
  e: Pick<EvidenceEvent, 'prev' | 'subject' | 'type' | 'at' | 'actor'>,
  bodyText: string,
): Sha256Digest {
  if (!Number.isSafeInteger(e.at)) {
    throw new BatonError('jcs_unsupported_value', 'cannot canonicalize $.at: not an integer', {
      path: '$.at',
    });
  }
  const prev = e.prev === null ? 'null' : jcsString(e.prev, '$.prev');
  const text = `{"actor":${jcsString(e.actor, '$.actor')},"at":${String(e.at)},"body":${bodyText},"prev":${prev},"subject":${jcsString(e.subject, '$.subject')},"type":${jcsString(e.type, '$.type')}}`;
  return digestBytes(text);
}

/** The hash of an event: what links a chain (docs/store.md, "Hash input"). */
export function evidenceHash(e: Omit<EvidenceEvent, 'seq' | 'hash'>): Sha256Digest {
  return evidenceHashOfText(e, canonicalize(e.body));
}

function checkLabel(name: string, value: unknown, max = MAX_LABEL): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw new BatonError('input_invalid', `evidence ${name} must be a non-empty string of at most ${max}`, {
      member: name,
    });
  }
}

function checkInput(e: EvidenceInput): void {
  checkLabel('subject', e.subject, MAX_SUBJECT);
  checkLabel('type', e.type);
  checkLabel('actor', e.actor);
  if (!Number.isSafeInteger(e.at) || e.at < 0) {
    throw new BatonError('input_invalid', 'evidence at must be a non-negative integer of milliseconds', {
      member: 'at',
    });
  }
}

/** A chain's head as this transaction knows it (it holds the head row's lock). */
export interface Head {
  readonly hash: string | null;
  readonly count: number;
}

/**
 * The heads this transaction has already read or written, by subject. A transaction object lives
 * exactly as long as its (logical) transaction — a re-run or a later one gets a new object — so a
 * head cached here is always the current one: the row stays locked until commit.
 */
const knownHeads = new WeakMap<Transaction, Map<string, Head>>();

/** The heads `tx` knows (evidence-runs.ts reads and extends them as the one-run path does). */
export function knownHeadsOf(tx: Transaction): Map<string, Head> {
  let known = knownHeads.get(tx);
  if (known === undefined) knownHeads.set(tx, (known = new Map<string, Head>()));
  return known;
}

/**
 * Tell the log that this transaction created `subject` (a new occurrence): its chain is empty, so
 * its first append needs no head lookup. Only a hint: were it wrong, that append would meet the
 * existing chain at the unique (subject, idx) index and read the head after all.
 */
export function startsChain(tx: Transaction, subject: string): void {
  let known = knownHeads.get(tx);
  if (known === undefined) knownHeads.set(tx, (known = new Map<string, Head>()));
  if (!known.has(subject)) known.set(subject, { hash: null, count: 0 });
}

async function headOf(tx: Transaction, subject: string): Promise<[Map<string, Head>, Head]> {
  let known = knownHeads.get(tx);
  if (known === undefined) knownHeads.set(tx, (known = new Map<string, Head>()));
  const cached = known.get(subject);
  if (cached !== undefined) return [known, cached];
  const row = await tx.get<{ head: string; count: number | string }>(
    `SELECT head, count FROM evidence_heads WHERE subject = ?${tx.forUpdate}`,
    [subject],
  );
  return [known, row === undefined ? { hash: null, count: 0 } : { hash: row.head, count: Number(row.count) }];
}

/**
 * Append one event in the caller's transaction, so the event commits or rolls back with the state
 * change it records. The subject's head row is locked first (PostgreSQL: FOR UPDATE; SQLite: the
 * one writer), which orders the appends of one chain; appends to different chains share no row.
 * The body is serialized once: its JCS text is both what is stored and what the hash covers.
 */
export async function appendEvidence(tx: Transaction, e: EvidenceInput): Promise<AppendedEvent> {
  const [appended] = await appendEvidenceRun(tx, [e]);
  if (appended === undefined) throw new BatonError('internal', 'an append returned no event');
  return appended;
}

const EVENT_ROW = '(?, ?, ?, ?, ?, ?, ?, ?)';

const runInserts = new Map<string, string>();

/**
 * The INSERT of `n` events in one statement (its text cached per `n` and form), taking
 * `chainRun`'s params: RETURNING what the database assigned, or (`rowid`, SQLite) nothing.
 *
 * SQLite's form says `OR IGNORE` instead of `ON CONFLICT DO NOTHING`. Both skip a row whose
 * (subject, idx) is taken, and the caller sees that in the changes count. The difference is the
 * NOT NULL constraints: under `DO NOTHING` they can still abort the statement halfway through
 * several rows, so SQLite keeps a statement journal of every page such an INSERT touches, in case
 * it has to undo only that statement: 13–19 k instructions for a gated entry's two events
 * (callgrind, docs/store.md "No statement journal for an append"). Nothing here can be NULL:
 * `checkInput` refuses such events first. And a row that went missing all the same would show as
 * fewer changes than rows, which the callers refuse (`store_corrupt`). The transaction is rolled
 * back then as well.
 */
export function insertEventsSql(n: number, form: 'returning' | 'rowid' = 'returning'): string {
  const key = `${n}${form}`;
  let sql = runInserts.get(key);
  if (sql === undefined) {
    const rows = Array(n).fill(EVENT_ROW).join(', ');
    sql =
      form === 'rowid'
        ? `INSERT OR IGNORE INTO evidence_events (subject, idx, type, body, at, actor, prev, hash) VALUES ${rows}`
        : `INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash) VALUES ${rows}
       ON CONFLICT DO NOTHING RETURNING seq, subject, idx`;
    runInserts.set(key, sql);
  }
  return sql;
}

/** Parameters per event row of `insertEventsSql`; the row's subject and idx are its first two. */
export const EVENT_ROW_PARAMS = 8;

/**
 * Insert `n` event rows (`chainRun`'s params, in order) and answer the seq of each, in the same
 * order, or how many rows went in when a position was already taken (ON CONFLICT DO NOTHING).
 * Where the engine answers rowids (SQLite) the seqs follow from the last one, without RETURNING
 * (`Transaction.answersRowid`); elsewhere from RETURNING, matched by (subject, idx).
 */
export async function insertEventRows(
  tx: Transaction,
  n: number,
  params: readonly (string | number | null)[],
): Promise<{ readonly inserted: number; readonly seqs?: readonly number[] }> {
  if (tx.answersRowid === true) {
    const { changes, lastRowid } = await tx.run(insertEventsSql(n, 'rowid'), params);
    if (changes !== n) return { inserted: changes };
    if (lastRowid === undefined || !Number.isSafeInteger(lastRowid) || lastRowid < n)
      throw new BatonError('store_corrupt', 'an appended event came back without its seq');
    return { inserted: n, seqs: Array.from({ length: n }, (_, i) => lastRowid - n + 1 + i) };
  }
  const rows = await tx.all<{ seq: number | string; subject: string; idx: number | string }>(
    insertEventsSql(n),
    params,
  );
  if (rows.length !== n) return { inserted: rows.length };
  const seqOf = new Map(rows.map((r) => [`${r.subject}\u0000${Number(r.idx)}`, Number(r.seq)]));
  const seqs = Array.from({ length: n }, (_, i) => {
    const seq = seqOf.get(
      `${String(params[i * EVENT_ROW_PARAMS])}\u0000${Number(params[i * EVENT_ROW_PARAMS + 1])}`,
    );
    if (seq === undefined)
      throw new BatonError('store_corrupt', 'an appended event came back without its seq');
    return seq;
  });
  return { inserted: n, seqs };
}

/** The one subject of a run, each event checked (bad input is refused before anything is written). */
export function checkRun(run: readonly EvidenceInput[]): string {
  const first = run[0];
  if (first === undefined) throw new BatonError('internal', 'an evidence run has at least one event');
  for (const e of run) {
    checkInput(e);
    if (e.subject !== first.subject) throw new BatonError('internal', 'an evidence run has one subject');
  }
  return first.subject;
}

/**
 * A run chained from `head`: each event's position and hash (`seq` 0 until stored) and the
 * `insertEventsSql` parameters of its rows.
 */
export function chainRun(
  run: readonly EvidenceInput[],
  texts: readonly string[],
  head: Head,
): { planned: AppendedEvent[]; params: (string | number | null)[] } {
  const planned: AppendedEvent[] = [];
  const params: (string | number | null)[] = [];
  let prev = head.hash;
  run.forEach((e, i) => {
    const idx = head.count + 1 + i;
    const facts = { prev, subject: e.subject, type: e.type, at: e.at, actor: e.actor };
    const hash = evidenceHashOfText(facts, texts[i] ?? '');
    params.push(e.subject, idx, e.type, texts[i] ?? '', e.at, e.actor, prev, hash);
    planned.push({ seq: 0, idx, ...facts, body: e.body, hash });
    prev = hash;
  });
  return { planned, params };
}

/**
 * Append consecutive events of ONE subject in the caller's transaction, with one head lookup, one
 * multi-row INSERT and one head write however many there are: the same chain, hashes and rows as
 * appending them one by one (`appendEvidence`), in fewer statements (docs/store.md).
 */
export async function appendEvidenceRun(
  tx: Transaction,
  run: readonly EvidenceInput[],
): Promise<AppendedEvent[]> {
  if (run.length === 0) return [];
  const subject = checkRun(run);
  const texts = bodyTexts(run);
  if (tx.serverFunctions === true) return appendByFunction(tx, run, texts);
  for (let attempt = 1; ; attempt++) {
    const [known, head] = await headOf(tx, subject);
    const { planned, params } = chainRun(run, texts, head);
    const { inserted, seqs } = await insertEventRows(tx, run.length, params);
    if (seqs === undefined) {
      known.delete(subject);
      // A new subject has no head row to lock yet: two first appends to it meet at the unique
      // (subject, idx) index instead, where the later one waits for the earlier to commit,
      // inserts nothing, and reads the head again.
      if (inserted === 0 && head.hash === null && attempt < 3) continue;
      throw new BatonError('store_corrupt', 'the evidence chain already has events at these positions', {
        subject: subject,
        idx: head.count + 1,
      });
    }
    const appended = planned.map((p, i) => ({ ...p, seq: seqs[i] as number }));
    const last = appended[appended.length - 1] as AppendedEvent;
    await writeHead(tx, subject, head.hash, last.hash, last.idx, last.seq);
    known.set(subject, { hash: last.hash, count: last.idx });
    return appended;
  }
}

/** Migration 012's refusals, as the statement-by-statement path words them. */
const FUNCTION_REFUSALS: Readonly<Record<string, string>> = {
  BTN01: 'the evidence chain already has events at these positions',
  BTN02: 'the evidence head moved during an append',
};

/**
 * The same run as ONE call of migration 012's `baton_append_evidence` (PostgreSQL, one round trip
 * instead of three): the function locks the head, chains and hashes as above, inserts and writes
 * the head. Every hash it returns is recomputed here from the same texts and its `prev`, so the
 * chain `baton log verify` walks is exactly the one this module would have written (fail closed).
 */
const APPEND_SQL = 'SELECT out_seq, out_idx, out_prev, out_hash FROM baton_append_evidence(?, ?)';

/** Both deferred appends take the run as their second parameter: JSON.stringify's text (DeferOptions.jsonParams). */
const RUN_PARAM = [1] as const;

interface FunctionRow {
  out_seq: number | string;
  out_idx: number | string;
  out_prev: string | null;
  out_hash: string;
}

/** The run's subject; as the statement path would, a U+0000 in a label is refused before anything is sent. */
function storableSubject(run: readonly EvidenceInput[]): string {
  const subject = (run[0] as EvidenceInput).subject;
  const refused = unstorableText([subject, ...run.flatMap((e) => [e.type, e.actor])]);
  if (refused !== undefined) throw refused;
  return subject;
}

/** The function's two parameters, refused as the statement path would refuse them. */
function functionParams(run: readonly EvidenceInput[], texts: readonly string[]): [string, string] {
  const subject = storableSubject(run);
  return [subject, JSON.stringify(run.map((e, i) => [e.type, texts[i], e.at, e.actor]))];
}

async function appendByFunction(
  tx: Transaction,
  run: readonly EvidenceInput[],
  texts: readonly string[],
): Promise<AppendedEvent[]> {
  const params = functionParams(run, texts);
  let rows: FunctionRow[];
  try {
    rows = await tx.all<FunctionRow>(APPEND_SQL, params);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = typeof code === 'string' ? FUNCTION_REFUSALS[code] : undefined;
    if (why !== undefined)
      throw new BatonError('store_corrupt', why, { subject: params[0] }, { cause: error });
    throw error;
  }
  return checkedByBaton(tx, run, texts, rows);
}

/**
 * The same run, deferred (migration 016, docs/store.md "One round trip per transition"): the
 * `baton_append_evidence` call leaves with the transaction's next statement or before its COMMIT,
 * and every hash it returns is checked then, exactly as `appendByFunction` checks it; a
 * difference fails the transaction before it commits. Only for callers that do not need the
 * appended events back.
 */
export function deferEvidenceRun(tx: Transaction, run: readonly EvidenceInput[]): void {
  if (run.length === 0) return;
  const subject = checkRun(run);
  const texts = bodyTexts(run);
  const head = knownHeads.get(tx)?.get(subject);
  if (head !== undefined) return deferKnown(tx, run, texts, head);
  const check = (rows: readonly object[]): void => void checkedByBaton(tx, run, texts, rows as FunctionRow[]);
  if (!deferred(tx, APPEND_SQL, functionParams(run, texts), { rows: check, jsonParams: RUN_PARAM }))
    throw new BatonError('internal', 'deferEvidenceRun on a transaction that cannot defer');
}

const APPEND_KNOWN_SQL = 'SELECT baton_append_known(?, ?, ?, ?) AS n';

/**
 * A deferred run on a chain whose head this transaction holds (it started the chain, or locked its
 * head row: `holdsHead`): chained and hashed HERE, once, from that head, and stored as is by
 * migration 014's `baton_append_known`, which refuses (BTN10: the transaction runs again statement
 * by statement) unless exactly these positions were free and the head was still this one. Nothing
 * comes back to check, so the call may leave with the COMMIT (postgres.ts).
 */
function deferKnown(
  tx: Transaction,
  run: readonly EvidenceInput[],
  texts: readonly string[],
  head: Head,
): void {
  // The same refusals as the other paths (not their parameters: this call stores the run as chained here).
  const subject = storableSubject(run);
  let prev = head.hash;
  const events = run.map((e, i) => {
    const text = texts[i] ?? '';
    const hash = evidenceHashOfText({ prev, subject, type: e.type, at: e.at, actor: e.actor }, text);
    const event = [e.type, text, e.at, e.actor, prev, hash];
    prev = hash;
    return event;
  });
  // Serialized once, whether the run joins the waiting one or leaves as its own call.
  const json = JSON.stringify(events);
  if (!joinsWaitingRun(tx, subject, head, events, json)) {
    if (tx.deferrable !== true || tx.defer === undefined)
      throw new BatonError('internal', 'deferEvidenceRun on a transaction that cannot defer');
    const write = tx.defer(APPEND_KNOWN_SQL, [subject, json, head.hash, head.count], {
      jsonParams: RUN_PARAM,
    });
    waitingRunsOf(tx).set(subject, { write, head, events, json });
  }
  knownHeads.get(tx)?.set(subject, { hash: prev, count: head.count + run.length });
}

/** A deferred `baton_append_known` not sent yet: the head it starts from and its chained events. */
interface WaitingRun {
  readonly write: DeferredWrite;
  readonly head: Head;
  events: unknown[][];
  /** `JSON.stringify(events)`, as sent: a joining run appends its own to it, not re-serializing these. */
  json: string;
}

const waitingRuns = new WeakMap<Transaction, Map<string, WaitingRun>>();

function waitingRunsOf(tx: Transaction): Map<string, WaitingRun> {
  let waiting = waitingRuns.get(tx);
  if (waiting === undefined) waitingRuns.set(tx, (waiting = new Map<string, WaitingRun>()));
  return waiting;
}

/**
 * One append per chain per call (docs/store.md "One row version per transition"): a run that
 * continues the chain's run still waiting in this transaction's deferred call (the head it starts
 * from is where that run ends) joins it — one INSERT of both runs' events at the same positions,
 * with the same hashes, and one head write, to the same final head — instead of a second call.
 * False when there is no such run or it has left: the caller defers its own.
 */
function joinsWaitingRun(
  tx: Transaction,
  subject: string,
  head: Head,
  events: unknown[][],
  eventsJson: string,
): boolean {
  const waiting = waitingRuns.get(tx)?.get(subject);
  if (waiting === undefined) return false;
  const last = waiting.events[waiting.events.length - 1];
  const continues = waiting.head.count + waiting.events.length === head.count && last?.[5] === head.hash;
  // Both are non-empty JSON arrays: '[a,b]' and '[c]' join as '[a,b,c]', JSON.stringify of both runs.
  const json = `${waiting.json.slice(0, -1)},${eventsJson.slice(1)}`;
  if (!continues || !waiting.write.amend([subject, json, waiting.head.hash, waiting.head.count])) {
    waitingRuns.get(tx)?.delete(subject);
    return false;
  }
  waiting.events = [...waiting.events, ...events];
  waiting.json = json;
  return true;
}

/**
 * Tell the log the head of `subject` as this transaction just read it FOR UPDATE (PostgreSQL's
 * `baton_lock_observe_head`): its appends to that chain then need no head lookup.
 */
export function holdsHead(tx: Transaction, subject: string, hash: string | null, count: number): void {
  let known = knownHeads.get(tx);
  if (known === undefined) knownHeads.set(tx, (known = new Map<string, Head>()));
  known.set(subject, { hash, count });
}

function checkedByBaton(
  tx: Transaction,
  run: readonly EvidenceInput[],
  texts: readonly string[],
  rows: readonly FunctionRow[],
): AppendedEvent[] {
  const subject = (run[0] as EvidenceInput).subject;
  if (rows.length !== run.length) throw new BatonError('store_corrupt', 'an append returned no event');
  const appended = run.map((e, i): AppendedEvent => {
    const r = rows[i] as (typeof rows)[number];
    const facts = { prev: r.out_prev, subject, type: e.type, at: e.at, actor: e.actor };
    const hash = evidenceHashOfText(facts, texts[i] ?? '');
    if (hash !== r.out_hash || (i > 0 && r.out_prev !== rows[i - 1]?.out_hash)) {
      throw new BatonError('internal', 'the database computed another evidence hash than Baton');
    }
    return { seq: Number(r.out_seq), idx: Number(r.out_idx), ...facts, body: e.body, hash };
  });
  const last = appended[appended.length - 1] as AppendedEvent;
  knownHeads.get(tx)?.set(subject, { hash: last.hash, count: last.idx });
  return appended;
}

async function writeHead(
  tx: Transaction,
  subject: string,
  prev: string | null,
  hash: string,
  idx: number,
  seq: number,
): Promise<void> {
  if (prev === null) {
    await tx.run('INSERT INTO evidence_heads (subject, head, count, last_seq) VALUES (?, ?, ?, ?)', [
      subject,
      hash,
      idx,
      seq,
    ]);
    return;
  }
  const { changes } = await tx.run(
    'UPDATE evidence_heads SET head = ?, count = ?, last_seq = ? WHERE subject = ? AND head = ?',
    [hash, idx, seq, subject, prev],
  );
  if (changes !== 1) throw new BatonError('store_corrupt', 'the evidence head moved during an append');
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
    `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE subject = ? ORDER BY idx`,
    [subject],
  );
  return rows.map(eventFromRow);
}

/**
 * One page of a subject's chain, oldest first: at most `limit` events at chain positions after
 * `after` (0: from the start), each with its position (`idx`) for the next page's cursor. A keyset
 * range over migration 004's UNIQUE (subject, idx): a page reads about a page of index entries
 * however long the chain, and events appended while a reader pages only add later positions.
 * Not verified: `verifyEvidence` does that.
 */
export async function pageEvidence(
  tx: SqlExecutor,
  subject: string,
  after: number,
  limit: number,
): Promise<AppendedEvent[]> {
  const rows = await tx.all<EvidenceRow>(
    `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE subject = ? AND idx > ? ORDER BY idx LIMIT ?`,
    [subject, after, limit],
  );
  return rows.map((row) => ({ ...eventFromRow(row), idx: Number(row.idx) }));
}
