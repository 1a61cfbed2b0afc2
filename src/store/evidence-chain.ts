/**
 * The chain walker shared by `verifyEvidence` (over the database) and `verifyCheckpoint` (over an
 * export). Fed events in `seq` order, it recomputes every hash, checks every `prev` link and the
 * global `seq` contiguity, then compares the chains it rebuilt with the recorded heads (the heads
 * table or a signed checkpoint), which is what catches a chain whose LAST event was removed.
 * It keeps walking after a problem so a missing event can be attributed to the chain it broke.
 */
import { canonicalize } from '../core/jcs.js';
import type { JsonValue } from '../core/json.js';
import { evidenceHash, type EvidenceEvent, type EvidenceRow } from './evidence-log.js';

export interface BrokenLink {
  /** The first seq where the log stops being what Baton wrote (a missing seq for a deletion). */
  readonly seq: number;
  /** The chain it belongs to; null when a missing event cannot be attributed to any chain. */
  readonly subject: string | null;
  readonly reason: string;
}

export interface ChainReport {
  readonly ok: boolean;
  readonly subjects: number;
  readonly events: number;
  /** How many problems were found (a deletion usually shows as a gap and a broken link). */
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
  count: number;
  firstSeq: number;
  lastSeq: number;
}

interface Problem extends BrokenLink {
  /** For a broken chain: the seq of its last intact event before the break (0 for none). */
  readonly after?: number;
  readonly gapTo?: number;
}

const MAX_PROBLEMS = 10_000;

function describeGap(from: number, to: number): string {
  return from === to ? `event seq ${from} is missing` : `events seq ${from}..${to} are missing`;
}

export class ChainWalker {
  readonly #chains = new Map<string, ChainState>();
  readonly #problems: Problem[] = [];
  #lastSeq = 0;
  #events = 0;
  readonly #recordedLast: number | undefined;

  /** `recordedLast`: the last seq the log claims (counter or checkpoint), when known before the walk. */
  constructor(recordedLast?: number) {
    this.#recordedLast = recordedLast;
  }

  get events(): number {
    return this.#events;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  chains(): ReadonlyMap<string, Readonly<ChainState>> {
    return this.#chains;
  }

  #add(p: Problem): void {
    if (this.#problems.length < MAX_PROBLEMS) this.#problems.push(p);
  }

  /** Record a problem found outside the walk (an unreadable export line, a bad signature). */
  fault(seq: number, reason: string): void {
    this.#add({ seq, subject: null, reason });
  }

  /** Check one stored row; returns the decoded event when its content is intact. */
  feed(row: EvidenceRow): EvidenceEvent | undefined {
    const seq = Number(row.seq);
    if (seq !== this.#lastSeq + 1) {
      this.#add({
        seq: this.#lastSeq + 1,
        subject: null,
        reason: describeGap(this.#lastSeq + 1, seq - 1),
        gapTo: seq - 1,
      });
    }
    if (this.#recordedLast !== undefined && seq > this.#recordedLast) {
      this.#add({
        seq,
        subject: row.subject,
        reason: 'the event was never recorded as written (appended outside Baton?)',
      });
    }
    this.#lastSeq = seq;
    this.#events++;
    const chain = this.#chains.get(row.subject);
    const [event, reason] = this.#check(row, seq, chain);
    if (reason !== undefined) this.#add({ seq, subject: row.subject, reason, after: chain?.lastSeq ?? 0 });
    if (chain === undefined) {
      this.#chains.set(row.subject, { head: row.hash, count: 1, firstSeq: seq, lastSeq: seq });
    } else {
      Object.assign(chain, { head: row.hash, count: chain.count + 1, lastSeq: seq });
    }
    return reason === undefined ? event : undefined;
  }

  #check(row: EvidenceRow, seq: number, chain: ChainState | undefined): [EvidenceEvent?, string?] {
    let body: JsonValue;
    try {
      body = JSON.parse(row.body) as JsonValue;
      if (canonicalize(body) !== row.body) return [undefined, 'body is not in its canonical (JCS) form'];
    } catch {
      return [undefined, 'body is not canonical JSON'];
    }
    const at = Number(row.at);
    if (!Number.isSafeInteger(at)) return [undefined, 'at is not an integer'];
    const event = { seq, subject: row.subject, type: row.type, body, at, actor: row.actor, prev: row.prev };
    const hash = evidenceHash(event);
    if (hash !== row.hash)
      return [
        undefined,
        'hash does not match the content (subject, type, body, at, actor or prev was changed)',
      ];
    const expected = chain?.head ?? null;
    if (row.prev !== expected) {
      return [
        undefined,
        expected === null
          ? 'prev should be null: no earlier event of this subject is in the log'
          : `prev does not link to the subject's previous event (seq ${chain?.lastSeq})`,
      ];
    }
    return [{ ...event, hash }];
  }

  /**
   * Compare the rebuilt chains with the recorded heads, and the last seq with the recorded total
   * (the evidence counter, or the checkpoint's event count).
   */
  finish(heads: ReadonlyMap<string, HeadRecord>, lastSeq: number): void {
    if (lastSeq > this.#lastSeq) {
      this.#add({
        seq: this.#lastSeq + 1,
        subject: null,
        reason: describeGap(this.#lastSeq + 1, lastSeq),
        gapTo: lastSeq,
      });
    } else if (lastSeq < this.#lastSeq && this.#recordedLast === undefined) {
      this.#add({
        seq: lastSeq + 1,
        subject: null,
        reason: `events after seq ${lastSeq} were never recorded as written`,
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
        seq: rec.last_seq,
        subject,
        reason: `all ${rec.count} event(s) of the subject are missing`,
        after: 0,
      });
    } else if (chain.count !== rec.count || chain.lastSeq !== rec.last_seq) {
      this.#add({
        seq: Math.max(rec.last_seq, chain.lastSeq),
        subject,
        reason: `the chain has ${chain.count} event(s) ending at seq ${chain.lastSeq}, but ${rec.count} were recorded ending at seq ${rec.last_seq} (events were removed or added)`,
        after: chain.lastSeq,
      });
    } else if (chain.head !== rec.head) {
      this.#add({
        seq: chain.lastSeq,
        subject,
        reason: `the chain's last event (seq ${chain.lastSeq}) is not the recorded head: it was replaced`,
      });
    }
  }

  /** A missing event belongs to the chain whose break spans it. */
  #attribute(gap: Problem): string | null {
    const to = gap.gapTo ?? gap.seq;
    const owner = this.#problems.find(
      (p) => p.subject !== null && p.after !== undefined && p.after < gap.seq && p.seq >= to,
    );
    return owner?.subject ?? null;
  }

  report(): ChainReport {
    const base = { subjects: this.#chains.size, events: this.#events, problems: this.#problems.length };
    const first = [...this.#problems].sort((a, b) => a.seq - b.seq)[0];
    if (first === undefined) return { ok: true, ...base };
    const subject = first.subject ?? this.#attribute(first);
    const reason =
      first.subject === null && subject !== null
        ? `${first.reason}; the chain of this subject no longer links`
        : first.reason;
    return { ok: false, ...base, firstBroken: { seq: first.seq, subject, reason } };
  }
}
