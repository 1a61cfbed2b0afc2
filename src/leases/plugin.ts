/**
 * The Fastify plugin a system of record mounts to enforce PTCL (draft §3-§6): reads publish the
 * resource's epoch in Agent-Fence-Token; a leased POST commits (or shadows, or escrows) only when
 * every rule holds and answers with a signed Agent-Commit-Receipt; every refusal answers with a
 * signed rejection receipt (problem+json) that the service has already appended to the audit log.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BatonError, isBatonError } from '../core/errors.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import { parseStrictJson } from '../core/json.js';
import { formatRfc3339 } from '../core/time.js';
import {
  COMMIT_RECEIPT_HEADER,
  FENCE_TOKEN_HEADER,
  LEASE_HEADER,
  decodeLeaseHeader,
  encodeReceiptHeader,
} from './carriage.js';
import { LEASE_ID_MAX_LENGTH } from './model.js';
import { reject } from './outcome.js';
import { MAX_URI_LENGTH } from './parse.js';
import type { Answer, LeaseService, StagedRequest } from './service.js';

export interface LeasePluginOptions {
  service: LeaseService;
  /** Where the leased resources live, e.g. `/api/v2/inventory/allocations`; each is `<path>/:id`. */
  collectionPath: string;
  /** The canonical absolute URI of resource `id`: what a lease must name in sor_target_uri. */
  targetUri: (id: string) => string;
  /**
   * The system of record's own configured origin (`scheme://host[:port]`, no path, no trailing
   * slash). A receipt for a request that names no known lease says `<origin><prefix><route>`, with
   * the Fastify prefix the plugin is mounted under (added by the plugin); it is never built from
   * the request's Host header, which would let a client choose what the system of record signs.
   */
  origin: () => string;
  /** Whether the request comes from an operator (escrow approval, audit, escrow queue). */
  isOperator: (request: FastifyRequest) => boolean;
  /** The receipt-signing public key, published so gateways can check receipts. */
  receiptJwk: JsonObject;
}

type IdParams = { Params: { id: string } };
type LeaseParams = { Params: { leaseId: string } };

function problem(reply: FastifyReply, error: BatonError, extra: JsonObject = {}): FastifyReply {
  const body = {
    type: 'about:blank',
    title: error.code,
    status: error.status,
    code: error.code,
    detail: error.message,
    ...extra,
  };
  return reply.code(error.status).type('application/problem+json').send(body);
}

/** How long a client told `store_busy` should wait before retrying (RFC 9110 Retry-After, seconds). */
const BUSY_RETRY_AFTER_S = '1';

/**
 * RFC 9110 §15.5.2: a 401 MUST carry a WWW-Authenticate challenge. The operator routes take a bearer
 * token (`Bearer`); a leased request, recovery or approval whose lease (or recovery order) signature
 * does not verify is challenged with the scheme naming what authenticates it: the signed PTCL lease
 * (docs/leases.md §3). Not an HTTP authentication scheme a client can negotiate — a name, so the 401
 * says what credential failed.
 */
const OPERATOR_CHALLENGE = 'Bearer';
const LEASE_CHALLENGE = 'PTCL-Lease';

function send(reply: FastifyReply, answer: Answer): FastifyReply {
  reply.header(COMMIT_RECEIPT_HEADER, encodeReceiptHeader(answer.receipt));
  if (answer.status === 401) reply.header('www-authenticate', LEASE_CHALLENGE);
  if (answer.rejection?.code === 'store_busy') reply.header('retry-after', BUSY_RETRY_AFTER_S);
  if (answer.resource !== undefined) reply.header(FENCE_TOKEN_HEADER, String(answer.resource.epoch));
  const receipt = answer.receipt as unknown as JsonObject;
  if (answer.rejection !== undefined) {
    const { code, message, rule, cause } = answer.rejection;
    // A model fault's own error stays out of the receipt and the body, but is never swallowed.
    if (cause !== undefined)
      reply.log.error({ err: cause }, 'lease system of record: the resource model failed');
    const body = {
      type: 'about:blank',
      title: code,
      status: answer.status,
      code,
      detail: message,
      rule,
      receipt,
    };
    return reply.code(answer.status).type('application/problem+json').send(body);
  }
  const state = answer.resource?.state ?? null;
  return reply.code(answer.status).send({ receipt, epoch: answer.resource?.epoch ?? null, state });
}

