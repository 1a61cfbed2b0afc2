/**
 * Bearer authentication and role checks (DESIGN.md §8, docs/api.md "Authentication").
 * - `btk.<id>.<secret>`: an admin/operator principal token (src/server/tokens.ts).
 * - anything else: an executor credential issued by takeover, bound to (lineage, generation). It is
 *   read from the occurrences service's own credential records; a retired generation is refused with
 *   `generation_retired` here and again inside every executor command's transaction (AOC-REQ-006).
 * `admin` includes every `operator` permission; neither can act as an executor.
 */
import { digestBytes } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { executorActor } from '../missions/index.js';
import type { StoreEngine } from '../store/engine.js';
import { findExecutorCredential, type PrincipalRole } from '../store/principals.js';
import { authenticateSession } from './sessions.js';
import { looksLikeExecutorCredential, looksLikePrincipalToken, verifyToken } from './tokens.js';

export type Role = PrincipalRole | 'executor';

export interface TokenPrincipal {
  readonly kind: 'token';
  readonly role: PrincipalRole;
  readonly tokenId: string;
  readonly name: string;
  /** Present when the caller came with a console session cookie instead of the bearer token. */
  readonly session?: { readonly id: string; readonly expiresAt: number; readonly csrfToken: string };
}

export interface ExecutorPrincipal {
  readonly kind: 'executor';
  readonly role: 'executor';
  readonly lineage: string;
  readonly generation: number;
  /** The bearer itself: passed to the service, which checks it again in its transaction. */
  readonly credential: string;
}

/**
 * An executor bearer not yet looked up: on the routes whose command authenticates the credential
 * in its own transaction (create, enter, acknowledge, reconcile), the server reads nothing before
 * it (issue 16 §1). Only those routes ever see one; everything that needs the lineage refuses it.
 */
export interface ExecutorBearer {
  readonly kind: 'executor-bearer';
  readonly role: 'executor';
  readonly credential: string;
}

export type Principal = TokenPrincipal | ExecutorPrincipal | ExecutorBearer;

const BEARER = /^Bearer +([^\s]+) *$/i;

function unauthenticated(why: string): BatonError {
  return new BatonError('unauthenticated', why);
}

function bearerOf(header: string | undefined): string {
  if (header === undefined || header === '') throw unauthenticated('a bearer token is required');
  const bearer = BEARER.exec(header)?.[1];
  if (bearer === undefined) throw unauthenticated('the Authorization header must be "Bearer <token>"');
  return bearer;
}

/**
 * For a route whose command authenticates executors itself: an executor credential of the right
 * form is passed on unread (the command's transaction looks it up, refusing an unknown or retired
 * one with the same codes as below); a principal token is checked here as on every route.
 */
export async function authenticateForCommand(
  engine: StoreEngine,
  header: string | undefined,
): Promise<Principal> {
  const bearer = bearerOf(header);
  if (looksLikePrincipalToken(bearer)) return authenticate(engine, header);
  if (!looksLikeExecutorCredential(bearer)) throw unauthenticated('unknown token');
  return { kind: 'executor-bearer', role: 'executor', credential: bearer };
}

export async function authenticate(engine: StoreEngine, header: string | undefined): Promise<Principal> {
  const bearer = bearerOf(header);
  if (looksLikePrincipalToken(bearer)) {
    const token = await verifyToken(engine, bearer);
    if (token === undefined) throw unauthenticated('unknown or revoked token');
    return { kind: 'token', role: token.role, tokenId: token.id, name: token.name };
  }
  if (!looksLikeExecutorCredential(bearer)) throw unauthenticated('unknown token');
  const found = await findExecutorCredential(engine, digestBytes(bearer));
  if (found === undefined) throw unauthenticated('unknown executor credential');
  if (found.retiredAt !== null) {
    throw new BatonError('generation_retired', 'this executor generation was retired by a takeover', {
      generation: found.generation,
    });
  }
  return {
    kind: 'executor',
    role: 'executor',
    lineage: found.lineage,
    generation: found.generation,
    credential: bearer,
  };
}

/**
 * A console session (src/server/sessions.ts) as the principal of its token. The bearer header,
 * when present, wins: a request is never authenticated by both.
 */
export async function authenticateCookie(
  engine: StoreEngine,
  cookie: string,
  request: { method: string; csrf: string | undefined; now: number },
): Promise<TokenPrincipal> {
  const { session, csrfToken } = await authenticateSession(engine, cookie, request);
  return {
    kind: 'token',
    role: session.role,
    tokenId: session.tokenId,
    name: session.name,
    session: { id: session.id, expiresAt: session.expiresAt, csrfToken },
  };
}

export function permits(role: Role, allowed: readonly Role[]): boolean {
  return allowed.includes(role) || (role === 'admin' && allowed.includes('operator'));
}

export function authorize(principal: Principal, allowed: readonly Role[]): void {
  if (!permits(principal.role, allowed)) {
    throw new BatonError('forbidden', `this route is not open to the ${principal.role} role`, {
      role: principal.role,
    });
  }
}

/** The evidence actor for whoever holds this principal (never a secret). */
export function principalActor(principal: Principal): string {
  if (principal.kind === 'executor') return executorActor(principal);
  if (principal.kind === 'executor-bearer') {
    // Fail closed: a route that needs the executor's name must authenticate it first.
    throw new BatonError('internal', 'an executor credential was used before it was authenticated');
  }
  return actorOf(principal);
}

/** The evidence actor for an admin/operator command (never a secret). */
export function actorOf(principal: TokenPrincipal): string {
  return `${principal.role}:${principal.tokenId}`;
}
