/**
 * Webhook signature schemes of real providers (issue 13): Stripe's `Stripe-Signature` and the
 * Standard Webhooks specification (`webhook-id` / `webhook-timestamp` / `webhook-signature`).
 * A verifier reads the raw body bytes, never a parsed body: the signature covers the bytes.
 */

/** Why a delivery is not authenticated. A forged stale message reports `bad_signature`, an
 * authentic old one `stale` (the signature is checked before freshness, as in the sandbox). */
export type WebhookSignatureFailure = 'unsigned' | 'malformed' | 'bad_signature' | 'stale';

export type WebhookVerification =
  | { readonly ok: true; readonly scheme: WebhookScheme; readonly timestampMs: number; readonly id?: string }
  | { readonly ok: false; readonly reason: WebhookSignatureFailure };

export const WEBHOOK_SCHEMES = ['stripe-signature', 'standard-webhooks'] as const;
export type WebhookScheme = (typeof WEBHOOK_SCHEMES)[number];

/** Both schemes' documented default tolerance: five minutes either side. */
export const DEFAULT_WEBHOOK_TOLERANCE_MS = 300_000;

export function fresh(timestampMs: number, nowMs: number, toleranceMs: number): boolean {
  return Math.abs(nowMs - timestampMs) <= toleranceMs;
}

/** Header value as one string; a repeated header is refused rather than guessed at. */
export function singleHeader(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return value.length === 1 ? value[0] : undefined;
}
