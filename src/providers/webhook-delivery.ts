/**
 * What one delivery to `POST /v1/webhooks/{profileId}` says, whichever scheme the profile's
 * webhook source pins (issue 13 §1, docs/providers.md "Reconciliation in serve"). Pure: no I/O.
 * - `stripe-signature` and `standard-webhooks` pins (format 2) go through readDelivery: the raw
 *   body's signature and the pin's timestamp tolerance first, then the source's read rule;
 * - the sandbox's own pins (`hmac-sha256`, `ed25519`) through verifyDelivery and readEvent;
 * - any other pin kind is refused (`unsupported_pin`), never accepted.
 * Replay is the store's business: the provider's event id is remembered durably, in the same
 * transaction as the observation (migration 010, provider-event.ts), so an in-memory guard is not used.
 */
import { resolveJsonPointer } from '../core/json-pointer.js';
import { parseStrictJson, type JsonValue } from '../core/json.js';
import type { AnswerRead, ObservationInput, ProviderProfile, StatusSource } from '../occurrences/index.js';
import { deliveryObservation, readDelivery, type DeliveryReading } from './declared/webhook.js';
import { futureDated } from './status-sources/reading.js';
import type { KeyResolver } from './key-resolver.js';
import {
  readEvent,
  verifyDelivery,
  webhookObservation,
  webhookSource,
  type Delivery,
  type EventReading,
} from './webhook-intake.js';

/** The native key (and account, when named) an event gives for finding its occurrence. */
export interface NamedKey {
  readonly key: string;
  readonly account: string | undefined;
}

/** The observation the delivery makes for one occurrence, under that occurrence's bound profile. */
export type DeliveryObserver = (bound: ProviderProfile, occurrenceId: string) => ObservationInput;

export type DeliveryMeaning =
  /**
   * Not authenticated or not fresh: evidence only, about the occurrence it names (AOC-CASE-009).
   * `stale` also for an authentic event dated ahead of the service's allowance (`future_dated`):
   * not usable now, so refused without remembering its id; the provider's retry is still new.
   */
  | {
      readonly kind: 'refused';
      readonly reason: string;
      readonly stale: boolean;
      readonly named?: NamedKey;
      readonly observe?: DeliveryObserver;
    }
  /** Authenticated, but not a JSON event with a usable id. */
  | { readonly kind: 'invalid' }
  /** Authenticated: a status event (`status`), or another event (acknowledged; remembered only when it names an occurrence). */
  | {
      readonly kind: 'event';
      readonly eventId: string;
      readonly status: boolean;
      readonly named?: NamedKey;
      readonly observe?: DeliveryObserver;
    };

const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const DECLARED_PINS: ReadonlySet<string> = new Set(['stripe-signature', 'standard-webhooks']);

export function interpretDelivery(
  profile: ProviderProfile,
  source: StatusSource,
  delivery: Delivery,
  keys: KeyResolver,
  nowMs: number,
  sandboxToleranceMs?: number,
): DeliveryMeaning {
  return DECLARED_PINS.has(source.authentication.kind)
    ? declared(profile, source, delivery, keys, nowMs)
    : sandbox(source, delivery, keys, nowMs, sandboxToleranceMs);
}

/**
 * The native key a delivery names as this profile version's webhook source reads it: parsed only
 * to LOCATE the occurrence (AOC-REQ-003: the delivery is then authenticated with the pin of the
 * version that occurrence is bound to), never trusted for anything else.
 */
export function deliveryNamedKey(source: StatusSource, body: Buffer): NamedKey | undefined {
  if (!DECLARED_PINS.has(source.authentication.kind)) return sandboxNamed(readEvent(body));
  try {
    return namedBy(source, parseStrictJson(body, { maxBytes: 1_048_576 }));
  } catch {
    return undefined;
  }
}

/** The provider reference (and account, when named) an event gives for finding its occurrence. */
export interface NamedReference {
  readonly reference: string;
  readonly account: string | undefined;
}

/**
 * The provider reference a delivery names as this version's webhook source reads it, for locating
 * the occurrence BOUND to that reference when the event names no native key of Baton's (Stripe's
 * events after a cancel or a capture). As deliveryNamedKey: parsed only to locate, never trusted;
 * the delivery is then authenticated with the bound version's pin and judged against its binding.
 * Declared sources only: the sandbox's own events always name the entry's key.
 */
export function deliveryNamedReference(source: StatusSource, body: Buffer): NamedReference | undefined {
  const rule = source.read;
  if (!DECLARED_PINS.has(source.authentication.kind) || rule === undefined) return undefined;
  try {
    const event = parseStrictJson(body, { maxBytes: 1_048_576 });
    const reference = text(resolveJsonPointer(event, rule.reference));
    return reference === undefined ? undefined : { reference, account: namedAccount(rule, event) };
  } catch {
    return undefined;
  }
}

