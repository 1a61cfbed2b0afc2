/**
 * One HTTP exchange with the Baton API (docs/api.md): bearer auth, strict JSON both ways, and every
 * failure as a BatonError. A problem+json answer keeps the server's `code` unless the HTTP status
 * contradicts it (a 5xx is doubt whatever its body names); a lost answer is `unavailable`, one cut
 * off by the call's deadline `client_timeout`, by the caller's signal `client_aborted`; a request
 * that cannot be built is `input_invalid` with `sent: false`. NOTHING here retries: whether a call
 * may be repeated depends on the call (docs/client.md "Retry safety"), so the caller decides, and
 * `details.safeToRetry` says it (the pool's one re-send on a stale socket heeds it, http-pool.ts).
 * The transport is this file (the endpoint, its deadline, the exchange) and its wire, http-pool.ts:
 * keep-alive node:http pools per origin unless the caller passes its own `fetch` (issue 16 §5).
 */
import { BatonError, ERROR_CODES, isBatonErrorCode, type BatonErrorCode } from '../core/errors.js';
import { parseStrictJson, type JsonObject, type JsonValue } from '../core/json.js';
import { AnswerTooLarge, NotSent, pooledRequest, type WireAnswer } from './http-pool.js';
import type { CallOptions } from './types.js';

export type Fetch = typeof fetch;

/** A call that neither answers nor fails within this is cut off (`client_timeout`). */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** setTimeout's own ceiling (2^31 - 1 ms); beyond it Node fires at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Where the API is: a base URL whose path is a prefix (`https://host/baton/`), and the defaults. */
export interface Endpoint {
  /** The caller's own fetch, when given; otherwise the keep-alive node:http pool (http-pool.ts). */
  readonly fetch: Fetch | undefined;
  /** Always ends in `/`, so a route resolves under the prefix, not beside it. */
  readonly base: URL;
  readonly timeoutMs: number;
}

/** What a call refused before anything left the process says of itself (docs/client.md). */
export const NOT_SENT = { sent: false, safeToRetry: true } as const;

/**
 * A timeout is a positive whole number of milliseconds; anything else is the caller's mistake.
 * `details` are added to the refusal: a call's own timeout is checked before anything is sent,
 * so it passes NOT_SENT (a request that could not be built, never a lost answer).
 */
export function checkTimeout(timeoutMs: number, details: Record<string, unknown> = {}): number {
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new BatonError('input_invalid', 'timeoutMs must be a whole number of milliseconds, 1 to 2^31-1', {
      member: 'timeoutMs',
      ...details,
    });
  }
  return timeoutMs;
}

/**
 * The endpoint for `baseUrl`. Refused, without echoing the URL (it may carry a secret): anything
 * but an absolute http(s) URL, user info in it, a query or a fragment (where would routes go?).
 */
export function endpoint(baseUrl: string, options: { fetch?: Fetch; timeoutMs?: number } = {}): Endpoint {
  const refuse = (why: string): BatonError =>
    new BatonError('input_invalid', `baseUrl ${why}`, { member: 'baseUrl' });
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw refuse('is not an absolute URL');
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw refuse('must be http: or https:');
  if (base.username !== '' || base.password !== '') throw refuse('must not carry user info');
  if (base.search !== '' || base.hash !== '') throw refuse('must not have a query or a fragment');
  if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
  const timeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  return { fetch: options.fetch, base, timeoutMs };
}

/**
 * A bearer (principal token or executor credential) as an HTTP header can carry it: visible ASCII,
 * no space. Anything else — a token read from a file with its trailing newline — would make node:http
 * throw before sending, which must not pass for a lost answer; refused here, without echoing it.
 */
export function checkBearer(value: string, member: string): string {
  if (typeof value !== 'string' || !/^[\x21-\x7e]+$/.test(value)) {
    const message = `${member} must be visible ASCII characters only (no spaces or newlines)`;
    throw new BatonError('input_invalid', message, { member, sent: false });
  }
  return value;
}

/** `/v1/counts` under the base's path prefix: `https://host/baton/` + `v1/counts`. */
function routeUrl(e: Endpoint, path: string): URL {
  return new URL(path.replace(/^\/+/, ''), e.base);
}

export interface Exchange {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly bearer: string;
  readonly body?: JsonObject;
  /** Whether repeating the call after a lost answer is harmless (reported, never acted on). */
  readonly safeToRetry: boolean;
}

/** Evidence chains can be long; the server's own request limit is 1 MiB, answers may be larger. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** For error answers that are not problem+json (a proxy's 502 page, a wrong base URL). */
const BY_STATUS: Readonly<Record<number, BatonErrorCode>> = {
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'json_too_large',
  415: 'media_type_unsupported',
};

/** An answer Baton should not have given (`baton_response_invalid`): the caller acts on none of it. */
export function invalid(x: Exchange, status: number, why: string): BatonError {
  return new BatonError('baton_response_invalid', `Baton answered ${x.method} ${x.path} with ${why}`, {
    status,
    safeToRetry: x.safeToRetry,
  });
}

