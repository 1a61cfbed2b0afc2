/**
 * Console sign-in and sign-out (issue 14, docs/console.md "Sign-in"): POST exchanges an operator
 * or admin token for the session cookie and returns the CSRF token; GET tells the console who is
 * signed in (and the CSRF token again, after a reload: the cookie itself is HttpOnly); DELETE ends
 * the session (a state-changing call, so it needs the CSRF header like every other).
 */
import { BatonError } from '../../core/errors.js';
import { endSession } from '../../store/sessions.js';
import { actorOf, authenticateCookie, type TokenPrincipal } from '../auth.js';
import { bodyObject, timed, tokenOf, type HandlerInput, type RouteSpec, type ServerDeps } from '../route.js';
import { epochMs, object, oneOf } from '../schemas/common.js';
import { cookieValue, DEFAULT_SESSION_TTL_MS, SESSION_COOKIE, sessionCookie, signIn } from '../sessions.js';

const signInBody = object({
  token: { type: 'string', minLength: 1, maxLength: 512, description: 'an operator or admin token' },
});

const sessionView = object({
  id: { type: 'string', pattern: '^ses_[a-f0-9]{32}$' },
  role: oneOf(['operator', 'admin']),
  name: { type: 'string' },
  tokenId: { type: 'string' },
  expiresAt: epochMs,
  csrfToken: { type: 'string', description: 'send it in X-Baton-CSRF on every state-changing call' },
});

function viewOf(p: TokenPrincipal): Record<string, unknown> {
  const s = p.session;
  if (s === undefined) throw new BatonError('input_invalid', 'this call needs the console session cookie');
  return {
    id: s.id,
    role: p.role,
    name: p.name,
    tokenId: p.tokenId,
    expiresAt: s.expiresAt,
    csrfToken: s.csrfToken,
  };
}

/**
 * The live session the request's cookie names, if any. Sign-in replaces the browser's cookie, so
 * the session it named would otherwise stay valid, unreachable, until it expired while another
 * tab still showed it (docs/console.md "Sign-in"). An unreadable or ended cookie names none.
 */
async function replacedSession(
  deps: ServerDeps,
  headers: HandlerInput['headers'],
): Promise<TokenPrincipal | undefined> {
  const raw = headers?.['cookie'];
  try {
    const cookie = cookieValue(typeof raw === 'string' ? raw : undefined, SESSION_COOKIE);
    if (cookie === undefined) return undefined;
    // A safe method: the CSRF token is for calls made with the session, not for replacing it.
    return await authenticateCookie(deps.engine, cookie, {
      method: 'GET',
      csrf: undefined,
      now: deps.clock.wallMs(),
    });
  } catch (e) {
    if (e instanceof BatonError && (e.code === 'unauthenticated' || e.code === 'http_malformed'))
      return undefined;
    throw e;
  }
}

export function sessionRoutes(deps: ServerDeps, ttlMs = DEFAULT_SESSION_TTL_MS): RouteSpec[] {
  return [
    {
      method: 'POST',
      url: '/v1/session',
      operationId: 'signIn',
      summary: 'Console sign-in: exchange an operator or admin token for a session cookie',
      tag: 'session',
      roles: 'public',
      schema: { body: signInBody, response: { 201: sessionView } },
      handler: async (input) => {
        const token = String(bodyObject(input)['token']);
        const started = await timed(deps, 'sign_in', () =>
          signIn(deps.engine, token, { clock: deps.clock, ttlMs }),
        );
        const s = started.session;
        // Only once the new session exists: a refused sign-in leaves the old cookie in place.
        const old = await replacedSession(deps, input.headers);
        if (old?.session !== undefined) {
          const oldId = old.session.id;
          await timed(deps, 'sign_out', () =>
            endSession(deps.engine, oldId, deps.clock.wallMs(), actorOf(old)),
          );
        }
        return {
          status: 201,
          headers: {
            'set-cookie': sessionCookie(started.cookieValue, Math.floor(ttlMs / 1000), input.secure),
          },
          body: {
            id: s.id,
            role: s.role,
            name: s.name,
            tokenId: s.tokenId,
            expiresAt: s.expiresAt,
            csrfToken: started.csrfToken,
          },
        };
      },
    },
    {
      method: 'GET',
      url: '/v1/session',
      operationId: 'getSession',
      summary: 'The console session this cookie belongs to (and its CSRF token)',
      tag: 'session',
      roles: ['operator'],
      schema: { response: { 200: sessionView } },
      handler: (input) => Promise.resolve({ body: viewOf(tokenOf(input)) }),
    },
    {
      method: 'DELETE',
      url: '/v1/session',
      operationId: 'signOut',
      summary: 'Console sign-out: end this session and clear its cookie',
      tag: 'session',
      roles: ['operator'],
      schema: { response: { 200: sessionView } },
      handler: async (input) => {
        const principal = tokenOf(input);
        const view = viewOf(principal);
        const at = deps.clock.wallMs();
        await timed(deps, 'sign_out', () =>
          endSession(deps.engine, String(view['id']), at, actorOf(principal)),
        );
        return { headers: { 'set-cookie': sessionCookie('', 0, input.secure) }, body: view };
      },
    },
  ];
}
