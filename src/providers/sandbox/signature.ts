/**
 * The sandbox provider's message signatures (docs/sandbox.md "Signatures"). A status source must be
 * authenticated and bound to the exact request before it may move an occurrence (AOC "Provider
 * Profile Contract"); this module is the verifier the status-source layer uses for the sandbox.
 *
 * Signed string: `${t}.${signedString}` where `signedString` is `${METHOD} ${path}\n${body}`
 * (sandboxSignedString): the timestamp, the request line it answers and the exact body bytes.
 * - HMAC-SHA256: header `Sandbox-Signature: t=<unix s>,kid=<secret id>,v1=<hex>`
 * - Ed25519:     header `Sandbox-Signature-Ed25519: t=<unix s>,kid=<sha256:hex>,sig=<base64url>`
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import { ed25519Sign, ed25519Verify } from '../../core/ed25519.js';

export const SANDBOX_HMAC_HEADER = 'sandbox-signature';
export const SANDBOX_ED25519_HEADER = 'sandbox-signature-ed25519';
export const DEFAULT_TOLERANCE_MS = 300_000;

export type SandboxSigningKey =
  | { kind: 'hmac'; secretId: string; secret: Uint8Array }
  | { kind: 'ed25519'; kid: string; privateKey: KeyObject };

/** What a verifier pins: the HMAC secret (by id) or the Ed25519 public key (by kid). */
export type SandboxPin =
  | { kind: 'hmac'; secretId: string; secret: Uint8Array }
  | { kind: 'ed25519'; kid: string; publicKey: KeyObject };

export type SandboxSignatureFailure = 'unsigned' | 'bad_signature' | 'stale' | 'unknown_key';

export type SandboxVerification =
  | { ok: true; kind: 'hmac' | 'ed25519'; kid: string; timestampMs: number }
  | { ok: false; reason: SandboxSignatureFailure };

export interface VerifyInput {
  /** The header value (Sandbox-Signature or Sandbox-Signature-Ed25519, matching the pin's kind). */
  header: string | null | undefined;
  /** `${METHOD} ${path}\n${body}`; the verifier prefixes the header's own timestamp. */
  signedString: string;
  pin: SandboxPin | readonly SandboxPin[];
  nowMs: number;
  toleranceMs?: number;
}

export function sandboxSignedString(input: { method: string; path: string; body: string }): string {
  return `${input.method.toUpperCase()} ${input.path}\n${input.body}`;
}

export function sandboxHeaderName(kind: 'hmac' | 'ed25519'): string {
  return kind === 'hmac' ? SANDBOX_HMAC_HEADER : SANDBOX_ED25519_HEADER;
}

function message(t: number, signedString: string): Buffer {
  return Buffer.from(`${t}.${signedString}`, 'utf8');
}

function hmacHex(secret: Uint8Array, t: number, signedString: string): string {
  return createHmac('sha256', secret).update(message(t, signedString)).digest('hex');
}

/** The header value that signs `signedString` at `nowMs` with `key`. */
export function signSandboxMessage(key: SandboxSigningKey, signedString: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  if (key.kind === 'hmac') return `t=${t},kid=${key.secretId},v1=${hmacHex(key.secret, t, signedString)}`;
  const sig = ed25519Sign(key.privateKey, message(t, signedString)).toString('base64url');
  return `t=${t},kid=${key.kid},sig=${sig}`;
}

interface ParsedHeader {
  t: number;
  kid: string;
  v1?: string;
  sig?: string;
}

const PARAM = /^(t|kid|v1|sig)=([\x21-\x2b\x2d-\x7e]+)$/;

/** Strict: known parameters once each, `t` decimal seconds; anything else is not a signature. */
function parseHeader(header: string): ParsedHeader | undefined {
  const params = new Map<string, string>();
  for (const part of header.split(',')) {
    const m = PARAM.exec(part.trim());
    if (m === null || params.has(m[1]!)) return undefined;
    params.set(m[1]!, m[2]!);
  }
  const t = params.get('t');
  const kid = params.get('kid');
  if (t === undefined || !/^[0-9]{1,12}$/.test(t) || kid === undefined) return undefined;
  return { t: Number(t), kid, v1: params.get('v1'), sig: params.get('sig') };
}

function keyMatches(pin: SandboxPin, kid: string): boolean {
  return pin.kind === 'hmac' ? pin.secretId === kid : pin.kid === kid;
}

function signatureValid(pin: SandboxPin, parsed: ParsedHeader, signedString: string): boolean {
  if (pin.kind === 'hmac') {
    if (parsed.v1 === undefined || parsed.sig !== undefined || !/^[0-9a-f]{64}$/.test(parsed.v1))
      return false;
    const expected = Buffer.from(hmacHex(pin.secret, parsed.t, signedString), 'hex');
    return timingSafeEqual(expected, Buffer.from(parsed.v1, 'hex'));
  }
  if (parsed.sig === undefined || parsed.v1 !== undefined || !/^[A-Za-z0-9_-]{86}$/.test(parsed.sig))
    return false;
  return ed25519Verify(pin.publicKey, message(parsed.t, signedString), Buffer.from(parsed.sig, 'base64url'));
}

/**
 * Check a sandbox signature against the pinned key(s). The signature is checked before freshness,
 * so a forged stale message reports `bad_signature`, an authentic old one `stale`.
 */
export function verifySandboxSignature(input: VerifyInput): SandboxVerification {
  const { header, signedString, nowMs } = input;
  if (header === undefined || header === null || header.trim() === '')
    return { ok: false, reason: 'unsigned' };
  const parsed = parseHeader(header);
  if (parsed === undefined) return { ok: false, reason: 'bad_signature' };
  const pins: readonly SandboxPin[] = Array.isArray(input.pin) ? input.pin : [input.pin as SandboxPin];
  const pin = pins.find((p) => keyMatches(p, parsed.kid));
  if (pin === undefined) return { ok: false, reason: 'unknown_key' };
  if (!signatureValid(pin, parsed, signedString)) return { ok: false, reason: 'bad_signature' };
  const timestampMs = parsed.t * 1000;
  if (Math.abs(nowMs - timestampMs) > (input.toleranceMs ?? DEFAULT_TOLERANCE_MS)) {
    return { ok: false, reason: 'stale' };
  }
  return { ok: true, kind: pin.kind, kid: parsed.kid, timestampMs };
}
