/**
 * Console sign-in and sign-out (issue 14, docs/console.md "Sign-in"): POST exchanges an operator
 * or admin token for the session cookie and returns the CSRF token; GET tells the console who is
 * signed in (and the CSRF token again, after a reload: the cookie itself is HttpOnly); DELETE ends
 * the session (a state-changing call, so it needs the CSRF header like every other).
 */
import { BatonError } from '../../core/errors.js';
import { endSession } from '../../store/sessions.js';
import { actorOf, type TokenPrincipal } from '../auth.js';
import { bodyObject, timed, tokenOf, type RouteSpec, type ServerDeps } from '../route.js';
import { epochMs, object, oneOf } from '../schemas/common.js';
import { DEFAULT_SESSION_TTL_MS, sessionCookie, signIn } from '../sessions.js';

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
