/**
 * Secret references of the issuer registry (docs/missions.md "Secret references"): `env:NAME` or
 * `file:PATH`. The pin's `client.key_ref` names the private_key_jwt key as a private JWK (JSON,
 * with `kid`); a poll stream's `pollBearerRef` names the bearer. Secrets are read when a
 * registration is read (to refuse one that could never work) and when needed, never stored by
 * Baton, never in a message.
 *
 * Who may name what: a registration comes over the HTTP API (an admin token, possibly remote), but
 * the reference is resolved on the server's host, and a poll bearer is then sent to the endpoint
 * the same registration names. So the host, not the API caller, decides what a reference may
 * reach (`SecretScope`): environment variables named `BATON_SECRET_*`, and files inside the
 * folders `baton serve --secret-dir` lists. Anything else is refused — otherwise an API role could
 * have any host variable or readable file (a database URL, a cloud key) sent where it chose.
 */
import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { BatonError, isBatonError } from '../core/errors.js';
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

/** What each `client.alg` signs with (node:crypto key type and curve), as `signJwsWithKey` needs. */
const CLIENT_KEY_TYPES: Readonly<
  Record<IssuerPin['client']['alg'], { type: string; curve?: string; kty: string }>
> = {
  ES256: { type: 'ec', curve: 'prime256v1', kty: 'EC P-256' },
  EdDSA: { type: 'ed25519', kty: 'OKP Ed25519' },
};

function unusable(why: string, cause?: unknown): BatonError {
  return new BatonError('key_invalid', why, {}, cause === undefined ? undefined : { cause });
}

/** The file's text as a JWK object, or why it is none (a PEM key is named as such: a common mistake). */
function jwkObject(text: string): Record<string, unknown> {
  if (text.startsWith('-----BEGIN'))
    throw unusable(
      'it holds a PEM key, not a private JWK with kid (JSON): see docs/missions.md "The client key"',
    );
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (cause) {
    throw unusable('it is not a private JWK with kid (not JSON)', cause);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw unusable('it is not a private JWK with kid (not a JSON object)');
  return value as Record<string, unknown>;
}

/**
 * The pin's client key (RFC 7523 private_key_jwt): a private JWK whose `kid` the issuer registered,
 * of the type `client.alg` signs with (ES256: EC P-256; EdDSA: OKP Ed25519), and, if it says, for
 * that `alg` and for signing. Anything else is `key_invalid` with the reason: checked when a
 * registration is read (fail early) and again when the Status client is built.
 */
export function clientKeyOf(pin: IssuerPin, resolve: SecretResolver): ForeignSigningKey {
  const jwk = jwkObject(resolve(pin.client.key_ref));
  const kid = jwk['kid'];
  if (typeof kid !== 'string' || kid === '') throw unusable('the JWK has no kid');
  if (typeof jwk['d'] !== 'string')
    throw unusable('the JWK is a public key (no d): the private key is needed');
  const alg = pin.client.alg;
  const jwkAlg = jwk['alg'];
  if (jwkAlg !== undefined && jwkAlg !== alg)
    throw unusable(
      `the JWK is for alg ${typeof jwkAlg === 'string' ? jwkAlg : '(not a string)'}, the pin's client.alg is ${alg}`,
    );
  if (jwk['use'] !== undefined && jwk['use'] !== 'sig') throw unusable('the JWK is not for signing (use)');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch (cause) {
    throw unusable('the JWK is not a private key node:crypto can read', cause);
  }
  const want = CLIENT_KEY_TYPES[alg];
  if (
    privateKey.asymmetricKeyType !== want.type ||
    (want.curve !== undefined && privateKey.asymmetricKeyDetails?.namedCurve !== want.curve)
  )
    throw unusable(`the pin's client.alg ${alg} signs with an ${want.kty} key, the JWK is another`);
  return { privateKey, kid, alg };
}

/** Why a registration's secret reference cannot be used, by JSON path (undefined: all usable). */
export interface UnusableRef {
  readonly path: string;
  readonly reason: string;
}

/** The reason with the reference it is about (a name, never what it holds). */
function naming(ref: string, reason: string): string {
  return reason.includes(ref) ? reason : `${ref}: ${reason}`;
}

/** A poll bearer goes into an Authorization header: printable ASCII, no space, not empty. */
const POLL_BEARER = /^[\x21-\x7e]+$/;

/**
 * Resolve every secret reference of a registration now, through `resolve`, and check it is what it
 * must be: the client key as `clientKeyOf` needs it, the poll bearer a header value. A registration
 * whose pin cannot ever be used is refused before it is stored (pins are immutable: a stored one
 * could only be fixed by replacing the file it names).
 */
export function unusableRef(
  reg: { readonly pin: IssuerPin; readonly pollBearerRef: string | null },
  resolve: SecretResolver,
): UnusableRef | undefined {
  const path = '$.pin.client.key_ref';
  try {
    clientKeyOf(reg.pin, resolve);
  } catch (error) {
    if (!isBatonError(error, 'key_invalid')) throw error;
    return { path, reason: naming(reg.pin.client.key_ref, error.message) };
  }
  return reg.pollBearerRef === null ? undefined : unusablePollBearer(reg.pollBearerRef, resolve);
}

/**
 * Why a poll bearer reference resolves to nothing usable as a bearer (undefined: usable). Apart from
 * the client key's check so that replacing a poll bearer (`PUT …/bearer`) is judged on the bearer
 * alone: a client key broken meanwhile must not block rotating a leaked stream credential.
 */
export function unusablePollBearer(ref: string, resolve: SecretResolver): UnusableRef | undefined {
  try {
    if (!POLL_BEARER.test(resolve(ref)))
      return {
        path: '$.pollBearerRef',
        reason: naming(ref, 'the bearer is empty or not printable ASCII without spaces'),
      };
  } catch (error) {
    if (!isBatonError(error, 'key_invalid')) throw error;
    return { path: '$.pollBearerRef', reason: naming(ref, error.message) };
  }
  return undefined;
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
