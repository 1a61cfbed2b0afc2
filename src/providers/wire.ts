/**
 * Reading a provider's answers: the sandbox's wire format (docs/sandbox.md) — its signature headers,
 * its payment object and its not-found answer. Everything a provider says is read strictly and
 * defensively: a member of the wrong type is treated as absent, so it can only weaken the answer
 * (to missing knowledge), never strengthen it (AOC-REQ-009).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { JsonObject, JsonValue } from '../core/json.js';
import { parseStrictJson } from '../core/json.js';
import { isRfc3339DateTime, parseRfc3339 } from '../core/time.js';
import type { AuthenticationPin, ObservationInput } from '../occurrences/index.js';
import { pinMaterial, type KeyResolver } from './key-resolver.js';
import { sandboxHeaderName, sandboxSignedString, verifySandboxSignature } from './sandbox/index.js';

export type Carried = ObservationInput['carried'];

export type Authentication =
  | {
      readonly verified: true;
      readonly pin: string;
      /**
       * When the provider signed the answer (the signature's own timestamp, whole seconds, in ms);
       * absent for an answer trusted by its channel. An answer is never dated later than this.
       */
      readonly signedAt?: number;
    }
  | { readonly verified: false; readonly detail: string };

export interface SignedMessage {
  readonly method: string;
  /** The request-target the answer is about (path and query), as the signature covers it. */
  readonly path: string;
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * Authenticate an answer against ONE pin. Freshness is not judged here: an authentic old answer is
 * authentic, and the service judges its age against the profile's freshness horizon (`stale`) —
 * which is why the verdict carries when it was signed: the answer's date must not be the time it
 * was fetched (status-sources/reading.ts answerTime), or a replayed old answer would look fresh.
 */
export function authenticate(
  message: SignedMessage,
  pin: AuthenticationPin,
  keys: KeyResolver,
  nowMs: number,
): Authentication {
  const material = pinMaterial(pin, keys);
  if (!material.ok) return { verified: false, detail: material.detail };
  const raw = message.headers[sandboxHeaderName(material.pin.kind)];
  const verdict = verifySandboxSignature({
    // Two signature headers are not one signature: a malformed header fails as bad_signature.
    header: Array.isArray(raw) ? 'duplicate' : raw,
    signedString: sandboxSignedString(message),
    pin: material.pin,
    nowMs,
    toleranceMs: Number.POSITIVE_INFINITY,
  });
  if (!verdict.ok) return { verified: false, detail: verdict.reason };
  return { verified: true, pin: material.id, signedAt: verdict.timestampMs };
}

export function parseAnswer(body: string): JsonValue | undefined {
  try {
    return parseStrictJson(body, { maxBytes: 1_048_576 });
  } catch {
    return undefined;
  }
}

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= 512 ? value : undefined;
}

/** The provider's own time for an answer (its signed `observed_at`), or undefined. */
export function observedAt(doc: JsonObject): number | undefined {
  const at = doc['observed_at'];
  return typeof at === 'string' && isRfc3339DateTime(at) ? parseRfc3339(at) : undefined;
}

const STATUS = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;

/**
 * The native status a profile maps. The sandbox reports a cancellation as `canceled` plus a reason;
 * only `canceled_before_processing` establishes no effect, so the reason is part of the status. A
 * status the reader cannot even spell becomes `_unreadable`, which no profile maps.
 */
export function nativeStatus(payment: JsonObject): string {
  const status = payment['status'];
  if (typeof status !== 'string' || !STATUS.test(status)) return '_unreadable';
  if (status === 'canceled' && payment['cancellation_reason'] === 'canceled_before_processing') {
    return 'canceled_before_processing';
  }
  return status;
}

export interface PaymentFacts {
  readonly nativeStatus: string;
  readonly carried: Carried;
  readonly observedAt: number | undefined;
}

/** A payment object: the binding fields it carries and its status. */
export function readPayment(value: unknown): PaymentFacts | undefined {
  const doc = asObject(value);
  if (doc === undefined || doc['object'] !== 'payment') return undefined;
  return {
    nativeStatus: nativeStatus(doc),
    carried: {
      account: text(doc['account']),
      environment: text(doc['environment']),
      nativeKey: text(doc['idempotency_key']),
      requestDigest: text(doc['request_digest']),
      providerReference: text(doc['reference']),
    },
    observedAt: observedAt(doc),
  };
}

/** The binding fields an error answer carries (a 404 names the account and the key or reference). */
export function readErrorCarried(doc: JsonObject): Carried {
  return {
    account: text(doc['account']),
    environment: text(doc['environment']),
    nativeKey: text(doc['idempotency_key']),
    providerReference: text(doc['reference']),
  };
}

/** A short, printable word the provider sent (an error code, an event type), or the fallback. */
export function word(value: unknown, fallback: string): string {
  return typeof value === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(value) ? value : fallback;
}

/** Drop undefined members: the observation reader refuses explicit `undefined` nowhere, but JCS does. */
export function compact(carried: Carried): Carried {
  return Object.fromEntries(Object.entries(carried).filter(([, v]) => v !== undefined));
}