/** The operation and inverse payload beside the lease: `{"operation": …, "inverse_payload": …}`. */
function staged(body: unknown): StagedRequest {
  const none = (defect: string): StagedRequest => ({
    operation: undefined,
    inversePayload: undefined,
    defect,
  });
  if (!Buffer.isBuffer(body) || body.length === 0) return none('request body is empty');
  let value: JsonValue;
  try {
    value = parseStrictJson(body);
  } catch (error) {
    if (isBatonError(error)) return none(`request body is not strict JSON (${error.code})`);
    throw error;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return none('body must be an object');
  const extra = Object.keys(value).find((k) => k !== 'operation' && k !== 'inverse_payload');
  if (extra !== undefined) return none('body has an unknown member');
  return { operation: value['operation'], inversePayload: value['inverse_payload'] };
}

/** The lease header's bytes; an undecodable header is passed on as its own bytes, to be refused as malformed. */
function leaseHeaderBytes(request: FastifyRequest): Buffer | undefined {
  try {
    return decodeLeaseHeader(request.headers[LEASE_HEADER]);
  } catch (error) {
    if (!isBatonError(error)) throw error;
    return Buffer.from(String(request.headers[LEASE_HEADER]), 'latin1');
  }
}

/**
 * Why Fastify refused a request body before any handler ran (its content-type parser stage: over
 * bodyLimit, an unparseable Content-Type, a bad Content-Length), or undefined for any other error.
 * The wording is fixed: a header value never reaches the answer.
 */
function transportDefect(error: unknown): string | undefined {
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof code !== 'string' || !code.startsWith('FST_ERR_CTP_')) return undefined;
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode > 499) return undefined;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'request body exceeds the body limit (1 MiB); not read';
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return 'request Content-Type is not a media type; body not read';
  return `request body could not be read (${code})`;
}

/**
 * `origin` became required (2e1d2cf); a JavaScript caller that omits it must fail here, at
 * registration, not with a TypeError and a receipt-less 500 on each recover or approve refusal
 * (draft §5: fail closed, every refusal auditable). Its value may be known only once the server
 * listens (`baton sor` without --public-url), so only its presence can be checked now.
 */
function originRefusal(o: Partial<LeasePluginOptions>): BatonError | undefined {
  if (typeof o.origin === 'function') return undefined;
  return new BatonError(
    'input_invalid',
    'leasePlugin needs origin: a function returning the system of record’s own origin',
    { member: 'origin' },
  );
}

/**
 * The router's `maxParamLength` as Fastify reports it: `routerOptions.maxParamLength` when the host
 * passed `routerOptions` (Fastify's validator then fills in 100 for a missing one, whatever the
 * deprecated top-level option says — so this may read lower than the router uses, never higher:
 * fail closed), else the top-level `maxParamLength`, else Fastify's default 100.
 */
function routerMaxParamLength(app: FastifyInstance): number {
  const config = app.initialConfig as {
    maxParamLength?: unknown;
    routerOptions?: { maxParamLength?: unknown };
  };
  const value =
    config.routerOptions !== undefined ? config.routerOptions.maxParamLength : config.maxParamLength;
  return typeof value === 'number' ? value : 100;
}

/**
 * A host whose router cuts path parameters shorter than the longest lease_id would accept (and sign a
 * receipt promising recovery for) a lease whose `GET /ptcl/leases/{id}`, recovery and approval then
 * answer Fastify's 414 — unreachable (draft §4 rule 3: recovery inside the window). find-my-way
 * measures a parameter after percent-decoding, so 256 covers every lease_id however it is encoded.
 */
function paramLengthRefusal(app: FastifyInstance): BatonError | undefined {
  const length = routerMaxParamLength(app);
  if (length >= LEASE_ID_MAX_LENGTH) return undefined;
  return new BatonError(
    'input_invalid',
    `leasePlugin needs a Fastify router with maxParamLength of at least ${LEASE_ID_MAX_LENGTH} ` +
      `(the longest lease_id); this one has ${length}: create it with ` +
      `Fastify({ routerOptions: { maxParamLength: ${LEASE_ID_MAX_LENGTH} } })`,
    { member: 'maxParamLength', minimum: LEASE_ID_MAX_LENGTH, actual: length },
  );
}

