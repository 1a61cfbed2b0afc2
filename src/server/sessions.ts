/**
 * Console sessions over the public API (issue 14, docs/console.md "Sign-in"):
 * - sign-in exchanges an operator or admin token for a session cookie `baton_session` =
 *   `bss.<id>.<secret>`: HttpOnly, SameSite=Strict, Path=/, Max-Age (Secure behind https);
 * - the CSRF token is `sha-256(secret)` under its own label, so it is bound to the session, never
 *   stored and never readable by another origin; every state-changing call made with the cookie
 *   must send it in `X-Baton-CSRF`, or is refused with `csrf_invalid` before its body is read;
 * - executors cannot sign in; a revoked token's sessions stop authenticating at once.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { digestBytes } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import type { StoreEngine } from '../store/engine.js';
import { findLiveSession, insertSession, type SessionRecord } from '../store/sessions.js';
import { findExecutorCredential } from '../store/principals.js';
import { looksLikeExecutorCredential, looksLikePrincipalToken, verifyToken } from './tokens.js';

export const SESSION_COOKIE = 'baton_session';
export const CSRF_HEADER = 'x-baton-csrf';
/** Eight hours: one working day, then sign in again. */
export const DEFAULT_SESSION_TTL_MS = 8 * 3600 * 1000;
const SESSION = /^bss\.(ses_[a-f0-9]{32})\.([A-Za-z0-9_-]{43})$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface StartedSession {
  readonly session: SessionRecord;
  readonly cookieValue: string;
  readonly csrfToken: string;
}

export function csrfOf(secret: string): string {
  return digestBytes(`baton-csrf:${secret}`);
}

/**
 * The named cookie's value from a Cookie header; undefined when absent. A second cookie of that
 * name is refused (`400 http_malformed`), never one of them chosen: which one counts would depend
 * on who reads the header (src/server/transport.ts).
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  let found: string | undefined;
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
    if (found !== undefined)
      throw new BatonError('http_malformed', `more than one ${name} cookie`, {
        header: 'cookie',
        cookie: name,
      });
    found = part.slice(eq + 1).trim();
  }
  return found;
}

export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  const attrs = [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  attrs.push(`Max-Age=${maxAgeSeconds}`);
  if (secure) attrs.push('Secure');
  return attrs.join('; ');
}

export async function signIn(
  engine: StoreEngine,
  bearer: string,
  deps: { clock: Clock; ttlMs: number },
): Promise<StartedSession> {
  if (!looksLikePrincipalToken(bearer)) await refuseNonPrincipal(engine, bearer);
  const token = await verifyToken(engine, bearer);
  if (token === undefined) throw new BatonError('unauthenticated', 'unknown or revoked token');
  const id = `ses_${randomBytes(16).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  const now = deps.clock.wallMs();
  const record = { id, tokenId: token.id, createdAt: now, expiresAt: now + deps.ttlMs };
  await insertSession(engine, { ...record, secretDigest: digestBytes(secret) }, `${token.role}:${token.id}`);
  return {
    session: { ...record, role: token.role, name: token.name },
    cookieValue: `bss.${id}.${secret}`,
    csrfToken: csrfOf(secret),
  };
}

/**
 * A bearer that is no principal token never signs in. Only a live executor credential is told
 * `forbidden` (it is one, the console is for people); anything else — a mistyped token, a retired
 * credential — is `unauthenticated`, as on every other route, so a typo is not reported as a
 * question of role.
 */
async function refuseNonPrincipal(engine: StoreEngine, bearer: string): Promise<never> {
  const found = looksLikeExecutorCredential(bearer)
    ? await findExecutorCredential(engine, digestBytes(bearer))
    : undefined;
  if (found === undefined || found.retiredAt !== null)
    throw new BatonError('unauthenticated', 'unknown or revoked token');
  throw new BatonError('forbidden', 'only an operator or admin token can sign in to the console');
}

export interface AuthenticatedSession {
  readonly session: SessionRecord;
  readonly csrfToken: string;
}

/** The live session behind a cookie, with the CSRF check for state-changing methods. */
export async function authenticateSession(
  engine: StoreEngine,
  cookie: string,
  request: { method: string; csrf: string | undefined; now: number },
): Promise<AuthenticatedSession> {
  const m = SESSION.exec(cookie);
  if (m === null) throw new BatonError('unauthenticated', 'the session cookie is malformed');
  const secret = m[2] ?? '';
  const session = await findLiveSession(engine, digestBytes(secret), request.now);
  if (session === undefined || session.id !== m[1]) {
    throw new BatonError(
      'unauthenticated',
      'the session is unknown, expired, signed out or its token revoked',
    );
  }
  const csrfToken = csrfOf(secret);
  if (!SAFE_METHODS.has(request.method) && !sameSecret(request.csrf, csrfToken)) {
    throw new BatonError('csrf_invalid', `a state-changing call needs the session's ${CSRF_HEADER} header`);
  }
  return { session, csrfToken };
}

function sameSecret(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
