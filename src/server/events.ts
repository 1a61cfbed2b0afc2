/**
 * `GET /v1/events` (issue 14, docs/api.md "Events"): server-sent events, one `evidence` event per
 * new row of the evidence log (seq, subject, type, at, actor — never the body). The source is the
 * log itself, read by `seq` every `pollMs`, so a server sees what every other server sharing its
 * PostgreSQL wrote. An event is a hint to re-read through the API, never a state: on PostgreSQL a
 * transaction holding a lower `seq` can commit after a higher one was sent, so clients re-read
 * the page they show instead of patching it from events. Streams end when the client goes away
 * or the server closes (so a drain is never held open by a console tab).
 *
 * A stream is authenticated for as long as it lasts, not only when it opens (docs/console.md
 * "Live updates"): the caller's credential is checked again, by the request path's own check,
 * before every batch of rows is written, after every wait for a slow client and at every
 * keep-alive. Once it is refused (token revoked, session signed out or expired) the stream gets a
 * last `end` event naming the refusal's code and is closed: nothing read after the refusal is sent.
 *
 * A client that reads slowly (or not at all) holds the loop: it waits for the stream to drain
 * before it writes or reads the log any further, so what one stream buffers stays near the
 * stream's high-water mark however long the log is.
 */
import { PassThrough, type Readable } from 'node:stream';
import { BatonError } from '../core/errors.js';
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
  /**
   * Checks the caller's credential again (the request path's own check). It rejects with the
   * refusal, a 401/403 BatonError, once the credential no longer authenticates; the stream then
   * ends with an `end` event. Any other rejection fails the stream as a failed read does.
   */
  readonly reauthenticate?: () => Promise<void>;
}

/** What an open stream's loop is waiting for: the store, the next poll, or its client to read. */
export type StreamWait = 'store' | 'poll' | 'client';

/** One open stream as `EventStreams.describe` reports it (tests, diagnostics). */
export interface StreamState {
  /** Bytes written but not yet taken by the client's connection. */
  readonly buffered: number;
  readonly waitingFor: StreamWait;
}

interface Stream {
  readonly out: PassThrough;
  /** Aborted when the client goes away or the server closes the stream. */
  readonly stop: AbortController;
  waitingFor: StreamWait;
}

export class EventStreams {
  readonly #engine: StoreEngine;
  readonly #pollMs: number;
  readonly #keepAliveMs: number;
  readonly #open = new Set<Stream>();

  constructor(engine: StoreEngine, pollMs = 500, keepAliveMs = KEEPALIVE_MS) {
    this.#engine = engine;
    this.#pollMs = pollMs;
    this.#keepAliveMs = keepAliveMs;
  }

  /** A new stream starting after `after` (default: the log's current end). */
  async open(options: EventStreamOptions): Promise<Readable> {
    const start = options.after ?? (await this.#lastSeq());
    const s: Stream = { out: new PassThrough(), stop: new AbortController(), waitingFor: 'store' };
    const stop = (): void => s.stop.abort();
    if (options.closed?.aborted === true) stop();
    else options.closed?.addEventListener('abort', stop, { once: true });
    s.out.once('close', stop);
    this.#open.add(s);
    s.out.write(`retry: 2000\n: baton events after ${start}\n\n`);
    void this.#pump(s, start, options)
      .then((ended) => {
        if (ended) s.out.end();
      })
      .catch((error: unknown) => s.out.destroy(error as Error))
      .finally(() => {
        this.#open.delete(s);
        options.closed?.removeEventListener('abort', stop);
      });
    return s.out;
  }

  /** End every open stream (server close). */
  closeAll(): void {
    for (const s of this.#open) {
      s.stop.abort();
      s.out.end();
    }
    this.#open.clear();
  }

  /** The open streams: how much each holds for its client and what its loop waits for. */
  describe(): StreamState[] {
    return [...this.#open].map((s) => ({
      buffered: s.out.writableLength + s.out.readableLength,
      waitingFor: s.waitingFor,
    }));
  }

  async #lastSeq(): Promise<number> {
    const row = await this.#engine.read((ex) =>
      ex.get<{ n: number | string | null }>('SELECT MAX(seq) AS n FROM evidence_events'),
    );
    return Number(row?.n ?? 0);
  }

  /** Runs until the stream is over; true when it should be ended cleanly (not already closed). */
  async #pump(s: Stream, start: number, o: EventStreamOptions): Promise<boolean> {
    const { out, stop } = s;
    const live = (): boolean => !out.writableEnded && !out.destroyed && !stop.signal.aborted;
    let cursor = start;
    let quiet = 0;
    while (live()) {
      s.waitingFor = 'store';
      const rows = await this.#read(cursor, o.subject);
      quiet = rows.length > 0 ? 0 : quiet + this.#pollMs;
      const keepAlive = quiet >= this.#keepAliveMs;
      // Read first, check second: a row committed after a revocation is never sent.
      if ((rows.length > 0 || keepAlive) && !(await this.#stillAuthenticated(s, o))) return live();
      for (const r of rows) {
        if (!live()) return false;
        cursor = Number(r.seq);
        const data = { seq: cursor, subject: r.subject, type: r.type, at: Number(r.at), actor: r.actor };
        if (!(await this.#send(s, `id: ${cursor}\nevent: evidence\ndata: ${JSON.stringify(data)}\n\n`, o)))
          return live();
      }
      if (keepAlive) {
        quiet = 0;
        if (!(await this.#send(s, ': keep-alive\n\n', o))) return live();
      }
      if (rows.length < BATCH && live()) {
        s.waitingFor = 'poll';
        await sleep(this.#pollMs, stop.signal);
      }
    }
    return false;
  }

  /**
   * Writes one chunk. When the client has not taken what was written before, waits until it has
   * (or is gone), then checks the caller again before anything more is sent. False: stop.
   */
  async #send(s: Stream, chunk: string, o: EventStreamOptions): Promise<boolean> {
    if (s.out.write(chunk)) return true;
    s.waitingFor = 'client';
    await drained(s.out, s.stop.signal);
    if (s.out.writableEnded || s.out.destroyed || s.stop.signal.aborted) return false;
    return this.#stillAuthenticated(s, o);
  }

  /** Whether the caller's credential still authenticates; if not, the stream's last event says why. */
  async #stillAuthenticated(s: Stream, o: EventStreamOptions): Promise<boolean> {
    if (o.reauthenticate === undefined) return true;
    try {
      s.waitingFor = 'store';
      await o.reauthenticate();
      return true;
    } catch (error) {
      if (!(error instanceof BatonError) || (error.status !== 401 && error.status !== 403)) throw error;
      const data = { code: error.code, detail: error.message };
      if (!s.out.writableEnded && !s.out.destroyed)
        s.out.write(`event: end\ndata: ${JSON.stringify(data)}\n\n`);
      return false;
    }
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

/** Resolves once `out` drains, closes, or `signal` aborts (so a gone client leaves no wait behind). */
function drained(out: PassThrough, signal: AbortSignal): Promise<void> {
  if (signal.aborted || out.destroyed || out.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    function done(): void {
      out.off('drain', done);
      out.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    }
    out.on('drain', done);
    out.on('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
