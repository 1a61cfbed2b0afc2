/**
 * Stripe's webhook signature: header `Stripe-Signature: t=<unix s>,v1=<hex>[,v1=<hex>…][,v0=…]`,
 * where each `v1` is HMAC-SHA256 keyed with the endpoint secret (`whsec_…`, used as its UTF-8
 * bytes) over `${t}.${raw body}`. Several `v1` values appear while a secret is rolled; any match
 * authenticates. `v0` (test-mode legacy) is ignored, never accepted.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { DEFAULT_WEBHOOK_TOLERANCE_MS, fresh, singleHeader, type WebhookVerification } from './model.js';

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';

function hmacHex(secret: string, t: number, payload: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${t}.`).update(payload).digest('hex');
}

/** The header value a Stripe-compatible sender puts on `payload` at `nowMs`. */
export function signStripePayload(secret: string, payload: string | Uint8Array, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${hmacHex(secret, t, payload)}`;
}

interface Parsed {
  readonly t: number;
  readonly v1: readonly string[];
}

/** Strict: `t` exactly once, decimal; every element `key=value`; at least one well-formed `v1`. */
function parse(header: string): Parsed | undefined {
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !/^[0-9]{1,12}$/.test(value)) return undefined;
      t = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return undefined;
      v1.push(value);
    }
  }
  return t === undefined || v1.length === 0 ? undefined : { t, v1 };
}

export interface StripeVerifyInput {
  readonly payload: string | Uint8Array;
  readonly header: string | readonly string[] | undefined;
  /** The endpoint secrets in force (several while one is rolled). */
  readonly secrets: readonly string[];
  readonly nowMs: number;
  readonly toleranceMs?: number;
}

export function verifyStripeSignature(input: StripeVerifyInput): WebhookVerification {
  const header = singleHeader(input.header);
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'unsigned' };
  const parsed = parse(header);
  if (parsed === undefined) return { ok: false, reason: 'malformed' };
  const matches = input.secrets.some((secret) => {
    const expected = Buffer.from(hmacHex(secret, parsed.t, input.payload), 'hex');
    return parsed.v1.some((v) => timingSafeEqual(expected, Buffer.from(v, 'hex')));
  });
  if (!matches) return { ok: false, reason: 'bad_signature' };
  const timestampMs = parsed.t * 1000;
  if (!fresh(timestampMs, input.nowMs, input.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS)) {
    return { ok: false, reason: 'stale' };
  }
  return { ok: true, scheme: 'stripe-signature', timestampMs };
}
