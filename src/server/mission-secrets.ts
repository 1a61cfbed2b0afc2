/**
 * Secret references of the issuer registry (docs/missions.md "Secret references"): `env:NAME` or
 * `file:PATH`. The pin's `client.key_ref` names the private_key_jwt key as a private JWK (JSON,
 * with `kid`); a poll stream's `pollBearerRef` names the bearer. Secrets are read when first
 * needed, never stored by Baton, never in a message.
 *
 * Who may name what: a registration comes over the HTTP API (an admin token, possibly remote), but
 * the reference is resolved on the server's host, and a poll bearer is then sent to the endpoint
 * the same registration names. So the host, not the API caller, decides what a reference may
 * reach (`SecretScope`): environment variables named `BATON_SECRET_*`, and files inside the
 * folders `baton serve --secret-dir` lists. Anything else is refused — otherwise an API role could
 * have any host variable or readable file (a database URL, a cloud key) sent where it chose.
 */
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { BatonError } from '../core/errors.js';
import type { ForeignSigningKey } from '../core/jose.js';
import { parseStrictJson } from '../core/json.js';
import type { IssuerPin } from '../missions/index.js';

export type SecretResolver = (ref: string) => string;

/**
 * Any reference, over the process environment and the file system: for what an operator's own
 * machine reads for itself (`baton apply` reading a push bearer from its config), never for a
 * reference that came over the API (`scopedSecretResolver`).
 */
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

/** The variables a reference may name: a prefix an operator sets on purpose. */
export const SECRET_ENV_PREFIX = 'BATON_SECRET_';

/** What the server's host lets a registered reference reach. */
export interface SecretScope {
  /** Folders a `file:` reference must lie inside (`baton serve --secret-dir`); none: no file. */
  readonly dirs: readonly string[];
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel.split(sep)[0] !== '..' && !isAbsolute(rel);
}

/**
 * The reference names what `scope` allows, read on its face (the registration routes refuse
 * anything else before storing it): `env:BATON_SECRET_*`, or an absolute `file:` path inside one
 * of the folders. The resolver checks again on the real paths (symlinks) when it reads.
 */
export function secretRefAllowed(ref: string, scope: SecretScope): boolean {
  if (ref.startsWith('env:')) return ref.slice(4).startsWith(SECRET_ENV_PREFIX);
  if (!ref.startsWith('file:')) return false;
  const path = ref.slice(5);
  return isAbsolute(path) && scope.dirs.some((d) => inside(resolve(d), resolve(path)));
}

/** The message of a refused reference: what the host allows, never what the variable holds. */
export function secretRefRefusal(ref: string): string {
  return (
    `the secret reference ${ref} is outside what this server allows: env:${SECRET_ENV_PREFIX}* ` +
    'or a file:/absolute/path inside a folder given to baton serve --secret-dir'
  );
}

function realInside(dirs: readonly string[], path: string): boolean {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return true; // missing: reading it fails below with "unreadable"
  }
  return dirs.some((d) => {
    try {
      return inside(realpathSync(d), real);
    } catch {
      return false;
    }
  });
}

/** `resolveSecret` confined to `scope` (key_invalid otherwise): what `baton serve` resolves with. */
export function scopedSecretResolver(scope: SecretScope): SecretResolver {
  return (ref) => {
    const allowed =
      secretRefAllowed(ref, scope) && (!ref.startsWith('file:') || realInside(scope.dirs, ref.slice(5)));
    if (!allowed) throw new BatonError('key_invalid', secretRefRefusal(ref));
    return resolveSecret(ref);
  };
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

/** The registration's references `scope` does not allow, by JSON path (empty: all allowed). */
export function refsOutside(
  reg: { readonly pin: IssuerPin; readonly pollBearerRef: string | null },
  scope: SecretScope,
): { readonly path: string; readonly ref: string }[] {
  const refs = [
    { path: '$.pin.client.key_ref', ref: reg.pin.client.key_ref },
    ...(reg.pollBearerRef === null ? [] : [{ path: '$.pollBearerRef', ref: reg.pollBearerRef }]),
  ];
  return refs.filter((r) => !secretRefAllowed(r.ref, scope));
}
