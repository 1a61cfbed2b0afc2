/**
 * One HTTP exchange with the Baton API (docs/api.md): bearer auth, strict JSON both ways, and every
 * failure as a BatonError. A problem+json answer keeps the server's `code`; a lost answer is
 * `unavailable`. NOTHING here retries: whether a call may be repeated depends on the call
 * (docs/client.md "Retry safety"), so the caller decides, and `details.safeToRetry` says it.
 */
import { BatonError, isBatonErrorCode, type BatonErrorCode } from '../core/errors.js';
import { parseStrictJson, type JsonObject, type JsonValue } from '../core/json.js';

export type Fetch = typeof fetch;

export interface Exchange {
  readonly method: 'GET' | 'POST' | 'PUT';
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

function invalid(x: Exchange, status: number, why: string): BatonError {
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

/** RFC 9457 problem → BatonError with the server's code, detail and details. */
function problemError(x: Exchange, status: number, body: JsonValue | undefined): BatonError {
  const p = isObject(body) ? body : {};
  const named = typeof p['code'] === 'string' && isBatonErrorCode(p['code']) ? p['code'] : undefined;
  const code = named ?? BY_STATUS[status] ?? (status >= 500 ? 'unavailable' : 'baton_response_invalid');
  const message = typeof p['detail'] === 'string' ? p['detail'] : `HTTP ${status}`;
  const details = isObject(p['details']) ? p['details'] : {};
  return new BatonError(code, message, { ...details, status, safeToRetry: x.safeToRetry });
}

export async function exchange(fetchFn: Fetch, baseUrl: string, x: Exchange): Promise<JsonObject> {
  const headers: Record<string, string> = { authorization: `Bearer ${x.bearer}`, accept: 'application/json' };
  if (x.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let bytes: Uint8Array;
  try {
    const init = {
      method: x.method,
      headers,
      body: x.body === undefined ? undefined : JSON.stringify(x.body),
    };
    response = await fetchFn(new URL(x.path, baseUrl), init);
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    // The request may or may not have reached Baton and applied: never retried here.
    throw new BatonError(
      'unavailable',
      `no answer from Baton for ${x.method} ${x.path}`,
      { safeToRetry: x.safeToRetry },
      { cause: error },
    );
  }
  const body = parse(bytes);
  if (response.status >= 400) throw problemError(x, response.status, body);
  if (!isObject(body)) throw invalid(x, response.status, 'a body that is not a JSON object');
  return body;
}

/** The members a route promises; an answer without them is not trusted to mean anything. */
export function expectMembers<T>(x: Exchange, body: JsonObject, members: readonly string[]): T {
  for (const m of members) if (!Object.hasOwn(body, m)) throw invalid(x, 200, `no "${m}" member`);
  return body as unknown as T;
}
