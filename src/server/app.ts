/**
 * `buildServer`: the HTTP API of the occurrences context as a Fastify app (DESIGN.md §2, §8, §10;
 * docs/api.md). Everything a request meets, in order:
 * 1. routing; unknown routes are `404 not_found` problems;
 * 2. the transport rules (src/server/transport.ts): a repeated Authorization, Content-Type,
 *    X-Baton-CSRF or Host header, or a second session cookie, is `400 http_malformed`; a Host
 *    that names no name this server answers is `421 host_not_allowed` (DNS rebinding);
 * 3. authentication and the role check (`onRequest`), before the body is even read;
 * 4. the body: `application/json` in UTF-8 only (and a route's `alsoConsumes` types on that route:
 *    `application/baton-continuity-observation+json` on `POST /v1/continuity/records`), parsed by
 *    core's strict parser (duplicate members, lone
 *    surrogates, bad UTF-8 refused), size-limited — or, for a route that reads its body's bytes
 *    itself (`readsBodyBytes`: `POST /v1/continuity/records`, whose record reader refuses bad
 *    bytes as rule `bytes`), size-limited only; any other content type is `415` — except on
 *    the routes that read their own body (the RFC 8935 push receiver, `registerOwnBodyRoutes`;
 *    the webhook receiver, routes/webhooks.ts), which take any content type and answer it themselves;
 * 5. JSON-schema validation with Ajv set to refuse, never repair (no coercion, no removal of
 *    unknown members, no defaults); a route without a body schema takes none (route.ts);
 * 6. the handler, which calls the service: one command, one transaction;
 * 7. every error becomes an RFC 9457 problem with the stable BatonError code; every /v1 answer
 *    is `Cache-Control: no-store` unless its route sets its own, and `X-Content-Type-Options:
 *    nosniff` (transport.ts).
 */
