/**
 * The Mission consumer over HTTP (build spec A6; docs/missions.md): the pinned issuer registry
 * (admin writes, operators read), an operator's "check now" (A3.2 → the harness), and the RFC 8935
 * SET push receiver `POST /v1/missions/signals/{issuer}`, which authenticates the SSF stream's
 * bearer itself (constant time, against its stored digest) and answers RFC 8935's own bodies —
 * `202`, or `400`/`401` `{err, description}` — not problem+json.
 */
import { BatonError } from '../../core/errors.js';
import { readBearerReplacement, readIssuerRegistration, SET_MEDIA_TYPE } from '../../missions/index.js';
import type { RegisteredIssuer } from '../../store/missions-issuers.js';
import { principalActor } from '../auth.js';
import type { MissionConsumer } from '../mission-consumer.js';
import { unknownError } from '../mission-consumer.js';
import { refsOutside, secretRefAllowed, secretRefRefusal } from '../mission-secrets.js';
import { param, timed, type HandlerInput, type RouteSpec, type ServerDeps } from '../route.js';
import {
  anyJson,
  anyObject,
  array,
  bool,
  epochMs,
  nullable,
  object,
  oneOf,
  type Schema,
} from '../schemas/common.js';
import { emptyBody } from '../schemas/inputs.js';
import { headerName } from '../transport.js';

const issuerParam: Schema = { type: 'string', minLength: 1, maxLength: 512 };

const issuerView: Schema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'issuer',
    'pin',
    'pinDigest',
    'delivery',
    'pushBearer',
    'pollBearerRef',
    'registeredAt',
    'lastSetAt',
    'lastPollAt',
    'lastPollError',
    'streamLive',
  ],
  properties: {
    issuer: { type: 'string' },
    pin: anyObject,
    pinDigest: { type: 'string' },
    delivery: nullable(oneOf(['urn:ietf:rfc:8935', 'urn:ietf:rfc:8936'])),
    pushBearer: bool,
    pushBearerDigest: {
      ...nullable({ type: 'string' }),
      description:
        'SHA-256 digest of the push bearer, null without one: shown to an admin only, absent for an operator (an unsalted digest of a weak bearer could be guessed offline); `baton apply` compares it to tell a changed bearer. `pushBearer` says to everyone whether one is set.',
    },
    pollBearerRef: nullable({ type: 'string' }),
    registeredAt: epochMs,
    lastSetAt: nullable(epochMs),
    lastPollAt: nullable(epochMs),
    lastPollError: nullable({ type: 'string' }),
    streamLive: bool,
  },
};

const pushBearerSchema: Schema = { type: 'string', minLength: 32, maxLength: 512 };
const pollBearerRefSchema: Schema = { type: 'string', minLength: 5, maxLength: 1030 };

const registrationBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['pin'],
  properties: { pin: anyObject, pushBearer: pushBearerSchema, pollBearerRef: pollBearerRefSchema },
};

const bearerBody: Schema = {
  type: 'object',
  additionalProperties: false,
  // Which of the two the pin needs is the handler's to say (readBearerReplacement), by path.
  properties: { pushBearer: pushBearerSchema, pollBearerRef: pollBearerRefSchema },
};

const setError: Schema = object({
  err: oneOf([
    'invalid_request',
    'invalid_key',
    'invalid_issuer',
    'invalid_audience',
    'authentication_failed',
    'access_denied',
  ]),
  description: { type: 'string' },
});

function consumerOf(deps: ServerDeps): MissionConsumer {
  if (deps.missions === undefined) throw new BatonError('unavailable', 'this server runs no harness');
  return deps.missions;
}

/**
 * A3.5 liveness: a stream is live while its last verified SET (or, for poll, its last answered
 * poll) is within the pin's `max_stale_seconds`. A silent stream extends nothing: signal views go
 * stale on their own bound and the next check fetches Status.
 */
export function streamLive(i: RegisteredIssuer, now: number): boolean {
  // No advertised bound (null): no window is claimed, as before pins told absent from 0.
  const bound = (i.pin.bounds.max_stale_seconds ?? 0) * 1000;
  const lastPoll = i.lastPollError === null ? i.lastPollAt : null;
  const last = Math.max(i.lastSetAt ?? -Infinity, lastPoll ?? -Infinity);
  return i.pin.stream !== null && Number.isFinite(last) && now - last <= bound;
}

/**
 * The issuer as the API shows it. `pushBearer` says whether a push bearer is set; its digest
 * (unsalted SHA-256: a weak bearer could be guessed from it offline) only to an admin (`admin`),
 * who may replace the bearer anyway and whose `baton apply` compares it to tell a changed one
 * (docs/missions.md "Registering an issuer"). Evidence never carries it.
 */
