/**
 * The chain walker shared by `verifyEvidence` (over the database) and `verifyCheckpoint` (over an
 * export). Fed events in `seq` order, it recomputes every hash, checks every `prev` link and each
 * chain's contiguity (its `idx` 1, 2, 3… where the rows carry it), then compares the chains it
 * rebuilt with the recorded heads (the heads table or a signed checkpoint), which is what catches
 * a chain whose LAST events were removed. `seq` itself need not be contiguous: on PostgreSQL a
 * rolled-back append leaves a gap. The gaps it saw are kept only to point at where a missing
 * event was: the first seq absent from the log between the two events that should have linked.
 * It keeps walking after a problem and reports the first one by seq.
 */
import { canonicalize } from '../core/jcs.js';
import type { JsonValue } from '../core/json.js';
import { evidenceHashOfText, type EvidenceEvent, type EvidenceRow } from './evidence-log.js';

export interface BrokenLink {
  /** The first seq where the log stops being what Baton wrote (where a missing event was, for a deletion). */
  readonly seq: number;
  /** The chain it belongs to; null when a problem is not one chain's (a count, an unreadable line). */
  readonly subject: string | null;
  readonly reason: string;
}

export interface ChainReport {
  readonly ok: boolean;
  readonly subjects: number;
  readonly events: number;
  /** How many problems were found. */
  readonly problems: number;
  readonly firstBroken?: BrokenLink;
}

/** A recorded head: the heads table row or a checkpoint entry. */
export interface HeadRecord {
  readonly head: string;
  readonly count: number;
  readonly last_seq: number;
}

interface ChainState {
  head: string;
  /** The position of the last event seen (its idx, or the number of events without idx). */
  count: number;
  firstSeq: number;
  lastSeq: number;
}

const MAX_PROBLEMS = 10_000;
// Beyond this many gaps (a long PostgreSQL log with many rollbacks) a missing event is reported at
// the seq where its absence was noticed instead of where it was.
const MAX_GAPS = 200_000;

const range = (from: number, to: number): string => (from === to ? `#${from} is` : `#${from}..#${to} are`);

/**
 * The event a stored row holds, when its own content is intact: a canonical (JCS) body, an
 * integer time and a hash that recomputes from them and `prev`; otherwise why not. Its links to
 * other events are the caller's to check (the walker's, or `verifyHandovers`'s).
 */
export function intactEvent(row: EvidenceRow): EvidenceEvent | string {
  let body: JsonValue;
  try {
    body = JSON.parse(row.body) as JsonValue;
    if (canonicalize(body) !== row.body) return 'body is not in its canonical (JCS) form';
  } catch {
    return 'body is not canonical JSON';
  }
  const at = Number(row.at);
  if (!Number.isSafeInteger(at)) return 'at is not an integer';
  const event = { seq: Number(row.seq), subject: row.subject, type: row.type, body, at, actor: row.actor };
  const hash = evidenceHashOfText({ ...event, prev: row.prev }, row.body);
  if (hash !== row.hash) {
    return 'hash does not match the content (subject, type, body, at, actor or prev was changed)';
  }
  return { ...event, prev: row.prev, hash };
}

export class ChainWalker {
  readonly #chains = new Map<string, ChainState>();
  readonly #problems: BrokenLink[] = [];
  #lastSeq = 0;
  #events = 0;
  /** Ranges of seq absent from the walk, in order. */
  readonly #gapFrom: number[] = [];
  readonly #gapTo: number[] = [];
  #gapsComplete = true;

  get events(): number {
    return this.#events;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  chains(): ReadonlyMap<string, Readonly<ChainState>> {
    return this.#chains;
  }

  #add(p: BrokenLink): void {
    if (this.#problems.length < MAX_PROBLEMS) this.#problems.push(p);
  }

  /** Record a subject's problem found beside the walk (a state row its chain does not record). */
  problem(p: BrokenLink): void {
    this.#add(p);
  }

  /** Record a problem found outside the walk (an unreadable export line, a bad signature). */
  fault(seq: number, reason: string): void {
    this.#add({ seq, subject: null, reason });
  }

  /** The first seq in (after, upTo] that is not in the log (beyond the last one walked counts), if known. */
  #firstAbsent(after: number, upTo: number): number | undefined {
    if (!this.#gapsComplete) return undefined;
    let lo = 0;
    let hi = this.#gapTo.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#gapTo[mid] ?? 0) <= after) lo = mid + 1;
      else hi = mid;
    }
    const candidate = lo < this.#gapFrom.length ? Math.max(after + 1, this.#gapFrom[lo] ?? 0) : undefined;
    if (candidate !== undefined && candidate <= upTo) return candidate;
    const beyond = Math.max(after, this.#lastSeq) + 1;
    return beyond <= upTo ? beyond : undefined;
  }

  #noteGap(seq: number): void {
    if (seq <= this.#lastSeq + 1) return;
    if (this.#gapFrom.length >= MAX_GAPS) {
      this.#gapsComplete = false;
      return;
    }
    this.#gapFrom.push(this.#lastSeq + 1);
    this.#gapTo.push(seq - 1);
  }

