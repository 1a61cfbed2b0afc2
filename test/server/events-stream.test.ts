/**
 * `GET /v1/events` for as long as a stream lasts (src/server/events.ts, docs/console.md "Live
 * updates"):
 * - the caller's credential is checked again while the stream is open: once the bearer token is
 *   revoked, the cookie's session signed out or expired, the stream's last event is `end` (with
 *   the refusal's code) and it closes, and no evidence committed from then on is sent — over real
 *   HTTP against a real `buildServer` on loopback, on SQLite and on PostgreSQL;
 * - a quiet stream is checked again at its keep-alive;
 * - backpressure: a client that does not read holds the loop — what the stream buffers stays near
 *   its high-water mark however much evidence there is, everything arrives in order once the
 *   client reads, and a client that goes away while the loop waits for it ends the loop.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { ManualClock } from '../../src/core/clock.js';
import { BatonError } from '../../src/core/errors.js';
import { EventStreams } from '../../src/server/events.js';
import { buildServer } from '../../src/server/index.js';
import { openBaton, type StoreChoice } from '../../src/server/open.js';
import { DEFAULT_SESSION_TTL_MS } from '../../src/server/sessions.js';
import { createToken } from '../../src/server/tokens.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { appendEvidenceRun, type EvidenceInput } from '../../src/store/evidence-log.js';
import { postgresForTests } from '../support/postgres.js';
import { waitUntil } from '../support/wait.js';
import { domainConfig, request, T0 } from './helpers.js';

const pg = await postgresForTests();

const DEADLINE_MS = 10_000;

async function serverOn(t: TestContext, choice: (dir: string) => StoreChoice) {
  const dir = mkdtempSync(join(tmpdir(), 'baton-events-stream-'));
  const clock = new ManualClock(T0);
  const opened = await openBaton(choice(dir), { clock });
  const app = buildServer({
    engine: opened.engine,
    service: opened.service,
    clock,
    console: false,
    eventPollMs: 10,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const deps = { clock, actor: 'test' };
  const admin = (await createToken(opened.engine, { role: 'admin' }, deps)).token;
  const operator = await createToken(opened.engine, { role: 'operator' }, deps);
  const domain = await request(url, 'PUT', '/v1/domain', { token: admin, body: domainConfig() });
  assert.equal(domain.status, 200, domain.text);
  const takeover = async (lineage: string): Promise<void> => {
    const r = await request(url, 'POST', `/v1/lineages/${lineage}/takeover`, { token: admin });
    assert.equal(r.status, 201, r.text);
  };
  const lastSeq = async (): Promise<number> =>
    Number(
      (
        await opened.engine.read((ex) =>
          ex.get<{ n: number | string | null }>('SELECT MAX(seq) AS n FROM evidence_events'),
        )
      )?.n ?? 0,
    );
  return { url, clock, admin, operator, takeover, lastSeq };
}

/** An open event stream read over HTTP: everything received so far, and whether it ended. */
class Received {
  text = '';
  ended = false;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();

  constructor(reader: ReadableStreamDefaultReader<Uint8Array>) {
    this.#reader = reader;
  }

  /** Reads until `done(text)` holds or the stream ends, or the deadline passes (then it returns). */
  async until(done: (text: string) => boolean): Promise<void> {
    const deadline = Date.now() + DEADLINE_MS;
    while (!done(this.text) && !this.ended) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()));
      });
      const chunk = await Promise.race([this.#reader.read(), late]);
      clearTimeout(timer);
      if (chunk === 'late') return;
      if (chunk.done) this.ended = true;
      else this.text += this.#decoder.decode(chunk.value, { stream: true });
    }
  }
}

async function openStream(t: TestContext, url: string, headers: Record<string, string>, query = '') {
  const controller = new AbortController();
  t.after(() => controller.abort());
  const res = await fetch(`${url}/v1/events${query}`, { headers, signal: controller.signal });
  assert.equal(res.status, 200);
  assert.ok(res.body !== null);
  const received = new Received(res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>);
  await received.until((text) => text.includes('retry: 2000\n'));
  return received;
}

/** The seqs of the `evidence` events in `text`. */
function seqsOf(text: string): number[] {
  return [...text.matchAll(/id: (\d+)\nevent: evidence\n/g)].map((m) => Number(m[1]));
}

/**
 * The stream works, then `cut` ends the credential; evidence made after that must never arrive,
 * and the stream ends with an `end` event naming `unauthenticated`.
 */
