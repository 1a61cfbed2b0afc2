/**
 * Webhook intake for `POST /v1/webhooks/{profileId}` (issue 13 §4, docs/providers.md
 * "Reconciliation in serve"): pure functions over one delivery. The scheme and the key come from
 * the profile's webhook status source pin; the signature is checked over the exact raw bytes
 * BEFORE anything parses them, with a replay window; only then is the body read as an event.
 * The route (src/server/routes/webhooks.ts) does the I/O: seen event ids, the observation.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { JsonObject } from '../core/json.js';
import type {
  AuthenticationPin,
  ObservationInput,
  ProviderProfile,
  StatusSource,
} from '../occurrences/index.js';
import { findStatusSource } from '../occurrences/index.js';
import { pinMaterial, type KeyResolver } from './key-resolver.js';
import { sandboxHeaderName, sandboxSignedString, verifySandboxSignature } from './sandbox/index.js';
import { answered } from './status-sources/reading.js';
import { DEFAULT_WEBHOOK_TOLERANCE_MS } from './webhook-schemes/index.js';
import { asObject, parseAnswer, readPayment, word, type PaymentFacts } from './wire.js';

export interface Delivery {
  /** The request-target the provider posted to (path and query), as its signature covers it. */
  readonly path: string;
  /** The exact body bytes. */
  readonly body: Buffer;
  readonly headers: IncomingHttpHeaders;
}

export type DeliveryFailure =
  | 'unsigned'
  | 'malformed'
  | 'bad_signature'
  | 'unknown_key'
  | 'stale'
  | 'no_key_material'
  | 'unsupported_pin';

export type DeliveryVerdict =
  | { readonly ok: true; readonly pin: string; readonly timestampMs: number; readonly eventId?: string }
  | { readonly ok: false; readonly reason: DeliveryFailure };

/** The profile's webhook source (the first one: a profile pins one receiver per scheme). */
export function webhookSource(profile: ProviderProfile): StatusSource | undefined {
  return profile.statusSources.find((s) => s.kind === 'webhook');
}

/**
 * Authenticate a delivery against ONE pin, with the replay window `toleranceMs` either side of
 * `nowMs`. Pins the sandbox scheme serves (HMAC secret id, Ed25519 kid) verify its
 * `Sandbox-Signature` headers over `POST <path>\n<body>`; any other pin kind is refused
 * (`unsupported_pin`) until a verifier for it is wired here — never accepted.
 */
export function verifyDelivery(
  pin: AuthenticationPin,
  delivery: Delivery,
  keys: KeyResolver,
  nowMs: number,
  toleranceMs = DEFAULT_WEBHOOK_TOLERANCE_MS,
): DeliveryVerdict {
  const material = pinMaterial(pin, keys);
  if (!material.ok) return { ok: false, reason: material.detail };
  const raw = delivery.headers[sandboxHeaderName(material.pin.kind)];
  if (Array.isArray(raw)) return { ok: false, reason: 'malformed' };
  const verdict = verifySandboxSignature({
    header: raw,
    signedString: sandboxSignedString({
      method: 'POST',
      path: delivery.path,
      body: delivery.body.toString('utf8'),
    }),
    pin: material.pin,
    nowMs,
    toleranceMs,
  });
  return verdict.ok ? { ok: true, pin: material.id, timestampMs: verdict.timestampMs } : verdict;
}

/** A status event, read after authentication: its id, its type and the payment it reports. */
export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly payment: PaymentFacts;
  readonly document: JsonObject;
}

export type EventReading =
  | { readonly kind: 'event'; readonly event: WebhookEvent }
  | { readonly kind: 'not_status'; readonly id: string | undefined }
  | { readonly kind: 'unreadable' };

const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Read the body as the sandbox's event format (`{id, type, data: payment}`), strictly. */
export function readEvent(body: Buffer, headerId?: string): EventReading {
  const document = asObject(parseAnswer(body.toString('utf8')));
  if (document === undefined) return { kind: 'unreadable' };
  const raw = headerId ?? document['id'];
  const id = typeof raw === 'string' && EVENT_ID.test(raw) ? raw : undefined;
  const payment = readPayment(document['data']);
  if (id === undefined || payment === undefined) return { kind: 'not_status', id };
  return { kind: 'event', event: { id, type: word(document['type'], 'event'), payment, document } };
}

/** The native key a status event names (for finding the occurrence), if any. */
export function eventNativeKey(body: Buffer): { key: string; account: string | undefined } | undefined {
  const reading = readEvent(body);
  if (reading.kind !== 'event') return undefined;
  const { nativeKey: key, account } = reading.event.payment.carried;
  return typeof key === 'string' ? { key, account: account ?? undefined } : undefined;
}

/**
 * The observation one delivery makes about one occurrence: authenticated by `pin` when the
 * delivery verified, or evidence only (`verified: false`) when it did not (AOC-CASE-009). The
 * service judges it against the occurrence's own pinned profile (source id, pin, binding).
 */
export function webhookObservation(
  profile: ProviderProfile,
  occurrenceId: string,
  event: WebhookEvent,
  verdict: DeliveryVerdict,
  nowMs: number,
): ObservationInput {
  const source = webhookSource(profile) ?? findStatusSource(profile, 'webhook');
  const base = { occurrenceId, source: source?.id ?? 'webhook', kind: 'webhook' as const };
  const auth = verdict.ok
    ? { verified: true as const, pin: verdict.pin }
    : { verified: false as const, detail: verdict.reason };
  return answered(base, nowMs, {
    result: 'found',
    ...event.payment,
    response: event.document,
    complete: false,
    auth,
    detail: `webhook ${event.type}`,
  }).observation;
}