import type { KeyObject } from 'node:crypto';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { systemClock, type Clock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import { parseStrictJson } from '../core/json.js';
import type { OccurrencesService } from '../occurrences/index.js';
import { NO_KEYS, StatusSources, type KeyResolver } from '../providers/index.js';
import type { StoreEngine } from '../store/engine.js';
import { clientErrors, frameworkErrors, MAX_PARAM_LENGTH } from './framework-errors.js';
import { ContinuityStore } from '../store/observations-service.js';
import { Metrics } from './metrics.js';
import { openApiDocument } from './openapi.js';
import { PROBLEM_CONTENT_TYPE, schemaError, toBatonError, toProblem } from './problem.js';
import { registerRoute, type RouteSpec, type ServerDeps } from './route.js';
import { adminReadRoutes } from './routes/admin-reads.js';
import { continuityCounters, continuityRoutes } from './routes/continuity.js';
import { continuityProducerRoutes } from './routes/continuity-producers.js';
import { lineageRoutes } from './routes/lineages.js';
import { observationRoutes } from './routes/observations.js';
import { lifecycleRoutes } from './routes/lifecycle.js';
import { occurrenceRoutes } from './routes/occurrences.js';
import { opsRoutes } from './routes/ops.js';
import { queryRoutes } from './routes/queries.js';
import { setupRoutes } from './routes/setup.js';
import { tokenRoutes } from './routes/tokens.js';
import { harnessRoutes } from './routes/harness.js';
import type { MissionsService } from '../missions/index.js';
import type { SecretScope } from './mission-secrets.js';
import { registerConsole } from '../console/static.js';
import { EventStreams } from './events.js';
import { eventRoutes, evidenceByTypeRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { lineageListRoutes } from './routes/lineage-list.js';
import { sessionRoutes } from './routes/session.js';
import { wireMissionConsumer, type MissionConsumer } from './mission-consumer.js';
import { missionRoutes } from './routes/missions.js';
import { ReconcileMetrics } from './reconcile-metrics.js';
import { registerWebhookRoute, webhookRouteSpec } from './routes/webhooks.js';
import { charsetRefusal, transportRules } from './transport.js';
import { allowedHostNames } from '../core/http-host.js';
import { ReconciliationStore } from '../store/reconciliation.js';

export const DEFAULT_BODY_LIMIT = 1_048_576;
export const API_VERSION = '0.1.0';

/** Never logged: bearer tokens, cookies, and anything named like a secret. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.authorization',
  '*.token',
  '*.credential',
  '*.secret',
];

/**
 * What looks like a credential in a request's URL (SECURITY.md "logs never contain tokens"): a
 * principal token (`btk.`) or console session (`bss.`) up to the next delimiter, and a bare 43-char
 * base64url run — a 256-bit secret (an executor credential, src/core/ids.ts; the secret part of
 * the others). No route takes one in its path or query; a caller who pastes one there (`DELETE
 * /v1/tokens/btk.…` for the token's id) must not find it in the log.
 */
const URL_CREDENTIALS = [
  /(?:btk|bss)(?:\.|%2e)[^/?&#=;,\s]*/gi,
  /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g,
];

/** The URL as logged: each credential-shaped part replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  return URL_CREDENTIALS.reduce((u, pattern) => u.replace(pattern, '[redacted]'), url);
}

/** Fastify's request log fields (lib/logger-pino.js), the URL redacted. */
function requestLogValue(req: FastifyRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

export interface ServerOptions {
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  readonly clock?: Clock;
  /** false (default) for silence; true or pino options for structured logs (always redacted). */
  readonly logger?: boolean | { readonly level?: string; readonly stream?: NodeJS.WritableStream };
  readonly bodyLimit?: number;
  readonly metrics?: Metrics;
  /**
   * HMAC secrets for the profiles' pins (by secret id), so reconcile can authenticate HMAC-signed
   * answers; Ed25519 pins need none (the profile pins the public key). Default: none.
   */
  readonly keys?: KeyResolver;
  /** The harness over the same store (`openBaton` returns it): /v1/harness and /v1/missions. */
  readonly harness?: MissionsService;
  /**
   * The Mission consumer (issuer registry, Status client, SET receipt); default: one over the
   * same engine and harness, wired as the harness's Status fetcher (src/server/mission-consumer.ts).
   */
  readonly missions?: MissionConsumer;
  /**
   * What the default Mission consumer's secret references may reach on this host (`baton serve
   * --secret-dir`; src/server/mission-secrets.ts). Default: `env:BATON_SECRET_*` only, no file.
   */
  readonly secretScope?: SecretScope;
  /** The domain's Ed25519 private key: Baton signs its own continuity records with it (routes/continuity.ts). */
  readonly signingKey?: KeyObject;
  /** Serve the operator console at /console/ (default true; `baton serve --no-console`). */
  readonly console?: boolean;
  /** Console session lifetime (default 8 h; docs/console.md). */
  readonly sessionTtlMs?: number;
  /**
   * Mark the console's session cookie `Secure` on every answer (`baton serve --secure-cookies`):
   * behind a TLS-terminating proxy every request arrives as plain http. Default: only over https.
   */
  readonly secureCookies?: boolean;
  /**
   * The host names a request's `Host` may carry (src/core/http-host.ts `allowedHostNames`; `baton
   * serve` passes its `--host` and `--allowed-host`): any other is `421 host_not_allowed` on every
   * path, so a DNS-rebound web page reaches nothing. Default: the loopback names only
   * (`localhost`, `127.0.0.1`, `[::1]`), for a server listening on a loopback address.
   */
  readonly allowedHostNames?: ReadonlySet<string>;
  /** How often GET /v1/events reads the evidence log (default 500 ms). */
  readonly eventPollMs?: number;
  /** Reconciliation metrics shared with serve's background reconciler (made here when absent). */
  readonly reconcileMetrics?: ReconcileMetrics;
}

/** POST /v1/webhooks/{profileId} (routes/webhooks.ts): raw bytes, so it is not a RouteSpec route. */
function webhooks(app: FastifyInstance, options: ServerOptions, metrics: Metrics, clock: Clock): RouteSpec {
  const store = new ReconciliationStore(options.engine);
  const reconcile =
    options.reconcileMetrics ??
    new ReconcileMetrics(
      () => store.oldestUnresolvedEnteredAt(),
      () => clock.wallMs(),
    );
  metrics.attach(reconcile.registry);
  registerWebhookRoute(app, {
    engine: options.engine,
    service: options.service,
    keys: options.keys ?? NO_KEYS,
    clock,
    metrics: reconcile,
  });
  return webhookRouteSpec;
}

/** The reconciliation metrics: serve's (shared with its background reconciler), or this server's own. */
function reconcileMetricsOf(options: ServerOptions, clock: Clock): ReconcileMetrics {
  if (options.reconcileMetrics !== undefined) return options.reconcileMetrics;
  const store = new ReconciliationStore(options.engine);
  return new ReconcileMetrics(
    () => store.oldestUnresolvedEnteredAt(),
    () => clock.wallMs(),
  );
}

function loggerOption(logger: ServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === undefined || logger === false) return false;
  const base = {
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: requestLogValue },
  };
  if (logger === true) return { ...base, level: 'info' };
  return { ...base, level: logger.level ?? 'info', ...(logger.stream ? { stream: logger.stream } : {}) };
}

/**
 * `application/json` for every route, and each route's `alsoConsumes` media types (the continuity
 * record's own, B2 C-B2) on that route only, all through the same strict parser; such a type on
 * any other route is `415` like every other type. `alsoTaking` maps each type to the `METHOD url`
 * of the routes that declare it (`alsoConsumed`), so what the OpenAPI document lists for a route's
 * request body is what its parser takes.
 */
function strictJsonBodies(
  app: FastifyInstance,
  limit: number,
  alsoTaking: ReadonlyMap<string, ReadonlySet<string>>,
  readingBytes: ReadonlySet<string>,
): void {
  app.removeAllContentTypeParsers();
  const strict = (
    req: FastifyRequest,
    raw: Buffer,
    done: (error: Error | null, body?: unknown) => void,
  ): void => {
    // The bytes are read as UTF-8 whatever the header says: another declared charset is 415.
    const refused = charsetRefusal(req.headers['content-type']);
    if (refused !== undefined) return done(refused, undefined);
    // A route that reads its body's bytes itself (`readsBodyBytes`) gets them, within the limit.
    if (readingBytes.has(`${req.method} ${req.routeOptions.url ?? ''}`)) return done(null, raw);
    try {
      done(null, raw.length === 0 ? undefined : parseStrictJson(raw, { maxBytes: limit }));
    } catch (error) {
      done(error as Error, undefined);
    }
  };
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: limit },
    (req, raw: Buffer, done) => strict(req, raw, done),
  );
  for (const [type, routes] of alsoTaking) {
    app.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: limit }, (req, raw: Buffer, done) => {
      if (routes.has(`${req.method} ${req.routeOptions.url ?? ''}`)) strict(req, raw, done);
      else done(new BatonError('media_type_unsupported', `${type} is for ${[...routes].join(', ')} only`));
    });
  }
}