async function endsWhenCut(
  s: Awaited<ReturnType<typeof serverOn>>,
  stream: Received,
  cut: () => Promise<void>,
): Promise<void> {
  await s.takeover('before-cut');
  await stream.until((text) => text.includes('"subject":"lineage:before-cut"'));
  assert.ok(!stream.ended, 'the stream delivers while the credential authenticates');
  const lastBefore = await s.lastSeq();
  await cut();
  await s.takeover('after-cut');
  // Until the stream ends (or, without the check, the later evidence arrives).
  await stream.until((text) => text.includes('lineage:after-cut'));
  const late = seqsOf(stream.text).filter((seq) => seq > lastBefore);
  assert.deepEqual(late, [], `nothing committed after the credential ended is sent:\n${stream.text}`);
  assert.ok(stream.ended, `the stream ended:\n${stream.text}`);
  const end = /event: end\ndata: (.+)\n\n$/.exec(stream.text);
  assert.ok(end !== null, `the last event says why:\n${stream.text}`);
  assert.equal((JSON.parse(end[1] ?? '{}') as { code?: string }).code, 'unauthenticated');
}

async function signIn(url: string, token: string): Promise<{ cookie: string; csrf: string }> {
  const signed = await request(url, 'POST', '/v1/session', { body: { token } });
  assert.equal(signed.status, 201, signed.text);
  const cookie = /^(baton_session=[^;]+)/.exec(signed.headers.get('set-cookie') ?? '')?.[1] ?? '';
  return { cookie, csrf: signed.body['csrfToken'] as string };
}

function engineCases(name: string, choice: (t: TestContext) => Promise<(dir: string) => StoreChoice>) {
  test(`${name}: a revoked bearer token's stream ends; nothing after the revocation is sent`, async (t) => {
    const s = await serverOn(t, await choice(t));
    const stream = await openStream(t, s.url, { authorization: `Bearer ${s.operator.token}` });
    await endsWhenCut(s, stream, async () => {
      const r = await request(s.url, 'DELETE', `/v1/tokens/${s.operator.id}`, { token: s.admin });
      assert.equal(r.status, 200, r.text);
    });
  });

  test(`${name}: a signed-out session's stream ends; nothing after the sign-out is sent`, async (t) => {
    const s = await serverOn(t, await choice(t));
    const session = await signIn(s.url, s.operator.token);
    const stream = await openStream(t, s.url, { cookie: session.cookie });
    await endsWhenCut(s, stream, async () => {
      const r = await request(s.url, 'DELETE', '/v1/session', {
        headers: { cookie: session.cookie, 'x-baton-csrf': session.csrf },
      });
      assert.equal(r.status, 200, r.text);
    });
  });

  test(`${name}: a stream ends when its session expires or its token is revoked`, async (t) => {
    const s = await serverOn(t, await choice(t));
    const session = await signIn(s.url, s.operator.token);
    const stream = await openStream(t, s.url, { cookie: session.cookie });
    await endsWhenCut(s, stream, () => {
      s.clock.advance(DEFAULT_SESSION_TTL_MS);
      return Promise.resolve();
    });
    const other = await signIn(s.url, s.operator.token);
    const second = await openStream(t, s.url, { cookie: other.cookie });
    await endsWhenCut(s, second, async () => {
      const r = await request(s.url, 'DELETE', `/v1/tokens/${s.operator.id}`, { token: s.admin });
      assert.equal(r.status, 200, r.text);
    });
  });
}

test('an EventSource reconnecting with Last-Event-ID gets what was written while it was away; a malformed one is refused', async (t) => {
  const s = await serverOn(t, (dir) => ({ kind: 'sqlite', path: join(dir, 'b.db') }));
  const auth = { authorization: `Bearer ${s.operator.token}` };
  await s.takeover('seen');
  const lastRead = await s.lastSeq();
  await s.takeover('missed');
  const head = await s.lastSeq();
  assert.ok(head > lastRead);
  const resumed = await openStream(t, s.url, { ...auth, 'last-event-id': String(lastRead) });
  await resumed.until((text) => seqsOf(text).includes(head));
  assert.deepEqual(
    seqsOf(resumed.text),
    Array.from({ length: head - lastRead }, (_, i) => lastRead + 1 + i),
    `every event after Last-Event-ID, in order:\n${resumed.text}`,
  );
  // The later of ?after and Last-Event-ID: a reconnect of a stream opened with ?after=0.
  const reader = await openStream(t, s.url, { ...auth, 'last-event-id': String(head) }, '?after=0');
  await s.takeover('later');
  const later = await s.lastSeq();
  await reader.until((text) => seqsOf(text).includes(later));
  assert.deepEqual(
    seqsOf(reader.text),
    Array.from({ length: later - head }, (_, i) => head + 1 + i),
    `nothing at or before Last-Event-ID again:\n${reader.text}`,
  );
  for (const bad of ['x', '-1', '1.5', '01']) {
    const r = await request(s.url, 'GET', '/v1/events', {
      token: s.operator.token,
      headers: { 'last-event-id': bad },
    });
    assert.equal(r.status, 400, `${bad}: ${r.text}`);
    assert.equal(r.body['code'], 'input_invalid');
  }
});

