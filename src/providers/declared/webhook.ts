/**
 * Reading one webhook delivery under a format 2 profile's webhook source (docs/providers.md
 * "Webhooks"): the signature is checked over the RAW body bytes before anything is parsed
 * (`stripe-signature` or `standard-webhooks`, with the pin's tolerance), then replay is refused
 * on the provider's event id, then the event is read by the source's rule. The receiver route
 * (`POST /v1/webhooks/{profileId}`) finds the occurrence from the key and records the result:
 * an unauthenticated, stale or replayed delivery is recorded as evidence that settles nothing.
 */
import { parseStrictJson, type JsonValue } from '../../core/json.js';
import type { ObservationInput, ProviderProfile, StatusSource } from '../../occurrences/index.js';
import { pinIdentities } from '../../occurrences/index.js';
import type { KeyResolver } from '../key-resolver.js';
import { futureDated } from '../status-sources/reading.js';
import {
  standardWebhookKey,
  verifyStandardWebhook,
  verifyStripeSignature,
  type WebhookReplayGuard,
  type WebhookVerification,
} from '../webhook-schemes/index.js';
import { authenticate } from '../wire.js';
import { applyRead, type ReadFacts } from './read.js';

export type DeliveryHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface DeliveryInput {
  readonly profile: ProviderProfile;
  readonly source: StatusSource;
  readonly body: string | Uint8Array;
  readonly headers: DeliveryHeaders;
  readonly keys: KeyResolver;
  readonly nowMs: number;
  /** Remembers event ids inside the tolerance window; a store-backed receiver keeps its own. */
  readonly replay?: WebhookReplayGuard;
  /** The receiver's request path (signed by the sandbox's own scheme, not by real providers'). */
  readonly path?: string;
}

export type DeliveryFailure = WebhookVerification extends infer V
  ? V extends { ok: false; reason: infer R }
    ? R
    : never
  : never;

export interface DeliveryReading {
  /** Whether the delivery is authentic, fresh and new; only then may it settle anything. */
  readonly verified: boolean;
  /**
   * Why not: unsigned, malformed, bad_signature, stale, replayed, no_key_material, unreadable, or
   * future_dated (authentic, but the event's own time is later than the service accepts).
   */
  readonly refusal:
    DeliveryFailure | 'replayed' | 'no_key_material' | 'unreadable' | 'future_dated' | undefined;
  readonly pin: string | undefined;
  readonly eventId: string | undefined;
  readonly event: JsonValue | undefined;
  /** What the rule read from the event (undefined when it could not be read at all). */
  readonly facts: ReadFacts | undefined;
}

type Verdict = { ok: true; id?: string } | { ok: false; reason: DeliveryReading['refusal'] };

function verify(input: DeliveryInput): Verdict {
  const { source, keys, nowMs, headers } = input;
  const pin = source.authentication;
  const secretText = (id: string): string | undefined => {
    const s = keys.secret(id);
    return s === undefined ? undefined : Buffer.from(s).toString('utf8');
  };
  if (pin.kind === 'stripe-signature') {
    const secret = secretText(pin.secretId);
    if (secret === undefined) return { ok: false, reason: 'no_key_material' };
    const header = headers['stripe-signature'];
    return verifyStripeSignature({
      payload: input.body,
      header,
      secrets: [secret],
      nowMs,
      toleranceMs: pin.toleranceSeconds * 1000,
    });
  }
  if (pin.kind === 'standard-webhooks') {
    const text = pin.version === 'v1' ? secretText(pin.secretId) : pin.publicKey;
    if (text === undefined) return { ok: false, reason: 'no_key_material' };
    let key;
    try {
      key = standardWebhookKey(text);
    } catch {
      return { ok: false, reason: 'no_key_material' };
    }
    if (key.kind !== pin.version) return { ok: false, reason: 'no_key_material' };
    return verifyStandardWebhook({
      payload: input.body,
      headers,
      keys: [key],
      nowMs,
      toleranceMs: pin.toleranceSeconds * 1000,
    });
  }
  const body = typeof input.body === 'string' ? input.body : Buffer.from(input.body).toString('utf8');
  const message = {
    method: 'POST',
    path: input.path ?? '/',
    body,
    headers: headers as Record<string, string>,
  };
  const a = authenticate(message, pin, keys, nowMs);
  return a.verified ? { ok: true } : { ok: false, reason: 'bad_signature' };
}

function parse(body: string | Uint8Array): JsonValue | undefined {
  try {
    return parseStrictJson(typeof body === 'string' ? body : Buffer.from(body), { maxBytes: 1_048_576 });
  } catch {
    return undefined;
  }
}

export function readDelivery(input: DeliveryInput): DeliveryReading {
  const verdict = verify(input);
  const event = parse(input.body);
  const rule = input.source.read;
  const read =
    event === undefined || rule === undefined ? undefined : applyRead(rule, event, input.profile.account);
  const facts = read?.ok === true ? read.facts : undefined;
  const eventId = (verdict.ok ? verdict.id : undefined) ?? facts?.eventId;
  const pin = pinIdentities(input.source.authentication)[0];
  const base = { pin: undefined, eventId, event, facts };
  if (!verdict.ok) return { ...base, verified: false, refusal: verdict.reason };
  if (facts === undefined) return { ...base, verified: false, refusal: 'unreadable' };
  // Replay is judged only on authentic deliveries: a forger cannot burn a real event's id.
  if (eventId === undefined) return { ...base, verified: false, refusal: 'unreadable' };
  // Authentic but not usable now (its date is ahead of ours by more than the service allows):
  // refused BEFORE its id is remembered, so the provider's later retry is still new.
  if (futureDated(facts.observedAt, input.nowMs))
    return { ...base, verified: false, refusal: 'future_dated' };
  if (input.replay?.check(`${input.profile.id}:${eventId}`, input.nowMs) === 'replayed') {
    return { ...base, verified: false, refusal: 'replayed' };
  }
  return { ...base, verified: true, refusal: undefined, pin };
}

/** The observation a delivery becomes for one occurrence (found via its native key). */
export function deliveryObservation(
  occurrenceId: string,
  source: StatusSource,
  d: DeliveryReading,
  nowMs: number,
): ObservationInput {
  // An event dated beyond the service's allowance says nothing usable about now (it is refused).
  if (d.facts === undefined || futureDated(d.facts.observedAt, nowMs)) {
    return {
      occurrenceId,
      source: source.id,
      observedAt: nowMs,
      result: 'unavailable',
      authentication: { verified: false },
      carried: {},
    };
  }
  return {
    occurrenceId,
    source: source.id,
    observedAt: d.facts.observedAt ?? nowMs,
    result: 'found',
    nativeStatus: d.facts.nativeStatus,
    ...(d.event !== undefined && { response: d.event }),
    authentication: d.verified && d.pin !== undefined ? { verified: true, pin: d.pin } : { verified: false },
    carried: d.facts.carried,
    complete: false,
  };
}