function parse(bytes: Uint8Array): JsonValue | undefined {
  try {
    return parseStrictJson(bytes, { maxBytes: MAX_ANSWER_BYTES });
  } catch {
    return undefined; // the caller reports what it expected, not the parser's view of the body
  }
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * RFC 9457 problem → BatonError with the server's code, detail and details. Fail closed: a 5xx
 * answer is doubt (the command may have committed behind whatever answered it), so a body there
 * naming a refusal's code (a gateway's 502 relaying `{"code":"not_found"}`) does not make it one:
 * the code becomes `unavailable`, the named one is kept as `details.answeredCode`. The wire status
 * always wins in `details.status`, which perform reads too (AOC-REQ-010).
 */
function problemError(x: Exchange, status: number, body: JsonValue | undefined): BatonError {
  const p = isObject(body) ? body : {};
  const named = typeof p['code'] === 'string' && isBatonErrorCode(p['code']) ? p['code'] : undefined;
  const contradicted = named !== undefined && status >= 500 && ERROR_CODES[named].status < 500;
  const trusted = contradicted ? undefined : named;
  const code = trusted ?? BY_STATUS[status] ?? (status >= 500 ? 'unavailable' : 'baton_response_invalid');
  const message = typeof p['detail'] === 'string' ? p['detail'] : `HTTP ${status}`;
  // `sent` is the client's own word (nothing left this process); an answer cannot claim it.
  const { sent: _sent, ...details } = isObject(p['details']) ? p['details'] : {};
  const answered = contradicted ? { answeredCode: named } : {};
  return new BatonError(code, message, { ...details, ...answered, status, safeToRetry: x.safeToRetry });
}