  /** Check one stored row; returns the decoded event when its content and link are intact. */
  feed(row: EvidenceRow): EvidenceEvent | undefined {
    const seq = Number(row.seq);
    // Baton assigns seq from 1 up, each a safe integer; any other was written behind Baton.
    if (!Number.isSafeInteger(seq)) {
      this.#add({
        seq,
        subject: row.subject,
        reason: `seq ${row.seq} is not a safe integer (Baton never assigns it); the walk stops there`,
      });
      return undefined;
    }
    if (seq < 1) {
      this.#add({ seq, subject: row.subject, reason: `seq ${row.seq} is below 1 (Baton never assigns it)` });
      return undefined;
    }
    if (seq <= this.#lastSeq) {
      this.#add({ seq, subject: row.subject, reason: `seq ${row.seq} is out of order` });
      return undefined;
    }
    this.#noteGap(seq);
    this.#lastSeq = seq;
    this.#events++;
    const chain = this.#chains.get(row.subject);
    const position = row.idx === undefined ? (chain?.count ?? 0) + 1 : Number(row.idx);
    const [event, problem] = this.#check(row, seq, chain, position);
    if (problem !== undefined) this.#add(problem);
    if (chain === undefined) {
      this.#chains.set(row.subject, { head: row.hash, count: position, firstSeq: seq, lastSeq: seq });
    } else {
      Object.assign(chain, { head: row.hash, count: position, lastSeq: seq });
    }
    return problem === undefined ? event : undefined;
  }

  #check(
    row: EvidenceRow,
    seq: number,
    chain: ChainState | undefined,
    position: number,
  ): [EvidenceEvent | undefined, BrokenLink | undefined] {
    const broken = (reason: string, at = seq): [undefined, BrokenLink] => [
      undefined,
      { seq: at, subject: row.subject, reason },
    ];
    const event = intactEvent(row);
    if (typeof event === 'string') return broken(event);
    const expected = (chain?.count ?? 0) + 1;
    const after = chain?.lastSeq ?? 0;
    if (!Number.isSafeInteger(position) || position < expected) {
      return broken(`idx ${String(row.idx)} repeats a position the chain already has (#${expected - 1})`);
    }
    if (position > expected) {
      return broken(
        `event ${range(expected, position - 1)} missing from the chain (between seq ${after} and seq ${seq})`,
        this.#firstAbsent(after, seq - 1) ?? seq,
      );
    }
    const prev = chain?.head ?? null;
    if (row.prev !== prev) {
      if (prev === null) return broken('prev should be null: no earlier event of this subject is in the log');
      const gap = row.idx === undefined ? this.#firstAbsent(after, seq - 1) : undefined;
      return gap === undefined
        ? broken(`prev does not link to the subject's previous event (seq ${after})`)
        : broken(
            `prev does not link to the subject's previous event (seq ${after}): an event between them is missing, or that one was changed`,
            gap,
          );
    }
    return [event, undefined];
  }

  /**
   * Compare the rebuilt chains with the recorded heads; and, for a checkpoint, the number of
   * events it records with the number walked.
   */
  finish(heads: ReadonlyMap<string, HeadRecord>, recordedEvents?: number): void {
    if (recordedEvents !== undefined && recordedEvents !== this.#events) {
      this.#add({
        seq: this.#lastSeq,
        subject: null,
        reason: `${recordedEvents} events were recorded but ${this.#events} are in the log (${recordedEvents > this.#events ? 'events are missing' : 'events were added'})`,
      });
    }
    for (const [subject, rec] of heads) this.#compareHead(subject, rec);
    for (const [subject, chain] of this.#chains) {
      if (!heads.has(subject)) {
        this.#add({ seq: chain.firstSeq, subject, reason: 'the subject has events but no recorded head' });
      }
    }
  }

  #compareHead(subject: string, rec: HeadRecord): void {
    const chain = this.#chains.get(subject);
    if (chain === undefined) {
      this.#add({
        seq: this.#firstAbsent(0, rec.last_seq) ?? rec.last_seq,
        subject,
        reason: `all ${rec.count} event(s) of the subject are missing`,
      });
    } else if (chain.count < rec.count) {
      this.#add({
        seq: this.#firstAbsent(chain.lastSeq, rec.last_seq) ?? rec.last_seq,
        subject,
        reason: `event ${range(chain.count + 1, rec.count)} missing: the chain ends at #${chain.count} (seq ${chain.lastSeq}) but ${rec.count} were recorded, ending at seq ${rec.last_seq}`,
      });
    } else if (chain.count > rec.count || chain.lastSeq !== rec.last_seq) {
      this.#add({
        seq: Math.max(rec.last_seq, chain.lastSeq),
        subject,
        reason: `the chain has ${chain.count} event(s) ending at seq ${chain.lastSeq}, but ${rec.count} were recorded ending at seq ${rec.last_seq} (events were added behind Baton)`,
      });
    } else if (chain.head !== rec.head) {
      this.#add({
        seq: chain.lastSeq,
        subject,
        reason: `the chain's last event (seq ${chain.lastSeq}) is not the recorded head: it was replaced`,
      });
    }
  }

  report(): ChainReport {
    const base = { subjects: this.#chains.size, events: this.#events, problems: this.#problems.length };
    // The first problem by seq; among problems at one seq, the first found (stable sort).
    const first = [...this.#problems].sort((a, b) => a.seq - b.seq)[0];
    if (first === undefined) return { ok: true, ...base };
    return { ok: false, ...base, firstBroken: first };
  }
}
