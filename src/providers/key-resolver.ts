/**
 * Key material for the authentication pins of a provider profile. A profile names its keys (an HMAC
 * secret id, an Ed25519 kid and public key) and never carries a secret; the secret is supplied at run
 * time by a KeyResolver (AOC "Provider Profile Contract": pinned status sources and their pins).
 */
import { importEd25519PublicKey } from '../core/ed25519.js';
import type { AuthenticationPin } from '../occurrences/index.js';
import type { SandboxPin } from './sandbox/index.js';

export interface KeyResolver {
  /** The HMAC secret a pin names by id, or undefined when this process does not hold it. */
  hmacSecret(secretId: string): Uint8Array | undefined;
  /**
   * Any secret by id from the same map (a webhook endpoint secret, the credential a lookup sends):
   * the ids a profile names, resolved at start from credential references (credentials.ts).
   */
  secret(id: string): Uint8Array | undefined;
  /**
   * The origins (exact `scheme://host[:port]`) the secret `id` may be SENT to, as its credentials
   * entry declares them; empty when it may be sent nowhere (a verification-only secret, one this
   * process does not hold). Only credential-header.ts reads it, at the moment of sending.
   */
  origins(id: string): readonly string[];
}

/**
 * A resolver over secrets held in memory (from credential references, the environment, a test).
 * `origins` says where each may be sent; a secret without an entry there is never sent in a request
 * (it still verifies signatures).
 */
export function staticKeys(
  secrets: Readonly<Record<string, Uint8Array>>,
  origins: Readonly<Record<string, readonly string[]>> = {},
): KeyResolver {
  const map = new Map(Object.entries(secrets));
  const to = new Map(Object.entries(origins).map(([id, list]) => [id, Object.freeze([...list])]));
  return {
    hmacSecret: (id) => map.get(id),
    secret: (id) => map.get(id),
    origins: (id) => (map.has(id) ? (to.get(id) ?? []) : []),
  };
}

export const NO_KEYS: KeyResolver = {
  hmacSecret: () => undefined,
  secret: () => undefined,
  origins: () => [],
};

export type PinMaterial =
  | { readonly ok: true; readonly pin: SandboxPin; readonly id: string }
  | { readonly ok: false; readonly detail: 'no_key_material' | 'unsupported_pin' };

/** The verification key a pin names. A JWKS pin is not served by the sandbox's signature scheme. */
export function pinMaterial(pin: AuthenticationPin, keys: KeyResolver): PinMaterial {
  if (pin.kind === 'hmac-sha256') {
    const secret = keys.hmacSecret(pin.secretId);
    if (secret === undefined) return { ok: false, detail: 'no_key_material' };
    return { ok: true, pin: { kind: 'hmac', secretId: pin.secretId, secret }, id: pin.secretId };
  }
  if (pin.kind === 'ed25519') {
    const publicKey = importEd25519PublicKey({ raw: Buffer.from(pin.publicKey, 'base64url') });
    return { ok: true, pin: { kind: 'ed25519', kid: pin.kid, publicKey }, id: pin.kid };
  }
  return { ok: false, detail: 'unsupported_pin' };
}
