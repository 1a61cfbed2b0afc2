/**
 * Secret references of the issuer registry (docs/missions.md "Issuer registry"): `env:NAME` or
 * `file:PATH` (relative to the server's working folder). The pin's `client.key_ref` names the
 * private_key_jwt key as a private JWK (JSON, with `kid`); a poll stream's `pollBearerRef` names
 * the bearer. Secrets are read when first needed, never stored by Baton, never in a message.
 */
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BatonError } from '../core/errors.js';
import type { ForeignSigningKey } from '../core/jose.js';
import { parseStrictJson } from '../core/json.js';
import type { IssuerPin } from '../missions/index.js';

export type SecretResolver = (ref: string) => string;

/** The default resolver over the process environment and the file system. */
export function resolveSecret(ref: string): string {
  if (ref.startsWith('env:')) {
    const value = process.env[ref.slice(4)];
    if (value === undefined || value === '')
      throw new BatonError('key_invalid', `the secret reference ${ref} names an unset variable`);
    return value.trim();
  }
  if (ref.startsWith('file:')) {
    try {
      return readFileSync(ref.slice(5), 'utf8').trim();
    } catch (cause) {
      throw new BatonError('key_invalid', `the secret reference ${ref} is unreadable`, {}, { cause });
    }
  }
  throw new BatonError('key_invalid', 'a secret reference is env:NAME or file:PATH');
}

/** The pin's client key: a private JWK whose `kid` the issuer registered (RFC 7523). */
export function clientKeyOf(pin: IssuerPin, resolve: SecretResolver): ForeignSigningKey {
  const text = resolve(pin.client.key_ref);
  let jwk: Record<string, unknown>;
  try {
    jwk = parseStrictJson(text) as Record<string, unknown>;
  } catch (cause) {
    throw new BatonError('key_invalid', 'the client key is not a JWK', {}, { cause });
  }
  const kid = jwk['kid'];
  if (typeof kid !== 'string' || kid === '') throw new BatonError('key_invalid', 'the client JWK has no kid');
  try {
    const privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
    return { privateKey, kid, alg: pin.client.alg };
  } catch (cause) {
    throw new BatonError('key_invalid', 'the client JWK is not a private key', {}, { cause });
  }
}