/** Each `alsoConsumes` media type → the `METHOD url` of the routes that declare it. */
function alsoConsumed(routes: readonly RouteSpec[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const spec of routes)
    for (const type of spec.alsoConsumes ?? [])
      out.set(type, (out.get(type) ?? new Set<string>()).add(`${spec.method} ${spec.url}`));
  return out;
}

/** The body limit of a route that reads its own body (`consumes`): a compact SET is 64 KiB at most. */
const OWN_BODY_LIMIT = 64 * 1024;

/**
 * Routes that declare their own request media type (`consumes`: the RFC 8935 SET push receiver,
 * routes/missions.ts), each registered in an encapsulated scope whose only parser takes ANY
 * content type, or none, as text (64 KiB at most, as webhooks.ts takes raw bytes). The handler then
 * checks the media type itself and refuses a wrong one in the route's own error form (RFC 8935
 * §2.4: `400 {"err":"invalid_request","description"}`, after the stream bearer), which the
 * framework's `415` problem would otherwise pre-empt. Every other route still parses JSON only:
 * `application/secevent+jwt` elsewhere is `415 media_type_unsupported`.
 */
function registerOwnBodyRoutes(app: FastifyInstance, deps: ServerDeps, specs: readonly RouteSpec[]): void {
  if (specs.length === 0) return;
  void app.register((scope, _opts, ready) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'string', bodyLimit: OWN_BODY_LIMIT },
      (_req, raw: string, done) => done(null, raw),
    );
    for (const spec of specs) registerRoute(scope, deps, spec);
    ready();
  });
}

/**
 * A 500 — a defect (`internal`), or damage or misconfiguration an operator must see (`store_corrupt`,
 * `store_schema_mismatch`, `credential_unresolved`, …) — is an error with its stack; a dependency
 * that did not answer or answered wrongly (a Status source, an upstream, the store: 502/503/504) is
 * a warning with its words and its cause's, since the operator acts on the dependency; a refusal
 * of the caller's request is information.
 */
function logProblem(log: FastifyBaseLogger, e: BatonError, error: unknown): void {
  if (e.status < 500) {
    log.info({ code: e.code }, 'request refused');
    return;
  }
  if (e.status === 500) {
    log.error({ err: error, code: e.code }, 'request failed');
    return;
  }
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  log.warn({ code: e.code, reason: e.message, ...(cause !== undefined && { cause }) }, 'request not served');
}

