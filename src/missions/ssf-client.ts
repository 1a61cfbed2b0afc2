/**
 * SET delivery (A2.5): the RFC 8935 push receiver's parsing and answers, and the RFC 8936 poll
 * client. A push answer is `202` or `400 application/json {"err","description"}` (RFC 8935 §2.4,
 * not problem+json); a bad stream bearer is `401 authentication_failed`. Replay goes through a
 * SetReplayPort: same bytes ⇒ 202 and nothing reapplied, other bytes ⇒ 400 `invalid_request`
 * (C-A18). A poll acknowledges a SET only after the handler applied it (MSG-02 "acknowledge per
 * delivery method"), and reports refused SETs in `setErrs`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import { parseStrictJson } from '../core/json.js';
import type { MissionKeySource } from './jwks.js';
import { MAX_COMPACT_BYTES } from './jwt-parts.js';
import type { SeenOutcome, SetReplayPort } from './replay.js';
import {
  SET_MEDIA_TYPE,
  setRefusal,
  verifyMissionSet,
  verifyMissionSets,
  type SetErrorCode,
  type SetExpectation,
  type VerifiedSet,
} from './signals.js';
import { readCapped, type FetchLike } from './status-client.js';

export interface SetErrorBody {
  readonly err: SetErrorCode;
  readonly description: string;
}

export type PushAnswer =
  { readonly status: 202 } | { readonly status: 400 | 401; readonly body: SetErrorBody };

export interface PushRequest {
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: Uint8Array | string;
}

export interface PushContext {
  readonly keys: MissionKeySource;
  readonly expect: SetExpectation;
  /** The SSF stream's bearer the transmitter presents (compared in constant time). */
  readonly bearer: string;
  readonly nowMs: number;
}

const fail = (status: 400 | 401, err: SetErrorCode, description: string): PushAnswer => ({
  status,
  body: { err, description },
});

/** RFC 6750 §2.1: `Bearer` and the token; the scheme is case-insensitive (RFC 9110 §11.1). */
const BEARER_HEADER = /^Bearer +([^\s]+) *$/i;

/** The token an `Authorization` header presents, or '' when it presents none. */
export function presentedBearer(header: string | undefined): string {
  return typeof header === 'string' ? (BEARER_HEADER.exec(header)?.[1] ?? '') : '';
}

function bearerMatches(header: string | undefined, bearer: string): boolean {
  const given = presentedBearer(header);
  if (given === '') return false;
  return timingSafeEqual(
    createHash('sha256').update(given).digest(),
    createHash('sha256').update(bearer).digest(),
  );
}

type PushParse =
  { readonly ok: true; readonly set: VerifiedSet } | { readonly ok: false; readonly answer: PushAnswer };

/** A3.4 steps 1–4 for a pushed SET: the verified SET, or the RFC 8935 answer refusing it. */
export async function parsePushedSet(request: PushRequest, ctx: PushContext): Promise<PushParse> {
  if (!bearerMatches(request.authorization, ctx.bearer)) {
    return { ok: false, answer: fail(401, 'authentication_failed', 'stream bearer missing or wrong') };
  }
  return parseAuthenticatedPush(request, ctx);
}

/**
 * A3.4 steps 2–4 for a pushed SET whose transmitter the caller has already authenticated (RFC 8935
 * §2.2: `baton serve` compares the presented bearer's digest with the registered one, and had
 * then compared the bearer with itself here, two digests per push for nothing).
 */
export async function parseAuthenticatedPush(
  request: PushRequest,
  ctx: Omit<PushContext, 'bearer'>,
): Promise<PushParse> {
  const media = (request.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media !== SET_MEDIA_TYPE)
    return { ok: false, answer: fail(400, 'invalid_request', `Content-Type is not ${SET_MEDIA_TYPE}`) };
  const text = typeof request.body === 'string' ? request.body : Buffer.from(request.body).toString('latin1');
  if (text.length > MAX_COMPACT_BYTES)
    return { ok: false, answer: fail(400, 'invalid_request', 'SET larger than 64 KiB') };
  try {
    return { ok: true, set: await verifyMissionSet(text.trim(), ctx.keys, ctx.expect, ctx.nowMs) };
  } catch (error) {
    const refusal = setRefusal(error);
    if (refusal === undefined) throw error;
    return { ok: false, answer: fail(400, refusal.err, (error as BatonError).message) };
  }
}

/** The push answer for the replay port's verdict. */
export function replayAnswer(outcome: SeenOutcome): PushAnswer {
  return outcome === 'conflict'
    ? fail(400, 'invalid_request', 'jti already received with other bytes')
    : { status: 202 };
}

