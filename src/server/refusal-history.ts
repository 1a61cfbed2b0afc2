/**
 * Refusals over time for the console's overview (issue 14 §3), kept in memory by the server since
 * it started. Refusals are not domain state — nothing in the evidence log records a refused
 * request, and adding that would make every bad request a write (docs/console.md, "Refusals over
 * time") — so this is a bounded ring of fixed time buckets, each counting refusals by problem
 * code: at most BUCKETS buckets and, per bucket, at most MAX_CODES codes (the rest fold into
 * `other`), whatever the traffic. It is what `baton_refusals_total` counts, with a time axis.
 */
export const BUCKET_MS = 5 * 60_000;
/** 24 hours of 5-minute buckets. */
export const BUCKETS = 288;
export const MAX_CODES = 32;

export interface RefusalBucket {
  /** Start of the bucket (Unix ms, a multiple of BUCKET_MS). */
  readonly from: number;
  readonly total: number;
  readonly byCode: Readonly<Record<string, number>>;
}

export interface RefusalHistoryView {
  /** When this server started counting. */
  readonly since: number;
  readonly bucketMs: number;
  /** Oldest first; buckets with no refusal are left out. */
  readonly buckets: readonly RefusalBucket[];
}

interface Slot {
  from: number;
  total: number;
  byCode: Map<string, number>;
}

export class RefusalHistory {
  readonly #since: number;
  readonly #slots: (Slot | undefined)[] = new Array<Slot | undefined>(BUCKETS);

  constructor(since: number) {
    this.#since = since;
  }

  record(code: string, at: number): void {
    const from = at - (at % BUCKET_MS);
    const i = Math.floor(from / BUCKET_MS) % BUCKETS;
    let slot = this.#slots[i];
    // A slot still holding an older bucket is that bucket's end of life (the ring wrapped).
    if (slot === undefined || slot.from !== from) {
      if (slot !== undefined && slot.from > from) return; // a clock step back: too old to keep
      slot = { from, total: 0, byCode: new Map() };
      this.#slots[i] = slot;
    }
    const key = slot.byCode.has(code) || slot.byCode.size < MAX_CODES ? code : 'other';
    slot.byCode.set(key, (slot.byCode.get(key) ?? 0) + 1);
    slot.total += 1;
  }

  /** The buckets of the last BUCKETS × BUCKET_MS before `now`. */
  view(now: number): RefusalHistoryView {
    const oldest = now - (now % BUCKET_MS) - (BUCKETS - 1) * BUCKET_MS;
    const buckets = this.#slots
      .filter((s): s is Slot => s !== undefined && s.from >= oldest && s.from <= now)
      .sort((a, b) => a.from - b.from)
      .map((s) => ({ from: s.from, total: s.total, byCode: Object.fromEntries(s.byCode) }));
    return { since: this.#since, bucketMs: BUCKET_MS, buckets };
  }
}