/** `application/json` or any `+json` type (problem+json among them), parameters aside. */
function isJson(contentType: string): boolean {
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** Why the call was cut off, once it was: the deadline, or the caller's signal. */
type Cut = 'timeout' | 'aborted' | undefined;

/** One AbortSignal for the call: aborted at the deadline or when the caller's signal aborts. */
function callSignal(timeoutMs: number, outer: AbortSignal | undefined) {
  const controller = new AbortController();
  let cut: Cut;
  const stop = (why: Exclude<Cut, undefined>): void => {
    cut ??= why;
    controller.abort();
  };
  const timer = setTimeout(() => stop('timeout'), timeoutMs);
  const onAbort = (): void => stop('aborted');
  outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    cut: (): Cut => cut,
    done(): void {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * Where the call went: the base URL (it never carries user info: `endpoint` refuses it, and the
 * token travels in a header), so a wrong `--url` or `BATON_URL` is seen in the message.
 */
function baseOf(e: Endpoint): string {
  return e.base.href.replace(/\/$/, '');
}

/** The OS's code for a connection that failed (`ECONNREFUSED`), when the cause has one. */
function errnoOf(error: unknown): string {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code;
  const inner = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const found = typeof code === 'string' ? code : typeof inner === 'string' ? inner : undefined;
  return found === undefined ? '' : ` (${found})`;
}

function lost(e: Endpoint, x: Exchange, cut: Cut, timeoutMs: number, error: unknown): BatonError {
  // The request may or may not have reached Baton and applied: never retried here.
  const details = { safeToRetry: x.safeToRetry };
  const at = `${x.method} ${x.path}`;
  if (cut === 'timeout') {
    const message = `no answer from Baton at ${baseOf(e)} for ${at} within ${timeoutMs} ms`;
    return new BatonError('client_timeout', message, { ...details, timeoutMs }, { cause: error });
  }
  if (cut === 'aborted') {
    return new BatonError('client_aborted', `${at} was aborted by the caller`, details, { cause: error });
  }
  const message = `no answer from Baton at ${baseOf(e)} for ${at}${errnoOf(error)}`;
  return new BatonError('unavailable', message, details, { cause: error });
}

type Init = {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
};

/**
 * A fetch answer's body, read as a stream and given up at the cap: an oversized answer is not read
 * (docs/client.md), so it never sits whole in memory. Past the cap the stream is cancelled, which
 * releases the connection; the answer is refused either way, so a failure to cancel changes
 * nothing the caller is told and is not waited for.
 */
async function readCapped(response: Response): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_ANSWER_BYTES) {
      reader.cancel().catch(() => undefined);
      throw new AnswerTooLarge(MAX_ANSWER_BYTES, response.status);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * The caller's fetch if it gave one, else the origin's keep-alive pool. Redirects are never
 * followed, on either wire: following one re-sends the command to wherever the Location points,
 * and that server's answer — a ticket Baton never issued — would be trusted as Baton's
 * (AOC-REQ-010). fetch is told `redirect: 'manual'`; a fetch that follows one anyway (a wrapper
 * that drops the option) is caught by `redirected`, so the adapter still never runs.
 */
async function send(e: Endpoint, url: URL, init: Init, safeToRetry: boolean): Promise<WireAnswer> {
  if (e.fetch === undefined) {
    return pooledRequest(url, { ...init, maxBytes: MAX_ANSWER_BYTES, resendOnStale: safeToRetry });
  }
  const response = await e.fetch(url, { ...init, redirect: 'manual' });
  const bytes = await readCapped(response);
  const contentType = response.headers.get('content-type') ?? '';
  return { status: response.status, contentType, bytes, ...(response.redirected && { redirected: true }) };
}

/**
 * The request's headers and body, built before anything is sent: a bearer or a body that cannot
 * travel (a BigInt or a cycle in `operation.request`) is the caller's `input_invalid` with
 * `sent: false` — never a lost answer, which would leave perform in doubt about a call never made.
 */
function build(x: Exchange): { headers: Record<string, string>; body: string | undefined } {
  const bearer = checkBearer(x.bearer, 'bearer');
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}`, accept: 'application/json' };
  if (x.body === undefined) return { headers, body: undefined };
  headers['content-type'] = 'application/json';
  try {
    return { headers, body: JSON.stringify(x.body) };
  } catch (error) {
    const why = error instanceof Error ? error.message : 'it cannot be serialized';
    const message = `${x.method} ${x.path}: the request body has no JSON form (${why})`;
    throw new BatonError('input_invalid', message, NOT_SENT, { cause: error });
  }
}

/** What a throw from the wire means: not sent, an answer too large to read, or a lost answer. */
function failed(e: Endpoint, x: Exchange, cut: Cut, timeoutMs: number, error: unknown): BatonError {
  if (error instanceof NotSent) {
    const message = `${x.method} ${x.path}: the request could not be built; nothing was sent`;
    return new BatonError('input_invalid', message, { sent: false, safeToRetry: true }, { cause: error });
  }
  if (error instanceof AnswerTooLarge) {
    return invalid(x, error.status, `an answer over ${error.maxBytes / (1024 * 1024)} MiB, not read`);
  }
  return lost(e, x, cut, timeoutMs, error);
}

export async function exchange(e: Endpoint, x: Exchange, options: CallOptions = {}): Promise<JsonObject> {
  const timeoutMs = options.timeoutMs === undefined ? e.timeoutMs : checkTimeout(options.timeoutMs, NOT_SENT);
  if (options.signal?.aborted === true) {
    // Nothing was sent: the one abort that is known to have changed nothing.
    throw new BatonError('client_aborted', `${x.method} ${x.path} was aborted before it was sent`, {
      safeToRetry: true,
      sent: false,
    });
  }
  const { headers, body } = build(x);
  const call = callSignal(timeoutMs, options.signal);
  let answer: WireAnswer;
  try {
    const init = { method: x.method, headers, body, signal: call.signal };
    // The deadline covers the whole answer, body included: a server that stalls mid-body is cut off too.
    answer = await send(e, routeUrl(e, x.path), init, x.safeToRetry);
  } catch (error) {
    throw failed(e, x, call.cut(), timeoutMs, error);
  } finally {
    call.done();
  }
  // A redirect (or a followed one) is not Baton's answer: doubt, as a lost answer is; the command
  // may have applied at Baton, or been re-sent elsewhere. An opaque redirect has status 0.
  if (answer.redirected === true) throw invalid(x, answer.status, 'an answer from a followed redirect');
  // Only a JSON answer is read as one: a text/html page whose bytes happen to parse is not Baton's.
  const json = isJson(answer.contentType);
  if (answer.status >= 400) throw problemError(x, answer.status, json ? parse(answer.bytes) : undefined);
  if (answer.status < 200 || answer.status > 299) throw invalid(x, answer.status, `HTTP ${answer.status}`);
  const type = JSON.stringify(answer.contentType.slice(0, 80));
  if (!json) throw invalid(x, answer.status, `Content-Type ${type}, not JSON`);
  const parsed = parse(answer.bytes);
  if (!isObject(parsed)) throw invalid(x, answer.status, 'a body that is not a JSON object');
  return parsed;
}

/** Why an answer's members are not what its route promises (answer-shape.ts), or undefined. */
export type AnswerFault = (body: JsonObject) => string | undefined;

/**
 * The members a route promises; an answer without them is not trusted to mean anything. `fault`
 * checks inside them where the caller acts on their contents (an entry ticket: AOC-REQ-010).
 */
export function expectMembers<T>(
  x: Exchange,
  body: JsonObject,
  members: readonly string[],
  fault?: AnswerFault,
): T {
  for (const m of members) if (!Object.hasOwn(body, m)) throw invalid(x, 200, `no "${m}" member`);
  const why = fault?.(body);
  if (why !== undefined) throw invalid(x, 200, why);
  return body as unknown as T;
}