function problems(app: FastifyInstance, metrics: Metrics): void {
  app.setErrorHandler((error, request, reply) => {
    const e = toBatonError(error);
    metrics.countRefusal(e.code);
    logProblem(request.log, e, error);
    if (e.status === 401) reply.header('www-authenticate', 'Bearer');
    return reply
      .code(e.status)
      .type(PROBLEM_CONTENT_TYPE)
      .send(JSON.stringify(toProblem(e)));
  });
  app.setNotFoundHandler((_request, reply) => {
    metrics.countRefusal('not_found');
    const problem = toProblem(
      toBatonError({ statusCode: 404, code: 'FST_ERR_NOT_FOUND', message: 'no such route' }),
    );
    return reply.code(404).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  });
  app.addHook('onResponse', (request, reply, done) => {
    // The route's pattern, never the raw URL: ids would make one time series per occurrence.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.countRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** The app, not yet listening; the caller owns `listen` and `close` (closing the engine is theirs too). */
export function buildServer(options: ServerOptions): FastifyInstance {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const metrics = options.metrics ?? new Metrics();
  const app = Fastify({
    logger: loggerOption(options.logger),
    bodyLimit,
    // Shutdown (docs/operations.md): close() stops accepting and lets every request in flight
    // finish; only idle keep-alive sockets are closed at once. A request that arrives on an open
    // connection while draining is still answered (with `Connection: close`), not refused with 503.
    forceCloseConnections: 'idle',
    return503OnClosing: false,
    // Router and connection refusals are problems too (src/server/framework-errors.ts).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrors(metrics),
    clientErrorHandler: clientErrors(metrics),
    schemaErrorFormatter: schemaError,
    ajv: {
      customOptions: { removeAdditional: false, useDefaults: false, coerceTypes: false, allErrors: false },
    },
  });
  problems(app, metrics);
  transportRules(app, options.allowedHostNames ?? allowedHostNames('127.0.0.1'));
  const deps: ServerDeps = {
    engine: options.engine,
    service: options.service,
    clock: options.clock ?? systemClock,
    // One codec for every paged route, the service's own (its `listOccurrences` issues cursors too).
    cursors: options.service.cursors,
    metrics,
    sources: new StatusSources({ keys: options.keys ?? NO_KEYS, clock: options.clock ?? systemClock }),
    keys: options.keys ?? NO_KEYS,
    ...(options.secureCookies === true && { secureCookies: true }),
    ...(options.harness !== undefined && { harness: options.harness }),
    ...(options.harness !== undefined && {
      missions:
        options.missions ??
        wireMissionConsumer({
          engine: options.engine,
          harness: options.harness,
          clock: options.clock ?? systemClock,
          metrics: metrics.missions,
          ...(options.secretScope !== undefined && { secretScope: options.secretScope }),
          onError: (error, what) => app.log.warn({ err: error, what }, 'mission consumer step failed'),
        }),
    }),
    ...(options.signingKey !== undefined && {
      continuity: new ContinuityStore({
        engine: options.engine,
        signingKey: options.signingKey,
        clock: options.clock,
        observer: continuityCounters(metrics),
      }),
    }),
  };
  const reconcile = reconcileMetricsOf(options, deps.clock);
  const routes: RouteSpec[] = [];
  const doc = (): unknown => openApiDocument(routes, API_VERSION);
  routes.push(
    ...opsRoutes(deps, doc),
    ...setupRoutes(deps),
    ...adminReadRoutes(deps),
    ...lineageRoutes(deps),
    ...occurrenceRoutes(deps),
    ...observationRoutes(deps),
    ...lifecycleRoutes(deps),
    ...queryRoutes(deps),
    ...tokenRoutes(deps),
    ...harnessRoutes(deps),
    ...missionRoutes(deps),
    ...continuityRoutes(deps),
    ...continuityProducerRoutes(deps),
  );
  const streams = new EventStreams(options.engine, options.eventPollMs);
  routes.push(
    ...sessionRoutes(deps, options.sessionTtlMs),
    ...eventRoutes(streams),
    ...evidenceByTypeRoutes(deps),
    ...healthRoutes(deps, reconcile),
    ...lineageListRoutes(deps),
  );
  strictJsonBodies(
    app,
    bodyLimit,
    alsoConsumed(routes),
    new Set(routes.filter((r) => r.readsBodyBytes === true).map((r) => `${r.method} ${r.url}`)),
  );
  for (const spec of routes) if (spec.consumes === undefined) registerRoute(app, deps, spec);
  registerOwnBodyRoutes(
    app,
    deps,
    routes.filter((spec) => spec.consumes !== undefined),
  );
  // Open event streams would hold a drain until its deadline: end them first.
  app.addHook('preClose', (done) => {
    streams.closeAll();
    done();
  });
  if (options.console !== false) registerConsole(app);
  routes.push(webhooks(app, { ...options, reconcileMetrics: reconcile }, metrics, deps.clock));
  return app;
}