/**
 * The single path segment between `head` and `tail` in the request's own URL, percent-decoded, or
 * undefined when the path has another shape (more segments, an undecodable one). For the wildcard
 * fallback routes, which see only what the parametric routes did not take.
 */
function segmentBetween(request: FastifyRequest, head: string, tail: string): string | undefined {
  const path = request.url.split('?')[0] ?? '';
  if (!path.startsWith(head) || !path.endsWith(tail) || path.length <= head.length + tail.length)
    return undefined;
  const raw = path.slice(head.length, path.length - tail.length);
  if (raw.includes('/')) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

export function leasePlugin(app: FastifyInstance, o: LeasePluginOptions): Promise<void> {
  // A rejected promise, not a throw: Fastify's loader turns a plugin's synchronous throw into an
  // uncaught exception, whereas a rejection fails `register` / `ready` with this error.
  const refusal = originRefusal(o) ?? paramLengthRefusal(app);
  if (refusal !== undefined) return Promise.reject(refusal);
  // Bodies are read raw and parsed strictly here, so a malformed body still gets a signed refusal.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Mounted under a Fastify `prefix` (`register(leasePlugin, {prefix: '/sor', …})`) every route lives
  // below it; Fastify joins the two without the prefix's trailing slash, and so does this.
  const base = app.prefix.replace(/\/+$/, '');
  // The endpoint's canonical URI from the configured origin, the mount prefix and the route's own
  // parameter (not the request's Host, nor its query string): what the receipt's sor_target_uri says
  // when no lease names one. It must name the endpoint that was actually called (draft §5: auditable).
  const leaseUri = (leaseId: string, action: 'recover' | 'approve'): string =>
    `${o.origin()}${base}${action === 'recover' ? '/ptcl/leases/' : '/ptcl/escrow/'}${encodeURIComponent(leaseId)}/${action}`;

  const operator = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (o.isOperator(request)) return true;
    void problem(
      reply.header('www-authenticate', OPERATOR_CHALLENGE),
      new BatonError('unauthenticated', 'operator credentials required'),
    );
    return false;
  };

  // The leased request, recovery and approval, shared by their parametric routes, the wildcard
  // fallbacks below and the error handler. `defect` says why the body could not be read.
  const mutate = (
    reply: FastifyReply,
    request: FastifyRequest,
    id: string,
    body: StagedRequest,
  ): FastifyReply => {
    const target = o.targetUri(id);
    if (target.length > MAX_URI_LENGTH) {
      // No lease can name it (docs/leases.md §1), and a receipt naming it could outgrow a header.
      const why = `no lease can name a resource URI longer than ${MAX_URI_LENGTH} characters`;
      const uri = `${o.origin()}${base}${o.collectionPath}`;
      return send(
        reply,
        o.service.refuseRequest(uri, null, reject('ERR_TARGET_MISMATCH', 'TARGET_BINDING', why)),
      );
    }
    return send(reply, o.service.mutate(target, leaseHeaderBytes(request), body));
  };
  const overlong = `no lease has an id longer than ${LEASE_ID_MAX_LENGTH} characters`;
  const recoverLease = (reply: FastifyReply, leaseId: string, body: Buffer | string): FastifyReply => {
    // An id no lease can have is refused by name of the route, not echoed into the receipt.
    if (leaseId.length > LEASE_ID_MAX_LENGTH) {
      const uri = `${o.origin()}${base}/ptcl/leases`;
      return send(reply, o.service.refuseRequest(uri, null, reject('not_found', 'LEASE_REPLAY', overlong)));
    }
    const uri = leaseUri(leaseId, 'recover');
    if (typeof body === 'string') {
      // The recovery order is the body: unread, it is a malformed order.
      return send(
        reply,
        o.service.refuseRequest(uri, leaseId, reject('ERR_LEASE_MALFORMED', 'CRYPTOGRAPHIC_BINDING', body)),
      );
    }
    return send(reply, o.service.recover(leaseId, body, uri));
  };
  const approveLease = (reply: FastifyReply, leaseId: string, defect?: string): FastifyReply => {
    if (leaseId.length > LEASE_ID_MAX_LENGTH) {
      const uri = `${o.origin()}${base}/ptcl/escrow`;
      const rejection = reject('not_found', 'LEASE_REPLAY', overlong);
      return send(reply, o.service.refuseRequest(uri, null, rejection, { authenticated: true }));
    }
    const uri = leaseUri(leaseId, 'approve');
    if (defect !== undefined)
      return send(
        reply,
        o.service.refuseRequest(uri, leaseId, reject('input_invalid', 'RESOURCE_SEMANTICS', defect), {
          authenticated: true,
        }),
      );
    return send(reply, o.service.approve(leaseId, uri));
  };
  const bodyOf = (request: FastifyRequest): Buffer =>
    Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);

  app.get<IdParams>(`${o.collectionPath}/:id`, async (request, reply) => {
    const resource = o.service.read(o.targetUri(request.params.id));
    if (resource === undefined) return problem(reply, new BatonError('not_found', 'no such resource'));
    return reply.header(FENCE_TOKEN_HEADER, String(resource.epoch)).send(resource.state);
  });

  app.post<IdParams>(`${o.collectionPath}/:id`, async (request, reply) =>
    mutate(reply, request, request.params.id, staged(request.body)),
  );

  app.post<LeaseParams>('/ptcl/leases/:leaseId/recover', async (request, reply) =>
    recoverLease(reply, request.params.leaseId, bodyOf(request)),
  );

  app.get<LeaseParams>('/ptcl/leases/:leaseId', async (request, reply) => {
    const rec = o.service.leaseRecord(request.params.leaseId);
    if (rec === undefined) return problem(reply, new BatonError('not_found', 'no such lease'));
    const { leaseId, target, mode, status, committedEpoch, acceptedAtMs, windowEndsAtMs } = rec;
    return reply.send({
      lease_id: leaseId,
      sor_target_uri: target,
      recovery_mode: mode,
      status,
      committed_epoch: committedEpoch,
      accepted_at: formatRfc3339(acceptedAtMs),
      window_ends_at: formatRfc3339(windowEndsAtMs),
    });
  });

  app.get<LeaseParams>('/ptcl/shadow/:leaseId', async (request, reply) => {
    const shadow = o.service.shadow(request.params.leaseId);
    if (shadow === undefined) return problem(reply, new BatonError('not_found', 'no such shadow write'));
    const { leaseId, target, baseEpoch, epoch, state, digest } = shadow;
    return reply.send({
      lease_id: leaseId,
      sor_target_uri: target,
      base_epoch: baseEpoch,
      epoch,
      state,
      digest,
    });
  });

  app.post<LeaseParams>('/ptcl/escrow/:leaseId/approve', async (request, reply) => {
    if (!operator(request, reply)) return reply;
    return approveLease(reply, request.params.leaseId);
  });

  // Wildcard fallbacks. find-my-way tries a wildcard sibling when a parametric segment is longer than
  // the router's maxParamLength (≥ LEASE_ID_MAX_LENGTH, checked above), where Fastify would otherwise
  // answer its own 414 without a receipt: a leased request, a recovery or an approval with such an id
  // gets the signed, audited refusal every other one gets (docs/leases.md §6; draft §5). Any other path
  // that reaches them (more segments) is Fastify's 404, as before.
  const recoverRoute = { head: `${base}/ptcl/leases/`, tail: '/recover' };
  const approveRoute = { head: `${base}/ptcl/escrow/`, tail: '/approve' };
  const collectionRoute = { head: `${base}${o.collectionPath}/`, tail: '' };
  // A collection path with parameters of its own cannot be matched segment by segment here.
  const collectionFallback = !/[:*]/.test(o.collectionPath);
  if (collectionFallback) {
    app.post(`${o.collectionPath}/*`, async (request, reply) => {
      const id = segmentBetween(request, collectionRoute.head, collectionRoute.tail);
      if (id === undefined) return reply.callNotFound();
      return mutate(reply, request, id, staged(request.body));
    });
  }
  app.post('/ptcl/leases/*', async (request, reply) => {
    const id = segmentBetween(request, recoverRoute.head, recoverRoute.tail);
    if (id === undefined) return reply.callNotFound();
    return recoverLease(reply, id, bodyOf(request));
  });
  app.post('/ptcl/escrow/*', async (request, reply) => {
    const id = segmentBetween(request, approveRoute.head, approveRoute.tail);
    if (id === undefined) return reply.callNotFound();
    if (!operator(request, reply)) return reply;
    return approveLease(reply, id);
  });

  app.get('/ptcl/escrow', async (request, reply) => {
    if (!operator(request, reply)) return reply;
    // The lease does not name the forward operation (the draft has no member for it), so the human
    // who is HUMAN_ESCROW's recovery gate must see the held operation itself before approving it.
    const pending = o.service.pendingEscrows().map((e) => ({
      lease_id: e.leaseId,
      sor_target_uri: e.target,
      held_at: formatRfc3339(e.heldAtMs),
      approve_by: formatRfc3339(e.approveByMs),
      operation: o.service.leaseRecord(e.leaseId)?.operation ?? null,
    }));
    return reply.send({ pending });
  });

  app.get<{ Querystring: { after?: string; limit?: string } }>('/ptcl/audit', async (request, reply) => {
    if (!operator(request, reply)) return reply;
    // Decimal digits only: Number() would also take `1e400`, `0x10`, ` 5` or an empty string.
    const decimal = (text: unknown, fallback: number): number =>
      text === undefined
        ? fallback
        : typeof text === 'string' && /^[0-9]{1,16}$/.test(text)
          ? Number(text)
          : NaN;
    const after = decimal(request.query.after, 0);
    const limit = Math.min(decimal(request.query.limit, 100), 1000);
    if (!Number.isSafeInteger(after) || !Number.isSafeInteger(limit) || after < 0 || limit < 1) {
      return problem(
        reply,
        new BatonError('input_invalid', 'after and limit must be decimal integers (after >= 0, limit >= 1)'),
      );
    }
    return reply.send({ entries: o.service.audit(after, limit) });
  });

  app.get('/ptcl/receipt-key', async (_request, reply) => reply.send(o.receiptJwk));

  // A body Fastify refuses before any handler runs would otherwise get Fastify's own JSON answer: no
  // receipt, nothing audited. Every answer to a leased request, recovery or approval carries a signed
  // receipt (docs/leases.md §6; draft §5 auditable rejection receipts), so such a request gets the
  // refusal the module gives any unreadable body. Any other error keeps the default handling.
  app.setErrorHandler(async (error, request, reply) => {
    // The ledger's lock stayed taken past its wait on a read (a command answers it itself, signed):
    // typed and retryable, never the driver's SQLITE_BUSY as a 500.
    if (isBatonError(error, 'store_busy')) {
      return problem(reply.header('retry-after', BUSY_RETRY_AFTER_S), error);
    }
    const defect = transportDefect(error);
    const params = request.params as Partial<Record<'id' | 'leaseId', string>>;
    // Fastify's route URL includes the mount prefix.
    const route = request.routeOptions.url;
    if (defect === undefined || request.method !== 'POST') throw error;
    const unread: StagedRequest = { operation: undefined, inversePayload: undefined, defect };
    if (route === `${base}${o.collectionPath}/:id` && params.id !== undefined)
      return mutate(reply, request, params.id, unread);
    if (route === `${base}/ptcl/leases/:leaseId/recover` && params.leaseId !== undefined)
      return recoverLease(reply, params.leaseId, defect);
    if (route === `${base}/ptcl/escrow/:leaseId/approve` && params.leaseId !== undefined) {
      if (!operator(request, reply)) return reply;
      return approveLease(reply, params.leaseId, defect);
    }
    // The wildcard fallbacks, for an id longer than the router's maxParamLength.
    const wild = (r: { head: string; tail: string }): string | undefined =>
      segmentBetween(request, r.head, r.tail);
    if (collectionFallback && route === `${base}${o.collectionPath}/*`) {
      const id = wild(collectionRoute);
      if (id !== undefined) return mutate(reply, request, id, unread);
    }
    if (route === `${base}/ptcl/leases/*`) {
      const id = wild(recoverRoute);
      if (id !== undefined) return recoverLease(reply, id, defect);
    }
    if (route === `${base}/ptcl/escrow/*`) {
      const id = wild(approveRoute);
      if (id !== undefined) {
        if (!operator(request, reply)) return reply;
        return approveLease(reply, id, defect);
      }
    }
    throw error;
  });
  return Promise.resolve();
}
