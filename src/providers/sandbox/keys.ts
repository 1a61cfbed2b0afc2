/**
 * The sandbox's own signing keys and the signature headers it attaches to responses and webhooks.
 * The HMAC secret is never printed or served (only its id); the Ed25519 public key is published.
 */
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { sha256 } from '../../core/digest.js';
import { BatonError } from '../../core/errors.js';
import {
  exportEd25519PublicJwk,
  generateEd25519KeyPair,
  importEd25519PrivateKey,
  ed25519Kid,
  type Ed25519PublicJwk,
} from '../../core/ed25519.js';
import { sandboxHeaderName, signSandboxMessage, type SandboxPin } from './signature.js';

export const SIGNING_MODES = ['hmac', 'ed25519', 'both'] as const;
export type SigningMode = (typeof SIGNING_MODES)[number];

export interface SandboxKeys {
  readonly hmac?: { kind: 'hmac'; secretId: string; secret: Buffer };
  readonly ed25519?: { kind: 'ed25519'; kid: string; privateKey: KeyObject; publicKey: KeyObject };
}

export interface KeyOptions {
  signing?: SigningMode;
  /** At least 32 bytes; random when absent. */
  hmacSecret?: Uint8Array;
  /** A 32-byte RFC 8032 seed; a fresh key pair when absent. */
  ed25519Seed?: Uint8Array;
}

/** Public verification material: the HMAC secret's id (never the secret) and the Ed25519 JWK. */
export interface VerificationMaterial {
  hmac?: { secret_id: string; header: string };
  ed25519?: { kid: string; jwk: Ed25519PublicJwk; header: string };
}

/** A stable, non-reversible id for the secret, so a profile can pin "which secret" without it. */
export function hmacSecretId(secret: Uint8Array): string {
  return `hsk_${sha256(Buffer.concat([Buffer.from('sandbox-hmac-secret-id\n'), secret]))
    .toString('hex')
    .slice(0, 24)}`;
}

function ed25519Keys(seed: Uint8Array | undefined): NonNullable<SandboxKeys['ed25519']> {
  if (seed === undefined) {
    const pair = generateEd25519KeyPair();
    return { kind: 'ed25519', kid: pair.kid, privateKey: pair.privateKey, publicKey: pair.publicKey };
  }
  const privateKey = importEd25519PrivateKey({ seed });
  const publicKey = createPublicKey(privateKey);
  return { kind: 'ed25519', kid: ed25519Kid(publicKey), privateKey, publicKey };
}

export function createSandboxKeys(options: KeyOptions = {}): SandboxKeys {
  const signing = options.signing ?? 'both';
  if (!SIGNING_MODES.includes(signing))
    throw new BatonError('usage', 'signing must be hmac, ed25519 or both');
  const secret = Buffer.from(options.hmacSecret ?? randomBytes(32));
  if (secret.length < 32) throw new BatonError('key_invalid', 'the HMAC secret must be at least 32 bytes');
  return {
    ...(signing !== 'ed25519' && { hmac: { kind: 'hmac' as const, secretId: hmacSecretId(secret), secret } }),
    ...(signing !== 'hmac' && { ed25519: ed25519Keys(options.ed25519Seed) }),
  };
}

export function verificationMaterial(keys: SandboxKeys): VerificationMaterial {
  return {
    ...(keys.hmac && { hmac: { secret_id: keys.hmac.secretId, header: sandboxHeaderName('hmac') } }),
    ...(keys.ed25519 && {
      ed25519: {
        kid: keys.ed25519.kid,
        jwk: exportEd25519PublicJwk(keys.ed25519.publicKey),
        header: sandboxHeaderName('ed25519'),
      },
    }),
  };
}

/** The pins a verifier in the same process needs (the HMAC pin carries the secret). */
export function sandboxPins(keys: SandboxKeys): SandboxPin[] {
  const pins: SandboxPin[] = [];
  if (keys.hmac) pins.push({ kind: 'hmac', secretId: keys.hmac.secretId, secret: keys.hmac.secret });
  if (keys.ed25519) pins.push({ kind: 'ed25519', kid: keys.ed25519.kid, publicKey: keys.ed25519.publicKey });
  return pins;
}

export type SignatureMode = 'signed' | 'unsigned' | 'bad';

/** Signature headers for one message; `bad` signs a different string so verification must fail. */
export function signatureHeaders(
  keys: SandboxKeys,
  signedString: string,
  nowMs: number,
  mode: SignatureMode = 'signed',
): Record<string, string> {
  if (mode === 'unsigned') return {};
  const text = mode === 'bad' ? `${signedString}\n(tampered)` : signedString;
  const headers: Record<string, string> = {};
  for (const key of [keys.hmac, keys.ed25519]) {
    if (key !== undefined) headers[sandboxHeaderName(key.kind)] = signSandboxMessage(key, text, nowMs);
  }
  return headers;
}