function namedAccount(rule: AnswerRead, event: JsonValue | undefined): string | undefined {
  return rule.account.pointer === undefined
    ? undefined
    : text(resolveJsonPointer(event, rule.account.pointer));
}

function sandboxNamed(reading: EventReading): NamedKey | undefined {
  if (reading.kind !== 'event') return undefined;
  const { nativeKey: key, account } = reading.event.payment.carried;
  return typeof key === 'string' ? { key, account: account ?? undefined } : undefined;
}

function sandbox(
  source: StatusSource,
  delivery: Delivery,
  keys: KeyResolver,
  nowMs: number,
  toleranceMs: number | undefined,
): DeliveryMeaning {
  const verdict = verifyDelivery(source.authentication, delivery, keys, nowMs, toleranceMs);
  if (!verdict.ok) {
    // Read only to name the occurrence the evidence is kept under; it settles nothing.
    const reading = readEvent(delivery.body);
    const named = sandboxNamed(reading);
    return {
      kind: 'refused',
      reason: verdict.reason,
      stale: verdict.reason === 'stale',
      ...(named !== undefined && { named }),
      ...(reading.kind === 'event' && {
        observe: (bound, id) => webhookObservation(bound, id, reading.event, verdict, nowMs),
      }),
    };
  }
  const reading = readEvent(delivery.body, verdict.eventId);
  if (reading.kind === 'unreadable') return { kind: 'invalid' };
  if (reading.kind === 'not_status') {
    return reading.id === undefined
      ? { kind: 'invalid' }
      : { kind: 'event', eventId: reading.id, status: false };
  }
  const named = sandboxNamed(reading);
  const observe: DeliveryObserver = (bound, id) =>
    webhookObservation(bound, id, reading.event, verdict, nowMs);
  if (futureDated(reading.event.payment.observedAt, nowMs)) {
    return {
      kind: 'refused',
      reason: 'future_dated',
      stale: true,
      ...(named !== undefined && { named }),
      observe,
    };
  }
  return {
    kind: 'event',
    eventId: reading.event.id,
    status: true,
    ...(named !== undefined && { named }),
    observe,
  };
}

const text = (v: JsonValue | undefined): string | undefined =>
  typeof v === 'string' && v.length > 0 && v.length <= 512 ? v : undefined;

/** The key an event names by the rule's own pointers, read without judging the rest of it. */
function namedBy(source: StatusSource, event: JsonValue | undefined): NamedKey | undefined {
  const rule = source.read;
  const key = rule?.nativeKey === undefined ? undefined : text(resolveJsonPointer(event, rule.nativeKey));
  if (rule === undefined || key === undefined) return undefined;
  return { key, account: namedAccount(rule, event) };
}

function declared(
  profile: ProviderProfile,
  source: StatusSource,
  delivery: Delivery,
  keys: KeyResolver,
  nowMs: number,
): DeliveryMeaning {
  const input = { body: delivery.body, headers: delivery.headers, keys, nowMs, path: delivery.path };
  const d = readDelivery({ ...input, profile, source });
  // Under the occurrence's own bound version when it is not the receiver's (a profile updated since).
  const observe: DeliveryObserver = (bound, id) => {
    if (bound.id === profile.id && bound.version === profile.version)
      return deliveryObservation(id, source, d, nowMs);
    const own = webhookSource(bound);
    if (own === undefined) return deliveryObservation(id, source, unverified(d), nowMs);
    return deliveryObservation(id, own, readDelivery({ ...input, profile: bound, source: own }), nowMs);
  };
  const named = namedBy(source, d.event);
  if (d.refusal === 'unreadable') {
    // readDelivery reads only after the signature verified: an authentic event the rule does not
    // read (another object type, another event) is acknowledged and records nothing.
    const raw = d.eventId ?? (source.read?.eventId && text(resolveJsonPointer(d.event, source.read.eventId)));
    return raw === undefined || !EVENT_ID.test(raw) || d.event === undefined
      ? { kind: 'invalid' }
      : { kind: 'event', eventId: raw, status: false };
  }
  if (!d.verified) {
    const reason = d.refusal ?? 'bad_signature';
    return {
      kind: 'refused',
      reason,
      stale: reason === 'stale' || reason === 'future_dated',
      ...(named !== undefined && { named }),
      observe,
    };
  }
  if (d.eventId === undefined || !EVENT_ID.test(d.eventId)) return { kind: 'invalid' };
  const carried = d.facts?.carried;
  const key = carried?.nativeKey ?? undefined;
  return {
    kind: 'event',
    eventId: d.eventId,
    status: true,
    ...(key !== undefined && { named: { key, account: carried?.account ?? undefined } }),
    observe,
  };
}

function unverified(d: DeliveryReading): DeliveryReading {
  return { ...d, verified: false, pin: undefined };
}
