/**
 * One HTTP exchange, exactly once: node:http, no automatic retry anywhere in the stack, a hard
 * timeout and a response size cap. A provider entry must be sent at most once (AOC-REQ-010); this
 * is the only place bytes leave for a provider. An entry goes on a fresh socket; a status query
 * (`pooled`, a read) goes on a keep-alive pool per provider origin (issue 16 §5), whose idle
 * sockets are closed before a server's usual 5 s keep-alive would close them under a reuse.
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { CredentialUse } from '../occurrences/index.js';
import { credentialHeader, type CredentialRefusal } from './credential-header.js';
import type { KeyResolver } from './key-resolver.js';

const pools = new Map<string, HttpAgent>();

function pool(url: URL): HttpAgent {
  let agent = pools.get(url.origin);
  if (agent === undefined) {
    const options = { keepAlive: true, timeout: 4_000, scheduling: 'lifo' as const };
    agent = url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    pools.set(url.origin, agent);
  }
  return agent;
}

export interface ExchangeInput {
  readonly method: 'GET' | 'POST';
  readonly url: URL;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  /**
   * A status query (a read): on the origin's keep-alive pool. Never set for a provider entry. It
   * asks for JSON (`accept: application/json`) unless `headers` names its own `accept`.
   */
  readonly pooled?: boolean;
  /**
   * The credential the request carries. It is attached HERE, against this very `url`, and only
   * when its credentials entry lists the URL's origin; otherwise nothing is sent (error
   * `credential`). Never pass a secret in `headers`.
   */
  readonly credential?: { readonly use: CredentialUse | undefined; readonly keys: KeyResolver };
}

export type ExchangeResult =
  | {
      readonly ok: true;
      readonly status: number;
      readonly headers: IncomingHttpHeaders;
      readonly body: string;
      /** The request-target as sent (path and query): what a provider signature covers. */
      readonly path: string;
    }
  | {
      /** The credential was not attached and the request was not made (`sent` is false). */
      readonly ok: false;
      readonly error: 'credential';
      readonly name: CredentialRefusal;
      readonly sent: false;
    }
  | {
      readonly ok: false;
      readonly error: 'timeout' | 'transport' | 'too_large';
      /** The error's code or name (ECONNREFUSED, ECONNRESET…), never its message. */
      readonly name: string;
      /** Whether the whole request had been written before the failure. */
      readonly sent: boolean;
    }
  | {
      /**
       * The request accepts only JSON (`accept: application/json`) and the answer's Content-Type
       * is not a JSON media type: not read at all. `name` is that type (`text/html`), `none` when
       * absent, `unreadable` when it is not a plain `type/subtype`.
       */
      readonly ok: false;
      readonly error: 'media_type';
      readonly name: string;
      readonly sent: true;
      /** The answer's HTTP status and its Retry-After, the one header a refused answer passes on. */
      readonly status: number;
      readonly retryAfter?: string;
    };

/** A failed exchange, for the helpers below. */
export type ExchangeFailure = Extract<ExchangeResult, { ok: false }>;

/**
 * What a failed exchange says in a reading's or an entry's detail: `timeout`, `http 503 media_type
 * text/html` (an answer not read for its media type keeps its status), or `transport ECONNRESET`.
 */
export function failureDetail(res: ExchangeFailure): string {
  if (res.error === 'timeout') return 'timeout';
  if (res.error === 'media_type') return `http ${res.status} media_type ${res.name}`;
  return `${res.error} ${res.name}`;
}

/**
 * The provider's `Retry-After` on an answer: an answer read, or one refused for its media type
 * (an HTML 503 page), which passes this one header on.
 */
export function retryAfterOf(res: ExchangeResult): string | undefined {
  const value = res.ok ? res.headers['retry-after'] : res.error === 'media_type' ? res.retryAfter : undefined;
  return typeof value === 'string' ? value : undefined;
}

const MAX_RESPONSE_BYTES = 1_048_576;

/** A JSON media type: `application/json` or any `application/…+json` (RFC 6839), parameters aside. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  const type = (contentType?.split(';', 1)[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9!#$&^_.-]{1,100}\+json$/.test(type);
}

const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]{1,64}\/[a-z0-9!#$&^_.+-]{1,64}$/;

/** The answer's media type for a reason (never anything else from the header). */
function mediaTypeName(contentType: string | undefined): string {
  if (contentType === undefined) return 'none';
  const type = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  return MEDIA_TYPE.test(type) ? type : 'unreadable';
}

function errorName(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code)) return code;
  return error instanceof Error ? error.name : 'unknown';
}

export function exchange(input: ExchangeInput): Promise<ExchangeResult> {
  const credential =
    input.credential === undefined
      ? undefined
      : credentialHeader(input.credential.use, input.credential.keys, input.url);
  if (credential !== undefined && !credential.ok) {
    return Promise.resolve({ ok: false, error: 'credential', name: credential.code, sent: false });
  }
  const attached = credential?.ok === true ? credential.headers : {};
  const path = input.url.pathname + input.url.search;
  const send = input.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let sent = false;
    let failure: 'timeout' | 'too_large' | undefined;
    const asked: Record<string, string> = input.pooled === true ? { accept: 'application/json' } : {};
    const headers: Record<string, string> = { ...asked, ...input.headers, ...attached };
    // Asked for JSON only, an answer of another media type is not read (a by-id answer served as
    // text/html is not a status answer, whatever its body holds): fail closed.
    const json = headers['accept']?.trim().toLowerCase() === 'application/json';
    if (input.body !== undefined) headers['content-length'] = String(Buffer.byteLength(input.body));
    const agent = input.pooled === true ? pool(input.url) : false;
    let req: ClientRequest;
    try {
      req = send(input.url, { method: input.method, headers, agent }, (res) => onResponse(res));
    } catch (error) {
      // node:http refuses to build the request (a header value with a control character:
      // ERR_INVALID_CHAR) before anything leaves: a transport failure with nothing sent. Rejecting
      // instead would break this function's contract, and the caller's record of the entry with it.
      resolve({ ok: false, error: 'transport', name: errorName(error), sent: false });
      return;
    }
    function onResponse(res: IncomingMessage): void {
      const contentType = res.headers['content-type'];
      if (json && !isJsonMediaType(contentType)) {
        clearTimeout(timer);
        const retryAfter = res.headers['retry-after'];
        resolve({
          ok: false,
          error: 'media_type',
          name: mediaTypeName(contentType),
          sent: true,
          status: res.statusCode ?? 0,
          ...(typeof retryAfter === 'string' && { retryAfter }),
        });
        req.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          failure = 'too_large';
          req.destroy();
        } else chunks.push(chunk);
      });
      res.on('end', () => {
        // The chunk that crossed the cap may be the last one: the body then still 'end's, cut
        // short. An answer over the cap is refused whole, never read in part (docs/providers.md).
        if (failure !== undefined) return fail(new Error(failure));
        clearTimeout(timer);
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ ok: true, status: res.statusCode ?? 0, headers: res.headers, body, path });
      });
      res.on('error', (error) => fail(error));
      res.on('close', () => {
        if (!res.complete) fail(new Error('aborted'));
      });
    }
    const fail = (error: unknown): void => {
      clearTimeout(timer);
      resolve({ ok: false, error: failure ?? 'transport', name: failure ?? errorName(error), sent });
    };
    const timer = setTimeout(() => {
      failure = 'timeout';
      req.destroy(new Error('timeout'));
    }, input.timeoutMs);
    req.on('error', fail);
    req.on('finish', () => (sent = true));
    req.end(input.body);
  });
}