export function issuerBody(i: RegisteredIssuer, now: number, admin: boolean): Record<string, unknown> {
  return {
    issuer: i.issuer,
    pin: i.pin,
    pinDigest: i.pinDigest,
    delivery: i.pin.stream?.delivery ?? null,
    pushBearer: i.bearerDigest !== null,
    ...(admin && { pushBearerDigest: i.bearerDigest }),
    pollBearerRef: i.pollBearerRef,
    registeredAt: i.registeredAt,
    lastSetAt: i.lastSetAt,
    lastPollAt: i.lastPollAt,
    lastPollError: i.lastPollError,
    streamLive: streamLive(i, now),
  };
}

/** An admin's call (a token or a session of the admin role): the push bearer's digest is shown. */
const isAdmin = (input: HandlerInput): boolean => input.principal?.role === 'admin';

function actor(input: HandlerInput): string {
  if (input.principal === undefined) throw new BatonError('unauthenticated', 'a credential is required');
  return principalActor(input.principal);
}

function header(input: HandlerInput, name: string): string | undefined {
  const v = input.headers?.[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function pushRoute(deps: ServerDeps): RouteSpec {
  return {
    method: 'POST',
    url: '/v1/missions/signals/:issuer',
    operationId: 'pushMissionSet',
    summary:
      'RFC 8935 push of a lifecycle SET from a pinned issuer (A3.4): 202 after COMMIT, or 400/401 {err, description}',
    tag: 'missions',
    roles: 'public',
    auth: 'ssf-stream',
    consumes: SET_MEDIA_TYPE,
    schema: {
      params: object({ issuer: issuerParam }),
      // Any body reaches the handler as text, whatever its Content-Type (or none): this route is
      // registered in its own parser scope (app.ts `registerOwnBodyRoutes`, 64 KiB), so a wrong
      // media type is answered in RFC 8935's form (400 invalid_request), never with a 415 problem.
      body: {
        description:
          'the compact SET, Content-Type application/secevent+jwt (any other Content-Type, or none, is answered 400 {"err":"invalid_request"})',
      },
      response: { 202: anyJson, 400: setError, 401: setError },
    },
    handler: async (input) => {
      const answer = await timed(deps, 'mission_set_push', () =>
        consumerOf(deps).receivePush(
          param(input, 'issuer'),
          {
            contentType: header(input, 'content-type'),
            authorization: header(input, 'authorization'),
            body: typeof input.body === 'string' ? input.body : '',
          },
          input.repeatedHeader === undefined ? undefined : headerName(input.repeatedHeader),
        ),
      );
      return answer.status === 202
        ? { status: 202, body: undefined }
        : { status: answer.status, body: answer.body };
    },
  };
}

/**
 * Replace a pinned issuer's SSF stream credential (docs/missions.md "Rotating the stream bearer"):
 * the pin stays immutable, the bearer does not — a leaked one must be replaceable without a new
 * database. A poll reference is held to this host's scope and resolved now, like a registration's,
 * but without the client key: a key broken meanwhile must not block rotating a leaked bearer.
 */
function replaceBearerRoute(deps: ServerDeps): RouteSpec {
  const now = (): number => deps.clock.wallMs();
  return {
    method: 'PUT',
    url: '/v1/missions/issuers/:issuer/bearer',
    operationId: 'replaceMissionIssuerBearer',
    summary:
      "Replace a pinned issuer's SSF stream bearer (pushBearer for an RFC 8935 pin, pollBearerRef for an RFC 8936 one; the pin stays immutable): 200 with the issuer (updated or unchanged), 400 input_invalid (nothing changed), 404 mission_issuer_not_found",
    tag: 'missions',
    roles: ['admin'],
    schema: { params: object({ issuer: issuerParam }), body: bearerBody, response: { 200: issuerView } },
    handler: async (input) => {
      const c = consumerOf(deps);
      const pinned = await c.registry.require(param(input, 'issuer'));
      const credential = readBearerReplacement(input.body, pinned.pin);
      const ref = credential.pollBearerRef;
      if (ref !== null) {
        if (!secretRefAllowed(ref, c.secretScope))
          throw new BatonError('input_invalid', `$.pollBearerRef: ${secretRefRefusal(ref)}`, {
            path: '$.pollBearerRef',
          });
        const unusable = c.unusablePollBearer(ref);
        if (unusable !== undefined)
          throw new BatonError('input_invalid', `${unusable.path}: ${unusable.reason}`, {
            path: unusable.path,
          });
      }
      const done = await c.registry.replaceBearer(pinned.issuer, credential, actor(input), now());
      return { body: issuerBody(done.issuer, now(), true) };
    },
  };
}

export function missionRoutes(deps: ServerDeps): RouteSpec[] {
  const now = (): number => deps.clock.wallMs();
  return [
    {
      method: 'POST',
      url: '/v1/missions/issuers',
      operationId: 'pinMissionIssuer',
      summary:
        'Pin a Mission issuer (baton.mission-issuer/1) with its SSF stream bearer: 201 created, 200 unchanged, 409 mission_issuer_conflict',
      tag: 'missions',
      roles: ['admin'],
      schema: { body: registrationBody, response: { 200: issuerView, 201: issuerView } },
      handler: async (input) => {
        const reg = readIssuerRegistration(input.body);
        // The references are resolved on this host: the host's scope, not the caller, bounds them.
        const outside = refsOutside(reg, consumerOf(deps).secretScope)[0];
        if (outside !== undefined)
          throw new BatonError('input_invalid', `${outside.path}: ${secretRefRefusal(outside.ref)}`, {
            path: outside.path,
          });
        // Resolved and checked now, before the (immutable) pin is stored: a key this server can
        // never sign with would only surface later, at every Status check.
        const unusable = consumerOf(deps).unusableRef(reg);
        if (unusable !== undefined)
          throw new BatonError('input_invalid', `${unusable.path}: ${unusable.reason}`, {
            path: unusable.path,
          });
        const done = await consumerOf(deps).registry.register(reg, actor(input), now());
        return { status: done.action === 'created' ? 201 : 200, body: issuerBody(done.issuer, now(), true) };
      },
    },
    {
      method: 'GET',
      url: '/v1/missions/issuers',
      operationId: 'listMissionIssuers',
      summary:
        'The pinned Mission issuers, their streams and liveness (A3.5); never a bearer, its digest to an admin only',
      tag: 'missions',
      roles: ['operator'],
      schema: { response: { 200: object({ issuers: array(issuerView) }) } },
      handler: async (input) => ({
        body: {
          issuers: (await consumerOf(deps).registry.list()).map((i) => issuerBody(i, now(), isAdmin(input))),
        },
      }),
    },
    {
      method: 'GET',
      url: '/v1/missions/issuers/:issuer',
      operationId: 'getMissionIssuer',
      summary: "One pinned Mission issuer (the push bearer's digest to an admin only)",
      tag: 'missions',
      roles: ['operator'],
      schema: { params: object({ issuer: issuerParam }), response: { 200: issuerView } },
      handler: async (input) => ({
        body: issuerBody(
          await consumerOf(deps).registry.require(param(input, 'issuer')),
          now(),
          isAdmin(input),
        ),
      }),
    },
    {
      method: 'DELETE',
      url: '/v1/missions/issuers/:issuer',
      operationId: 'unpinMissionIssuer',
      summary:
        'Stop trusting a pinned Mission issuer (idempotent: removed or absent): in one transaction its pin moves to the unpin history, every view of its origin that reads active is made stale (its work stops at the next dispatch or entry: Status for an unpinned origin fails closed), and mission_issuer_unpinned is appended; its pushes are refused 401 and it is polled no more; the key archive stays',
      tag: 'missions',
      roles: ['admin'],
      schema: {
        params: object({ issuer: issuerParam }),
        response: { 200: object({ issuer: { type: 'string' }, status: oneOf(['removed', 'absent']) }) },
      },
      handler: async (input) => {
        const issuer = param(input, 'issuer');
        const status = await timed(deps, 'mission_unpin_issuer', () =>
          consumerOf(deps).unpin(issuer, actor(input)),
        );
        return { body: { issuer, status } };
      },
    },
    {
      method: 'POST',
      url: '/v1/missions/:origin/:missionId/check',
      operationId: 'checkMission',
      summary:
        'Fetch Mission Status now (A3.2) and apply it; refused answers make the view unknown (502 mission_status_invalid), unreachable ones 503, as is a check inside the issuer’s 429 or 503 Retry-After (nothing sent); a pinned client key this server cannot use is 500 mission_client_key_unusable (nothing sent)',
      tag: 'missions',
      roles: ['operator'],
      schema: {
        params: object({ origin: issuerParam, missionId: { type: 'string', minLength: 1, maxLength: 256 } }),
        body: emptyBody,
        response: {
          200: object({
            state: { type: 'string' },
            active: bool,
            applied: bool,
            stopped: { type: 'integer' },
            expiresAt: { type: 'string' },
            checkedAt: { type: 'string' },
            jwsDigest: { type: 'string' },
            assessment: anyJson,
          }),
        },
      },
      handler: async (input) => {
        const origin = param(input, 'origin');
        const missionId = param(input, 'missionId');
        const c = consumerOf(deps);
        const outcome = await timed(deps, 'mission_check', () => c.check(origin, missionId));
        if (outcome.kind === 'unknown') throw unknownError(outcome.result);
        const s = outcome.status;
        const h = deps.harness;
        const view = h === undefined ? undefined : await h.getView(origin, missionId);
        const assessment = h === undefined ? null : h.assessView(view);
        return {
          body: {
            state: s.state,
            // Active only when the VIEW is, after this answer: an answer the view did not take (issued
            // before the one it rests on, before a stop SET, or after a terminal state) is no
            // permission (MSG-02, A3.3); callers such as the MCP gate act on this flag.
            active: s.state === 'active' && (assessment === null || assessment.verdict === 'active'),
            applied: outcome.applied,
            stopped: outcome.stopped,
            expiresAt: s.expiresAt,
            checkedAt: s.checkedAt,
            jwsDigest: s.jwsDigest,
            assessment,
          },
        };
      },
    },
    replaceBearerRoute(deps),
    pushRoute(deps),
  ];
}
