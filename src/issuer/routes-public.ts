/**
 * The reference issuer's protocol surface: AS metadata (A2.4), JWKS, Mission Status (A2.2),
 * Mission Lifecycle (A2.3), the token endpoint (RFC 9068 `at+jwt`, only while `active`), and the
 * SSF stream (configuration, RFC 8936 poll, verification). Unknown and not-visible missions get the
 * same 404 bytes (MST-06 anti-oracle), and so does a lifecycle operation the requester may not
 * request (model.ts `mayRequest`); no caller-supplied value other than the nonce is echoed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_MEDIA_TYPE } from '../missions/index.js';
import { FORM_INVALID, formOf, type Form } from './form.js';
import { LIFECYCLE_OPERATIONS, type IssuedMission, type RequestedOperation } from './model.js';
import {
  signAccessToken,
  signIntrospectionLookalike,
  signStatusAnswer,
  type StatusAnswerInput,
} from './sign.js';
import type { IssuerState } from './state.js';

export const PATHS = {
  metadata: '/.well-known/oauth-authorization-server',
  jwks: '/.well-known/jwks.json',
  status: '/as/mission/status',
  lifecycle: '/as/mission/lifecycle',
  token: '/as/token',
  stream: '/ssf/stream',
  poll: '/ssf/poll',
  verify: '/ssf/verify',
} as const;

export const REFERENCE_LABEL =
  'Baton reference Mission issuer: for development and tests only, not an authorization server for production';

const NOT_FOUND_DESCRIPTION = 'Mission reference is not found or not visible.';

function json(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .header('cache-control', 'no-store')
    .send(JSON.stringify(body));
}

function hardError(
  reply: FastifyReply,
  status: number,
  error: string,
  description: string,
  nonce: string | undefined,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return json(reply, status, { error, error_description: description, nonce: nonce ?? null, ...extra });
}

const notFound = (reply: FastifyReply, nonce: string | undefined): FastifyReply =>
  hardError(reply, 404, 'not_found', NOT_FOUND_DESCRIPTION, nonce);

function formOrReject(request: FastifyRequest, reply: FastifyReply): Form | undefined {
  const form = formOf(request.body);
  if (form === undefined || request.body === FORM_INVALID) {
    void json(reply, 400, {
      error: 'invalid_request',
      error_description: 'body must be a form with no parameter given twice',
    });
    return undefined;
  }
  return form;
}

async function authenticated(
  state: IssuerState,
  request: FastifyRequest,
  form: Form,
  endpoint: string,
): Promise<string | undefined> {
  return state.clients.authenticate(
    form,
    request.headers.authorization,
    [state.origin, `${state.origin}${endpoint}`],
    state.clock.wallMs(),
  );
}

async function sendStatus(
  state: IssuerState,
  reply: FastifyReply,
  input: StatusAnswerInput,
): Promise<FastifyReply> {
  const fault = state.statusFaults.take();
  if (fault === 'http_401')
    return hardError(reply, 401, 'unauthorized', 'client authentication required', input.nonce);
  if (fault === 'http_404') return notFound(reply, input.nonce);
  // Headers before the body: `hardError` sends, and a header set after that never leaves.
  if (fault === 'http_429')
    return hardError(reply.header('retry-after', '7'), 429, 'rate_limited', 'slow down', input.nonce, {
      retry_after: 7,
    });
  if (fault === 'http_503')
    return hardError(reply, 503, 'unavailable', 'status temporarily unavailable', input.nonce);
  if (fault === 'http_503_retry_after')
    return hardError(
      reply.header('retry-after', '9'),
      503,
      'unavailable',
      'status temporarily unavailable',
      input.nonce,
    );
  if (fault === 'unsigned_200')
    return json(reply, 200, { mission: { id: input.mission.id, state: 'active' }, state: 'active' });
  const body =
    fault === 'introspection_jwt'
      ? await signIntrospectionLookalike(input, state.keys.current)
      : await signStatusAnswer(
          input,
          fault === 'retired_key' ? (state.keys.lastRetired ?? state.keys.current) : state.keys.current,
          fault,
        );
  const media = fault === 'introspection_jwt' ? 'application/token-introspection+jwt' : STATUS_MEDIA_TYPE;
  return reply
    .code(200)
    .header('content-type', media)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send(body);
}

function registerStatus(app: FastifyInstance, state: IssuerState): void {
  app.post(PATHS.status, async (request, reply) => {
    state.statusRequests += 1;
    const form = formOrReject(request, reply);
    if (form === undefined) return reply;
    const nonce = form.get('nonce');
    const clientId = await authenticated(state, request, form, PATHS.status);
    if (clientId === undefined)
      return hardError(reply, 401, 'unauthorized', 'client authentication required', nonce);
    const retry = state.rateLimited(clientId);
    if (retry !== undefined) {
      return hardError(reply.header('retry-after', String(retry)), 429, 'rate_limited', 'slow down', nonce, {
        retry_after: retry,
      });
    }
    const missionId = form.get('mission');
    const audience = form.get('audience');
    if (missionId === undefined || audience === undefined || nonce === undefined) {
      return hardError(reply, 400, 'invalid_request', 'mission, audience and nonce are required', nonce);
    }
    const mission = await state.visible(missionId, clientId, audience);
    if (mission === undefined) return notFound(reply, nonce);
    return sendStatus(state, reply, statusInput(state, mission, audience, clientId, nonce, true));
  });
}

function statusInput(
  state: IssuerState,
  mission: IssuedMission,
  audience: string,
  sub: string,
  nonce: string,
  withAuthority: boolean,
): StatusAnswerInput {
  return {
    origin: state.origin,
    mission,
    audience,
    sub,
    nonce,
    nowMs: state.clock.wallMs(),
    relianceSec: state.config.relianceSec,
    withAuthority,
  };
}

function registerLifecycle(app: FastifyInstance, state: IssuerState): void {
  app.post(PATHS.lifecycle, async (request, reply) => {
    const form = formOrReject(request, reply);
    if (form === undefined) return reply;
    const nonce = form.get('nonce');
    const clientId = await authenticated(state, request, form, PATHS.lifecycle);
    if (clientId === undefined)
      return hardError(reply, 401, 'unauthorized', 'client authentication required', nonce);
    const operation = form.get('operation');
    const reason = form.get('reason') ?? null;
    const missionId = form.get('mission');
    if (
      missionId === undefined ||
      nonce === undefined ||
      !(LIFECYCLE_OPERATIONS as readonly string[]).includes(operation ?? '') ||
      (reason?.length ?? 0) > 1024
    ) {
      return hardError(
        reply,
        400,
        'invalid_request',
        'mission, operation (revoke|suspend|resume|complete) and nonce are required; reason at most 1024',
        nonce,
      );
    }
    // Status draft "Authorization": a request the requester may not make is refused with the
    // not-found answer, the same bytes as for an unknown Mission (no enumeration oracle, MST-06).
    const mission = await state.mayOperate(missionId, clientId, operation as RequestedOperation);
    if (mission === undefined) return notFound(reply, nonce);
    const verdict = await state.operate(mission, operation as RequestedOperation, reason);
    if (verdict.kind === 'conflict')
      return json(reply, 409, {
        error: 'conflict',
        error_description: `${operation} is not legal from ${mission.state}`,
      });
    // The lifecycle answer's aud is the authenticated requester (status draft, worked example).
    return sendStatus(state, reply, statusInput(state, mission, clientId, clientId, nonce, false));
  });
}

function registerToken(app: FastifyInstance, state: IssuerState): void {
  app.post(PATHS.token, async (request, reply) => {
    const form = formOrReject(request, reply);
    if (form === undefined) return reply;
    const clientId = await authenticated(state, request, form, PATHS.token);
    if (clientId === undefined)
      return json(reply, 401, { error: 'invalid_client', error_description: 'private_key_jwt required' });
    if (form.get('grant_type') !== 'client_credentials')
      return json(reply, 400, { error: 'unsupported_grant_type' });
    const missionId = form.get('mission');
    const resource = form.get('resource');
    const mission = missionId === undefined ? undefined : await state.visible(missionId, clientId);
    // MCO-05: tokens derive only from an active Mission.
    if (
      mission === undefined ||
      mission.state !== 'active' ||
      resource === undefined ||
      !mission.audiences.includes(resource)
    ) {
      return json(reply, 400, {
        error: 'invalid_grant',
        error_description: 'no active Mission for this client and resource',
      });
    }
    const { token, expiresIn } = await signAccessToken(
      {
        origin: state.origin,
        mission,
        clientId,
        resource,
        nowMs: state.clock.wallMs(),
        lifetimeSec: state.config.tokenLifetimeSec,
      },
      state.keys.current,
    );
    return json(reply, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_in: expiresIn,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    });
  });
}

function receiverOf(state: IssuerState, request: FastifyRequest) {
  const header = request.headers.authorization;
  return typeof header === 'string' && header.startsWith('Bearer ')
    ? state.delivery.byBearer(header.slice(7))
    : undefined;
}

function registerStream(app: FastifyInstance, state: IssuerState): void {
  app.get(PATHS.stream, async (request, reply) => {
    const receiver = receiverOf(state, request);
    if (receiver === undefined) return json(reply, 401, { error: 'unauthorized' });
    return json(reply, 200, {
      stream_id: receiver.id,
      iss: state.origin,
      aud: receiver.audience,
      delivery: {
        method: receiver.delivery === 'push' ? 'urn:ietf:rfc:8935' : 'urn:ietf:rfc:8936',
        endpoint_url: receiver.delivery === 'push' ? receiver.endpoint : `${state.origin}${PATHS.poll}`,
      },
      events_delivered: ['https://schemas.karlmcguinness.com/secevent/mission/lifecycle-change'],
    });
  });
  app.post(PATHS.poll, async (request, reply) => {
    const receiver = receiverOf(state, request);
    if (receiver === undefined || receiver.delivery !== 'poll')
      return json(reply, 401, { err: 'authentication_failed', description: 'unknown poll bearer' });
    const body = request.body as { ack?: unknown; maxEvents?: unknown } | undefined;
    const ack = Array.isArray(body?.ack) ? body.ack.filter((a): a is string => typeof a === 'string') : [];
    const max =
      typeof body?.maxEvents === 'number' && Number.isSafeInteger(body.maxEvents) && body.maxEvents >= 0
        ? body.maxEvents
        : 100;
    return json(reply, 200, state.delivery.poll(receiver, ack, max));
  });
  app.post(PATHS.verify, async (request, reply) => {
    const receiver = receiverOf(state, request);
    if (receiver === undefined) return json(reply, 401, { error: 'unauthorized' });
    const body = request.body as { state?: unknown } | undefined;
    await state.verify(receiver, typeof body?.state === 'string' ? body.state : null);
    return reply.code(204).send();
  });
}

export function registerPublicRoutes(app: FastifyInstance, state: IssuerState): void {
  app.get(PATHS.metadata, async (_request, reply) => {
    const o = state.origin;
    return json(reply, 200, {
      issuer: o,
      token_endpoint: `${o}${PATHS.token}`,
      jwks_uri: `${o}${PATHS.jwks}`,
      token_endpoint_auth_methods_supported: ['private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'EdDSA'],
      grant_types_supported: ['client_credentials'],
      mission_bound_authorization_supported: true,
      authorization_details_types_supported: ['mission_resource_access'],
      mission_status_endpoint: `${o}${PATHS.status}`,
      mission_lifecycle_endpoint: `${o}${PATHS.lifecycle}`,
      ...(state.config.maxStaleSeconds !== null && {
        mission_max_stale_seconds: state.config.maxStaleSeconds,
      }),
      mission_event_stream_endpoint: `${o}${PATHS.stream}`,
      baton_reference_issuer: REFERENCE_LABEL,
    });
  });
  app.get(PATHS.jwks, async (_request, reply) =>
    json(reply, 200, state.keys.jwks()).header('cache-control', 'max-age=0'),
  );
  registerStatus(app, state);
  registerLifecycle(app, state);
  registerToken(app, state);
  registerStream(app, state);
}