export function setJti(set: VerifiedSet): { jti: string; digest: string } {
  return set.kind === 'lifecycle'
    ? { jti: set.signal.jti, digest: set.signal.digest }
    : { jti: set.jti, digest: set.digest };
}

/**
 * Parse, verify and replay-check one pushed SET. `fresh` is the SET to apply when the outcome is
 * `new`; the caller applies it and then answers (the harness answers 202 after its COMMIT).
 */
export async function receivePushedSet(
  request: PushRequest,
  ctx: PushContext,
  seen: SetReplayPort,
): Promise<{
  readonly answer: PushAnswer;
  readonly outcome: SeenOutcome | null;
  readonly fresh: VerifiedSet | null;
}> {
  const parsed = await parsePushedSet(request, ctx);
  if (!parsed.ok) return { answer: parsed.answer, outcome: null, fresh: null };
  const { jti, digest } = setJti(parsed.set);
  const outcome = await seen.seen(ctx.expect.issuer, jti, digest, parsed.set.expiresAt);
  return { answer: replayAnswer(outcome), outcome, fresh: outcome === 'new' ? parsed.set : null };
}

// --- RFC 8936 poll ---------------------------------------------------------------------------

export interface PollRequest {
  readonly ack?: readonly string[];
  readonly setErrs?: Readonly<Record<string, SetErrorBody>>;
  readonly maxEvents?: number;
  readonly returnImmediately?: boolean;
}

export interface PollResponse {
  readonly sets: Readonly<Record<string, string>>;
  readonly moreAvailable: boolean;
}

export interface PollTarget {
  readonly endpoint: string;
  readonly bearer: string;
  readonly fetch?: FetchLike;
  readonly timeoutMs?: number;
}

/** The answer of RFC 8936 §2.4, strictly: `sets` maps jti to a compact SET string. */
export function parsePollResponse(body: Uint8Array): PollResponse {
  const doc = parseStrictJson(body);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new BatonError('unavailable', 'poll answer is not an object');
  const sets = doc['sets'];
  if (typeof sets !== 'object' || sets === null || Array.isArray(sets))
    throw new BatonError('unavailable', 'poll answer has no sets object');
  // A jti is any string, `__proto__` included: on a plain object that key's assignment sets the
  // prototype and the SET vanishes — never acknowledged, never in setErrs. A null-prototype
  // object keeps every key as an ordinary own member (RFC 8936 §2.4: each SET is acknowledged or
  // reported).
  const out = Object.create(null) as Record<string, string>;
  for (const [jti, set] of Object.entries(sets)) {
    if (typeof set !== 'string') throw new BatonError('unavailable', 'a polled SET is not a string');
    out[jti] = set;
  }
  const more = doc['moreAvailable'];
  if (more !== undefined && typeof more !== 'boolean')
    throw new BatonError('unavailable', 'moreAvailable is not a boolean');
  return { sets: out, moreAvailable: more === true };
}

