/**
 * The SDK's default wire (issue 16 §5): node:http / node:https on keep-alive Agent pools, one per
 * origin, instead of the global fetch — about a millisecond less client CPU per call and no new
 * connection per call. Idle sockets are unref'd by the Agent (they never keep a worker alive) and
 * closed after IDLE_MS, below Node's default server keep-alive of 5 s, so a pooled socket is not
 * reused just as the server closes it. One re-send, and only one (docs/client.md "Retry safety"):
 * a call the caller marked safe to repeat whose REUSED pooled socket turns out dead (reset or
 * broken pipe) before a single byte of the answer came back is sent again once on a fresh
 * connection — the stale socket a server restart leaves in the pool. Anything else that fails
 * mid-call is a lost answer for the caller to judge, exactly as with fetch.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Free pooled sockets are closed after this long. */
const IDLE_MS = 4_000;

const pools = new Map<string, HttpAgent>();

function pool(url: URL): HttpAgent {
  let agent = pools.get(url.origin);
  if (agent === undefined) {
    const options = { keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' as const };
    agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    pools.set(url.origin, agent);
  }
  return agent;
}

/** After one stale socket, its idle siblings are likely stale too (the same restart): close them. */
function dropIdle(url: URL): void {
  const agent = pools.get(url.origin);
  if (agent === undefined) return;
  for (const sockets of Object.values(agent.freeSockets)) for (const s of sockets ?? []) s.destroy();
}

export interface WireRequest {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly signal: AbortSignal;
  readonly maxBytes: number;
  /**
   * The call is harmless to repeat (`Exchange.safeToRetry`): only then may a stale socket be
   * re-sent. Absent is false.
   */
  readonly resendOnStale?: boolean;
}

export interface WireAnswer {
  readonly status: number;
  /** The answer's Content-Type header ('' when it had none). */
  readonly contentType: string;
  readonly bytes: Uint8Array;
  /** Set when the caller's fetch followed a redirect despite `redirect: 'manual'` (never here). */
  readonly redirected?: true;
}

/** An answer longer than `maxBytes`: Baton did answer, with something the caller will not read. */
export class AnswerTooLarge extends Error {
  constructor(
    readonly maxBytes: number,
    readonly status: number,
  ) {
    super(`answer over ${maxBytes} bytes`);
  }
}

/**
 * A request node:http refused to build (an invalid header character, say): it threw before any
 * byte left, so nothing was sent.
 */
export class NotSent extends Error {}

/** What node:http reports when a kept-alive socket the server already closed is written to. */
const STALE = new Set(['ECONNRESET', 'EPIPE']);

function isStale(req: ClientRequest, bytesBefore: number, error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const bytesRead = req.socket?.bytesRead ?? bytesBefore;
  return req.reusedSocket && typeof code === 'string' && STALE.has(code) && bytesRead === bytesBefore;
}

/** One request on the origin's pool; rejects on any transport failure, on abort, or past maxBytes. */
export async function pooledRequest(url: URL, r: WireRequest): Promise<WireAnswer> {
  const first = await once(url, r, pool(url));
  if (first.ok) return first.answer;
  if (!first.stale || r.resendOnStale !== true || r.signal.aborted) throw first.error;
  dropIdle(url);
  // `agent: false`: a connection of its own, so this one re-send cannot land on another stale socket.
  const again = await once(url, r, false);
  if (again.ok) return again.answer;
  // The first attempt was written: a re-send that could not be built must not read as "not sent".
  throw again.error instanceof NotSent ? first.error : again.error;
}

type Outcome = { ok: true; answer: WireAnswer } | { ok: false; error: unknown; stale: boolean };

function once(url: URL, r: WireRequest, agent: HttpAgent | false): Promise<Outcome> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers = { ...r.headers };
  if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
  return new Promise((resolve) => {
    const fail = (error: unknown, stale = false): void => resolve({ ok: false, error, stale });
    let req: ClientRequest;
    try {
      req = send(url, { method: r.method, headers, agent, signal: r.signal }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        if (Number(res.headers['content-length'] ?? 0) > r.maxBytes) {
          fail(new AnswerTooLarge(r.maxBytes, res.statusCode ?? 0));
          return void req.destroy();
        }
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= r.maxBytes) return void chunks.push(chunk);
          // Said first, so the socket errors the destroy causes cannot pass for a lost answer.
          fail(new AnswerTooLarge(r.maxBytes, res.statusCode ?? 0));
          req.destroy();
        });
        res.on('end', () => {
          if (!res.complete) return fail(new Error('answer cut off'));
          const contentType = res.headers['content-type'] ?? '';
          const bytes = new Uint8Array(Buffer.concat(chunks));
          resolve({ ok: true, answer: { status: res.statusCode ?? 0, contentType, bytes } });
        });
        res.on('error', (e) => fail(e));
        res.on('aborted', () => fail(new Error('answer aborted')));
      });
    } catch (error) {
      return fail(new NotSent('the request could not be built', { cause: error }));
    }
    let bytesBefore = 0;
    req.on('socket', (socket) => (bytesBefore = socket.bytesRead));
    req.on('error', (e) => fail(e, isStale(req, bytesBefore, e)));
    req.end(r.body);
  });
}
