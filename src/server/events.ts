/**
 * `GET /v1/events` (issue 14, docs/api.md "Events"): server-sent events, one `evidence` event per
 * new row of the evidence log (seq, subject, type, at, actor — never the body). The source is the
 * log itself, read by `seq` every `pollMs`, so a server sees what every other server sharing its
 * PostgreSQL wrote. An event is a hint to re-read through the API, never a state: on PostgreSQL a
 * transaction holding a lower `seq` can commit after a higher one was sent, so clients re-read
 * the page they show instead of patching it from events. Streams end when the client goes away
 * or the server closes (so a drain is never held open by a console tab).
 */
import { PassThrough, type Readable } from 'node:stream';
import type { StoreEngine } from '../store/engine.js';

const BATCH = 200;
const KEEPALIVE_MS = 15_000;

interface Row {
  seq: number | string;
  subject: string;
  type: string;
  at: number | string;
  actor: string;
}

export interface EventStreamOptions {
  readonly after?: number;
  readonly subject?: string;
  readonly closed?: AbortSignal;
}

export class EventStreams {
  readonly #engine: StoreEngine;
  readonly #pollMs: number;
  readonly #open = new Set<PassThrough>();

  constructor(engine: StoreEngine, pollMs = 500) {
    this.#engine = engine;
    this.#pollMs = pollMs;
  }

  /** A new stream starting after `after` (default: the log's current end). */
  async open(options: EventStreamOptions): Promise<Readable> {
    const start = options.after ?? (await this.#lastSeq());
    const out = new PassThrough();
    this.#open.add(out);
    out.write(`retry: 2000\n: baton events after ${start}\n\n`);
    void this.#pump(out, start, options).catch((error: unknown) => out.destroy(error as Error));
    return out;
  }

  /** End every open stream (server close). */
  closeAll(): void {
    for (const s of this.#open) s.end();
    this.#open.clear();
  }

  async #lastSeq(): Promise<number> {
    const row = await this.#engine.read((ex) =>
      ex.get<{ n: number | string | null }>('SELECT MAX(seq) AS n FROM evidence_events'),
    );
    return Number(row?.n ?? 0);
  }

  async #pump(out: PassThrough, start: number, o: EventStreamOptions): Promise<void> {
    let cursor = start;
    let quiet = 0;
    const live = (): boolean => !out.writableEnded && !out.destroyed && o.closed?.aborted !== true;
    while (live()) {
      const rows = await this.#read(cursor, o.subject);
      for (const r of rows) {
        cursor = Number(r.seq);
        const data = { seq: cursor, subject: r.subject, type: r.type, at: Number(r.at), actor: r.actor };
        out.write(`id: ${cursor}\nevent: evidence\ndata: ${JSON.stringify(data)}\n\n`);
      }
      quiet = rows.length > 0 ? 0 : quiet + this.#pollMs;
      if (quiet >= KEEPALIVE_MS) {
        out.write(': keep-alive\n\n');
        quiet = 0;
      }
      if (rows.length < BATCH) await sleep(this.#pollMs, o.closed);
    }
    this.#open.delete(out);
    out.end();
  }

  #read(after: number, subject: string | undefined): Promise<Row[]> {
    const cols = 'seq, subject, type, at, actor';
    return this.#engine.read((ex) =>
      subject === undefined
        ? ex.all<Row>(`SELECT ${cols} FROM evidence_events WHERE seq > ? ORDER BY seq LIMIT ${BATCH}`, [
            after,
          ])
        : ex.all<Row>(
            `SELECT ${cols} FROM evidence_events WHERE subject = ? AND seq > ? ORDER BY seq LIMIT ${BATCH}`,
            [subject, after],
          ),
    );
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