/** One RFC 8936 poll: acknowledgements and errors out, SETs in. */
export async function pollSets(target: PollTarget, request: PollRequest): Promise<PollResponse> {
  const body: Record<string, unknown> = {
    ack: [...(request.ack ?? [])],
    returnImmediately: request.returnImmediately ?? true,
  };
  if (request.setErrs !== undefined && Object.keys(request.setErrs).length > 0)
    body['setErrs'] = request.setErrs;
  if (request.maxEvents !== undefined) body['maxEvents'] = request.maxEvents;
  let response: Response;
  try {
    response = await (target.fetch ?? fetch)(target.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${target.bearer}`,
      },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(target.timeoutMs ?? 10_000),
    });
  } catch (cause) {
    throw new BatonError('unavailable', 'SET poll endpoint unreachable', {}, { cause });
  }
  const text = await readCapped(response, 16 * MAX_COMPACT_BYTES);
  if (response.status !== 200 || text === undefined) {
    throw new BatonError('unavailable', `SET poll answered ${response.status}`, { status: response.status });
  }
  return parsePollResponse(text);
}

export interface PollerOptions extends PollTarget {
  readonly keys: MissionKeySource;
  readonly expect: SetExpectation;
  readonly clock: Clock;
  /**
   * Replay-checks and applies one verified SET, in one transaction (the harness: `msn_sets_seen`
   * insert and view update together), and says what it was. Only after it resolves is the SET
   * acknowledged; a throw leaves it unacknowledged, so the transmitter redelivers it.
   */
  readonly onSet: (set: VerifiedSet) => Promise<SeenOutcome>;
  /**
   * When given, used instead of `onSet`: all the round's verified SETs at once, in the answer's
   * order (the harness: one transaction, issue 11 §8). `null`: that SET was not applied (left
   * unacknowledged, so it is redelivered); a throw leaves the whole round unacknowledged.
   */
  readonly onSets?: (sets: readonly VerifiedSet[]) => Promise<(SeenOutcome | null)[]>;
  readonly maxEvents?: number;
}

export interface PollRound {
  readonly applied: readonly VerifiedSet[];
  readonly duplicates: number;
  readonly refused: Readonly<Record<string, SetErrorBody>>;
  readonly moreAvailable: boolean;
}

/**
 * An `onSet` for stores without a transaction spanning both (tests, the CLI): replay check first,
 * then `apply` for a new SET. An apply that throws after a `new` verdict is not retried by the
 * transmitter's redelivery — the harness uses its own transaction instead.
 */
export function withReplay(
  seen: SetReplayPort,
  issuer: string,
  apply: (set: VerifiedSet) => Promise<void>,
): (set: VerifiedSet) => Promise<SeenOutcome> {
  return async (set) => {
    const { jti, digest } = setJti(set);
    const outcome = await seen.seen(issuer, jti, digest, set.expiresAt);
    if (outcome === 'new') await apply(set);
    return outcome;
  };
}

function noProto<T = SetErrorBody>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** An RFC 8936 poll loop's state: what to acknowledge and report on the next request. */
export class SetPoller {
  readonly #o: PollerOptions;
  #bearer: string;
  #ack: string[] = [];
  // Null-prototype for the same reason as parsePollResponse's `sets`: a `__proto__` jti is a key.
  #errs: Record<string, SetErrorBody> = noProto();

  constructor(o: PollerOptions) {
    this.#o = o;
    this.#bearer = o.bearer;
  }

  /** The bearer the next poll presents (a rotated stream credential), acknowledgements kept. */
  useBearer(bearer: string): void {
    this.#bearer = bearer;
  }

  async pollOnce(): Promise<PollRound> {
    const answer = await pollSets(
      { ...this.#o, bearer: this.#bearer },
      {
        ack: this.#ack,
        setErrs: this.#errs,
        returnImmediately: true,
        ...(this.#o.maxEvents !== undefined && { maxEvents: this.#o.maxEvents }),
      },
    );
    this.#ack = [];
    this.#errs = noProto();
    const { jtis, verified } = await this.#verifyAll(answer.sets);
    const outcomes = await this.#applyAll(verified);
    const applied: VerifiedSet[] = [];
    let duplicates = 0;
    outcomes.forEach((outcome, i) => {
      const jti = jtis[i] as string;
      if (outcome === null) return;
      if (outcome === 'conflict') {
        this.#errs[jti] = { err: 'invalid_request', description: 'jti already received with other bytes' };
        return;
      }
      this.#ack.push(jti);
      if (outcome === 'duplicate') duplicates += 1;
      else applied.push(verified[i] as VerifiedSet);
    });
    return {
      applied,
      duplicates,
      refused: Object.assign(noProto<SetErrorBody>(), this.#errs),
      moreAvailable: answer.moreAvailable,
    };
  }

  /** The answer's SETs verified (concurrently); refused ones go to the next poll's `setErrs`. */
  async #verifyAll(
    sets: Readonly<Record<string, string>>,
  ): Promise<{ jtis: string[]; verified: VerifiedSet[] }> {
    const entries = Object.entries(sets);
    const verdicts = await verifyMissionSets(
      entries.map(([, set]) => set),
      this.#o.keys,
      this.#o.expect,
      this.#o.clock.wallMs(),
    );
    const jtis: string[] = [];
    const verified: VerifiedSet[] = [];
    entries.forEach(([jti], i) => {
      const v = verdicts[i];
      if (v === undefined) return;
      if (!v.ok)
        this.#errs[jti] = {
          err: setRefusal(v.error)?.err ?? 'invalid_request',
          description: v.error.message,
        };
      else if (setJti(v.set).jti !== jti)
        this.#errs[jti] = { err: 'invalid_request', description: 'the SET jti is not its key in sets' };
      else {
        jtis.push(jti);
        verified.push(v.set);
      }
    });
    return { jtis, verified };
  }

  async #applyAll(sets: readonly VerifiedSet[]): Promise<(SeenOutcome | null)[]> {
    if (this.#o.onSets !== undefined) return this.#o.onSets(sets);
    const out: SeenOutcome[] = [];
    for (const set of sets) out.push(await this.#o.onSet(set));
    return out;
  }

  /** Acknowledgements and errors the next poll will send. */
  get pending(): { ack: readonly string[]; setErrs: Readonly<Record<string, SetErrorBody>> } {
    return { ack: [...this.#ack], setErrs: Object.assign(noProto<SetErrorBody>(), this.#errs) };
  }
}
