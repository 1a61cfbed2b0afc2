/**
 * Principal tokens (docs/api.md "Authentication"): `btk.<id>.<secret>` where the secret is 256
 * random bits (base64url). Only its SHA-256 digest is stored; verification looks the token up by
 * id and compares digests in constant time. The `.` separators cannot occur in an executor
 * credential (base64url), so the two kinds of bearer are told apart without guessing.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { digestBytes } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import type { StoreEngine } from '../store/engine.js';
import {
  findToken,
  insertToken,
  PRINCIPAL_ROLES,
  publicToken,
  type PrincipalRole,
  type StoredToken,
  type TokenRecord,
} from '../store/principals.js';

export const TOKEN_PREFIX = 'btk';
const TOKEN = /^btk\.(tok_[a-f0-9]{32})\.([A-Za-z0-9_-]{43})$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._:@/-]{0,127}$/;

export interface CreatedToken extends TokenRecord {
  /** The bearer token, shown once. */
  readonly token: string;
}

export function isPrincipalRole(value: string): value is PrincipalRole {
  return (PRINCIPAL_ROLES as readonly string[]).includes(value);
}

export function looksLikePrincipalToken(bearer: string): boolean {
  return bearer.startsWith(`${TOKEN_PREFIX}.`);
}

/** The form of an executor credential issued by takeover (anything else is no credential at all). */
const EXECUTOR_CREDENTIAL = /^[A-Za-z0-9_-]{16,256}$/;

export function looksLikeExecutorCredential(bearer: string): boolean {
  return EXECUTOR_CREDENTIAL.test(bearer);
}

/** Create and store a token; the secret leaves this function only inside the returned `token`. */
/** A token's role and name, checked (input_invalid): before a store is touched, and in createToken. */
export function readTokenInput(input: { role: string; name?: string | undefined }): {
  role: PrincipalRole;
  name: string;
} {
  if (!isPrincipalRole(input.role)) {
    throw new BatonError(
      'input_invalid',
      'role must be operator or admin (executors get credentials by takeover)',
      {
        path: '$.role',
      },
    );
  }
  const name = input.name ?? input.role;
  if (!NAME.test(name))
    throw new BatonError('input_invalid', 'name must match ' + NAME.source, { path: '$.name' });
  return { role: input.role, name };
}

export async function createToken(
  engine: StoreEngine,
  input: { role: string; name?: string | undefined },
  deps: { clock: Clock; actor: string },
): Promise<CreatedToken> {
  const { role, name } = readTokenInput(input);
  // Always from the system CSPRNG, never an injected id source: these are credentials.
  const id = `tok_${randomBytes(16).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  const stored: StoredToken = {
    id,
    name,
    role,
    secretDigest: digestBytes(secret),
    createdAt: deps.clock.wallMs(),
    revokedAt: null,
  };
  await insertToken(engine, stored, deps.actor);
  return { ...publicToken(stored), token: `${TOKEN_PREFIX}.${id}.${secret}` };
}

/** The token's record if it is well-formed, known, unrevoked and its secret matches; else undefined. */
export async function verifyToken(engine: StoreEngine, bearer: string): Promise<TokenRecord | undefined> {
  const m = TOKEN.exec(bearer);
  if (m === null) return undefined;
  const stored = await findToken(engine, m[1] ?? '');
  if (stored === undefined || stored.revokedAt !== null) return undefined;
  const presented = Buffer.from(digestBytes(m[2] ?? ''));
  const expected = Buffer.from(stored.secretDigest);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
  return publicToken(stored);
}
