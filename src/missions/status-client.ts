/**
 * The Mission Status client (MST-01, MST-02, A3.2): POST form `mission`, `audience`, `nonce` to the
 * pinned status endpoint, authenticated by `private_key_jwt` (RFC 7523: `{iss, sub: client_id,
 * aud: issuer, jti, iat, exp: iat + 60}`), body read up to 64 KiB, then verified. Every answer
 * that is not a verified signed status — 401, 404, 429, 503, any other status, a network failure,
 * a refused signature — is a typed `unknown` result: never active, never revoked (C-A14). After a
 * 429, or a 503 that said how long (`Retry-After`), the client sends nothing until that has passed
 * (status-backoff.ts): meanwhile each check answers the hold's reason (`rate_limited`,
 * `unavailable`) at once, `backedOff`, without a request.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import { signJwsWithKey, type ForeignSigningKey } from '../core/jose.js';
import { advertisedReliance, type IssuerPin } from './issuer-pin.js';
import type { MissionKeySource } from './jwks.js';
import { MAX_COMPACT_BYTES } from './jwt-parts.js';
import { NonceBook } from './nonces.js';
import { statusHoldSeconds, StatusBackoff } from './status-backoff.js';
import { statusRefusal, STATUS_MEDIA_TYPE, verifyStatusAnswer, type StatusCheck } from './status.js';
import type { VerifiedMissionStatus } from './verified.js';

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export type StatusUnknownReason =
  | 'unauthorized'
  | 'not_found'
  | 'rate_limited'
  | 'unavailable'
  | 'http_error'
  | 'unreachable'
  | 'too_large'
  | 'refused';

export type StatusFetchResult =
  | { readonly kind: 'verified'; readonly status: VerifiedMissionStatus }
  | {
      readonly kind: 'unknown';
      readonly reason: StatusUnknownReason;
      readonly httpStatus: number | null;
      /**
       * `rate_limited`, and `unavailable` when the 503 said how long: the seconds before this
       * client sends again — the answer's `Retry-After` (or body `retry_after`) bounded by
       * status-backoff.ts, or what is left of the hold.
       */
      readonly retryAfterSec: number | null;
      /** `refused`: which A3.2 check failed. */
      readonly refusal: { readonly step: number; readonly check: StatusCheck } | null;
      /** No request: an earlier 429's or 503's hold has not passed (A7#13); `reason` is its own. */
      readonly backedOff?: true;
      /**
       * `unreachable` (or a local `unavailable`): what failed — TLS, DNS, a refused connection, a
       * timeout, a key that would not load — for logs only, never in a message.
       */
      readonly cause?: unknown;
    };

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface StatusClientOptions {
  readonly pin: IssuerPin;
  /**
   * The private_key_jwt key, or how to get it at each request (a key file rotated in place is
   * used without a restart: the consumer reads its reference again per check). A getter that
   * throws sends nothing.
   */
  readonly clientKey: ForeignSigningKey | (() => ForeignSigningKey);
  readonly keys: MissionKeySource;
  readonly clock: Clock;
  readonly nonces?: NonceBook;
  readonly fetch?: FetchLike;
  readonly timeoutMs?: number;
}

const ERROR_STATUSES: Readonly<Record<number, StatusUnknownReason>> = {
  401: 'unauthorized',
  404: 'not_found',
  429: 'rate_limited',
  503: 'unavailable',
};

interface UnknownExtra {
  readonly retryAfterSec?: number | null;
  readonly refusal?: { step: number; check: StatusCheck } | null;
  readonly backedOff?: true;
  readonly cause?: unknown;
}

function unknown(
  reason: StatusUnknownReason,
  httpStatus: number | null,
  extra: UnknownExtra = {},
): StatusFetchResult {
  return {
    kind: 'unknown',
    reason,
    httpStatus,
    retryAfterSec: extra.retryAfterSec ?? null,
    refusal: extra.refusal ?? null,
    ...(extra.backedOff === true && { backedOff: true as const }),
    ...('cause' in extra && { cause: extra.cause }),
  };
}

