/**
 * Standard Webhooks (standardwebhooks.com): headers `webhook-id`, `webhook-timestamp` (unix
 * seconds) and `webhook-signature`, a space-separated list of `<version>,<base64 signature>` over
 * `${id}.${timestamp}.${raw body}`:
 * - `v1`:  HMAC-SHA256 keyed with the secret `whsec_<base64 key bytes>`;
 * - `v1a`: Ed25519 with the public key `whpk_<base64 32 bytes>` (signer holds `whsk_…`).
 * Any listed signature that verifies against any pinned key authenticates (keys roll); other
 * versions are ignored, never accepted.
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import { BatonError } from '../../core/errors.js';
import { ed25519Sign, ed25519Verify, importEd25519PublicKey } from '../../core/ed25519.js';
import { DEFAULT_WEBHOOK_TOLERANCE_MS, fresh, singleHeader, type WebhookVerification } from './model.js';

export const STANDARD_WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export type StandardWebhookKey =
  | { readonly kind: 'v1'; readonly secret: Uint8Array }
  | { readonly kind: 'v1a'; readonly publicKey: KeyObject };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function decodePrefixed(text: string, prefix: string): Buffer {
  const body = text.startsWith(prefix) ? text.slice(prefix.length) : undefined;
  if (body === undefined || !BASE64.test(body)) {
    throw new BatonError('key_invalid', `a Standard Webhooks key must be ${prefix} followed by base64`);
  }
  return Buffer.from(body, 'base64');
}

/** `whsec_…` (HMAC) or `whpk_…` (Ed25519 public key) as a verification key. */
export function standardWebhookKey(text: string): StandardWebhookKey {
  if (text.startsWith('whsec_')) {
    const secret = decodePrefixed(text, 'whsec_');
    if (secret.length < 24) throw new BatonError('key_invalid', 'a whsec_ secret must be at least 24 bytes');
    return { kind: 'v1', secret };
  }
  return { kind: 'v1a', publicKey: importEd25519PublicKey({ raw: decodePrefixed(text, 'whpk_') }) };
}

function signedContent(id: string, timestamp: string, payload: string | Uint8Array): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  return Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
}

function hmac(secret: Uint8Array, content: Buffer): Buffer {
  return createHmac('sha256', secret).update(content).digest();
}

/** One signature element for a sender: `v1,<b64>` (HMAC secret) or `v1a,<b64>` (Ed25519 key). */
export function signStandardWebhook(
  key: { kind: 'v1'; secret: Uint8Array } | { kind: 'v1a'; privateKey: KeyObject },
  id: string,
  timestampSeconds: number,
  payload: string | Uint8Array,
): string {
  const content = signedContent(id, String(timestampSeconds), payload);
  if (key.kind === 'v1') return `v1,${hmac(key.secret, content).toString('base64')}`;
  return `v1a,${ed25519Sign(key.privateKey, content).toString('base64')}`;
}

function matches(key: StandardWebhookKey, version: string, signature: Buffer, content: Buffer): boolean {
  if (key.kind === 'v1' && version === 'v1') {
    const expected = hmac(key.secret, content);
    return signature.length === expected.length && timingSafeEqual(expected, signature);
  }
  if (key.kind === 'v1a' && version === 'v1a') return ed25519Verify(key.publicKey, content, signature);
  return false;
}

export interface StandardWebhookVerifyInput {
  readonly payload: string | Uint8Array;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly keys: readonly StandardWebhookKey[];
  readonly nowMs: number;
  readonly toleranceMs?: number;
}

type Element = { version: string; signature: Buffer };

function elements(header: string): Element[] | undefined {
  const out: Element[] = [];
  for (const part of header.split(' ').filter((p) => p !== '')) {
    const comma = part.indexOf(',');
    const b64 = comma > 0 ? part.slice(comma + 1) : '';
    if (!BASE64.test(b64)) return undefined;
    out.push({ version: part.slice(0, comma), signature: Buffer.from(b64, 'base64') });
  }
  return out.length === 0 ? undefined : out;
}

export function verifyStandardWebhook(input: StandardWebhookVerifyInput): WebhookVerification {
  const id = singleHeader(input.headers[STANDARD_WEBHOOK_HEADERS.id]);
  const timestamp = singleHeader(input.headers[STANDARD_WEBHOOK_HEADERS.timestamp]);
  const header = singleHeader(input.headers[STANDARD_WEBHOOK_HEADERS.signature]);
  if (id === undefined || timestamp === undefined || header === undefined || header.trim() === '') {
    return { ok: false, reason: 'unsigned' };
  }
  const listed = elements(header);
  if (!/^[0-9]{1,12}$/.test(timestamp) || id === '' || listed === undefined) {
    return { ok: false, reason: 'malformed' };
  }
  const content = signedContent(id, timestamp, input.payload);
  const ok = listed.some((e) => input.keys.some((k) => matches(k, e.version, e.signature, content)));
  if (!ok) return { ok: false, reason: 'bad_signature' };
  const timestampMs = Number(timestamp) * 1000;
  if (!fresh(timestampMs, input.nowMs, input.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS)) {
    return { ok: false, reason: 'stale' };
  }
  return { ok: true, scheme: 'standard-webhooks', timestampMs, id };
}