engineCases('SQLite', () => Promise.resolve((dir) => ({ kind: 'sqlite', path: join(dir, 'b.db') })));

if (pg !== undefined) {
  const db = pg;
  engineCases('PostgreSQL', async () => {
    const url = await db.schema();
    return (dir) => ({ kind: 'postgres', url, domainKeyFile: join(dir, 'k.domain-key.pem') });
  });
}

/**
 * A real SQLite store with `n` evidence rows of one subject (real appends: a valid chain), and
 * the seqs of every row in the log.
 */
async function storeWith(t: TestContext, n: number): Promise<{ engine: StoreEngine; seqs: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-events-backpressure-'));
  const opened = await openBaton({ kind: 'sqlite', path: join(dir, 'b.db') }, { clock: new ManualClock(T0) });
  t.after(async () => {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (let done = 0; done < n; done += 500) {
    const run: EvidenceInput[] = [];
    for (let i = done; i < Math.min(n, done + 500); i++) {
      run.push({ subject: 'test:backpressure', type: 'seeded', body: { i }, at: T0 + i, actor: 'test' });
    }
    await opened.engine.transaction((tx) => appendEvidenceRun(tx, run));
  }
  const all = await opened.engine.read((ex) =>
    ex.all<{ seq: number | string }>('SELECT seq FROM evidence_events ORDER BY seq'),
  );
  return { engine: opened.engine, seqs: all.map((r) => Number(r.seq)) };
}

/** Reads `out` until the evidence event with this seq has arrived; the seqs received, in order. */
async function readThrough(out: Readable, lastSeq: number): Promise<number[]> {
  let text = '';
  for await (const chunk of out) {
    text += String(chunk);
    if (text.includes(`id: ${lastSeq}\n`)) break;
  }
  return seqsOf(text);
}

test('a quiet stream is checked again at its keep-alive and ends once refused', async (t) => {
  const { engine } = await storeWith(t, 1);
  const streams = new EventStreams(engine, 1, 20);
  t.after(() => streams.closeAll());
  let checks = 0;
  let revoked = false;
  const out = await streams.open({
    reauthenticate: () => {
      checks++;
      if (revoked) throw new BatonError('unauthenticated', 'unknown or revoked token');
      return Promise.resolve();
    },
  });
  let text = '';
  out.on('data', (chunk) => (text += String(chunk)));
  await waitUntil('a keep-alive after a check', () => checks > 0 && text.includes(': keep-alive'), {
    deadlineMs: DEADLINE_MS,
  });
  revoked = true;
  await waitUntil('the stream to end', () => out.readableEnded, { deadlineMs: DEADLINE_MS });
  assert.match(
    text,
    /event: end\ndata: \{"code":"unauthenticated","detail":"unknown or revoked token"\}\n\n$/,
  );
  assert.deepEqual(streams.describe(), [], 'the stream is no longer open');
});

test('backpressure: a client that does not read holds the loop; its buffer stays bounded', async (t) => {
  const rows = 3_000; // about 390 KB of events: many times a stream's buffers
  const { engine, seqs: all } = await storeWith(t, rows);
  assert.ok(all.length >= rows);
  const streams = new EventStreams(engine, 1);
  t.after(() => streams.closeAll());
  const out = await streams.open({ after: 0 });
  // Nobody reads `out`. The loop stops reading the log once the stream is full: it then waits for
  // the client (without backpressure, it would read all the rows and wait for the next poll).
  await waitUntil('the loop to stop reading', () => streams.describe()[0]?.waitingFor !== 'store', {
    deadlineMs: DEADLINE_MS,
  });
  const [state] = streams.describe();
  assert.ok(state !== undefined);
  const bound = 2 * out.readableHighWaterMark + 1024; // its two buffers, and a last event each
  assert.ok(state.buffered <= bound, `buffered ${state.buffered} bytes, more than ${bound}`);
  assert.equal(state.waitingFor, 'client', 'the loop waits for the client to read');
  // Once the client reads, every row arrives, once and in order.
  assert.deepEqual(await readThrough(out, all[all.length - 1] ?? 0), all);
});

test('backpressure: a client that goes away while the loop waits for it ends the loop', async (t) => {
  const { engine } = await storeWith(t, 1_000);
  const streams = new EventStreams(engine, 1);
  t.after(() => streams.closeAll());
  const gone = new AbortController();
  await streams.open({ after: 0, closed: gone.signal });
  await waitUntil('the loop to wait for the client', () => streams.describe()[0]?.waitingFor === 'client', {
    deadlineMs: DEADLINE_MS,
  });
  gone.abort();
  await waitUntil('the stream to close', () => streams.describe().length === 0, { deadlineMs: DEADLINE_MS });
});