/** The body, or undefined past `max` bytes (the read is abandoned, not buffered). */
export async function readCapped(response: Response, max: number): Promise<Buffer | undefined> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > max) {
    await response.body?.cancel();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

/** RFC 9110 `Retry-After`: delay-seconds or an HTTP-date; else the body's `retry_after`. */
export function retryAfterSeconds(
  header: string | null,
  body: Buffer | undefined,
  nowMs: number,
): number | null {
  if (header !== null && /^[0-9]{1,9}$/.test(header.trim())) return Number(header.trim());
  if (header !== null && !Number.isNaN(Date.parse(header)))
    return Math.max(0, Math.ceil((Date.parse(header) - nowMs) / 1000));
  try {
    const parsed = JSON.parse(body?.toString('utf8') ?? '') as { retry_after?: unknown };
    if (
      typeof parsed.retry_after === 'number' &&
      Number.isSafeInteger(parsed.retry_after) &&
      parsed.retry_after >= 0
    ) {
      return parsed.retry_after;
    }
  } catch {
    // A malformed error body says nothing more; the answer is unknown either way.
  }
  return null;
}

/** RFC 7523 client assertion for `audience` (the issuer identifier). */
export async function clientAssertion(
  key: ForeignSigningKey,
  clientId: string,
  audience: string,
  nowMs: number,
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const claims = {
    iss: clientId,
    sub: clientId,
    aud: audience,
    jti: randomBytes(16).toString('base64url'),
    iat,
    exp: iat + 60,
  };
  return signJwsWithKey(Buffer.from(JSON.stringify(claims)), key, 'JWT');
}

export class MissionStatusClient {
  readonly #o: StatusClientOptions;
  readonly #nonces: NonceBook;
  readonly #fetch: FetchLike;
  readonly #backoff: StatusBackoff;

  constructor(o: StatusClientOptions) {
    this.#o = o;
    this.#nonces = o.nonces ?? new NonceBook();
    this.#fetch = o.fetch ?? ((url, init) => fetch(url, init));
    this.#backoff = new StatusBackoff(o.clock);
  }

  /**
   * One fetch and verification of `missionId` for the pin's audience; inside a 429's or 503's
   * hold, no request: that answer's reason, `backedOff`, with the seconds left (fail closed: never
   * active).
   */
  async check(missionId: string): Promise<StatusFetchResult> {
    const { pin, clock } = this.#o;
    const held = this.#backoff.held();
    if (held !== undefined)
      return unknown(held.reason, null, { retryAfterSec: held.seconds, backedOff: true });
    const key = typeof this.#o.clientKey === 'function' ? this.#o.clientKey() : this.#o.clientKey;
    const nonce = this.#nonces.issue(missionId, pin.audience, clock.wallMs());
    const form = new URLSearchParams({
      mission: missionId,
      audience: pin.audience,
      nonce,
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: await clientAssertion(key, pin.client.client_id, pin.issuer, clock.wallMs()),
    });
    let response: Response;
    try {
      response = await this.#fetch(pin.endpoints.status, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: STATUS_MEDIA_TYPE },
        body: form.toString(),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.#o.timeoutMs ?? 5000),
      });
    } catch (cause) {
      this.#nonces.take(nonce, missionId, pin.audience, clock.wallMs());
      return unknown('unreachable', null, { cause });
    }
    return this.#answer(response, missionId, nonce);
  }

  async #answer(response: Response, missionId: string, nonce: string): Promise<StatusFetchResult> {
    const { pin, clock } = this.#o;
    let body: Buffer | undefined;
    try {
      body = await readCapped(response, MAX_COMPACT_BYTES);
    } catch {
      body = undefined;
    }
    // The nonce is spent whatever came back: single use (MST-01).
    const live = this.#nonces.take(nonce, missionId, pin.audience, clock.wallMs());
    if (response.status !== 200) {
      const reason = ERROR_STATUSES[response.status] ?? 'http_error';
      // A7#13: a 429's Retry-After (a default when unreadable), and a 503's when it gave one,
      // honoured, bounded, for every Mission of this issuer (status-backoff.ts).
      const asked = retryAfterSeconds(response.headers.get('retry-after'), body, clock.wallMs());
      const retryAfterSec = statusHoldSeconds(response.status, asked);
      if (retryAfterSec === undefined || (reason !== 'rate_limited' && reason !== 'unavailable'))
        return unknown(reason, response.status);
      this.#backoff.hold(retryAfterSec, reason);
      return unknown(reason, response.status, { retryAfterSec });
    }
    if (body === undefined) return unknown('too_large', 200);
    if (!live) return unknown('refused', 200, { refusal: { step: 5, check: 'nonce' } });
    try {
      const status = await verifyStatusAnswer(
        { contentType: response.headers.get('content-type') ?? undefined, body },
        this.#o.keys,
        {
          issuer: pin.issuer,
          audience: pin.audience,
          clientId: pin.client.client_id,
          nonce,
          missionId,
          algorithms: pin.algorithms,
          maxStaleSeconds: advertisedReliance(pin),
        },
        clock.wallMs(),
      );
      return { kind: 'verified', status };
    } catch (error) {
      const refusal = statusRefusal(error);
      if (refusal !== undefined) return unknown('refused', 200, { refusal });
      if (error instanceof BatonError && error.code === 'unavailable')
        return unknown('unreachable', 200, { cause: error });
      throw error;
    }
  }
}
