/**
 * createStripeSandbox: `baton sandbox --flavor stripe`, a local server that answers the
 * PaymentIntents and Refunds subset of Stripe's API with Stripe's documented semantics, so the
 * official `stripe` client can be pointed at it (host, port, protocol). Tested against that
 * client and Stripe's own signature helpers — NOT against Stripe's servers (docs/sandbox-stripe.md).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { systemClock, type Clock } from '../../../core/clock.js';
import { BatonError } from '../../../core/errors.js';
import { randomIdSource, type IdSource } from '../../../core/ids.js';
import { stripeError } from './errors.js';
import type { StripeEffect } from './model.js';
import { registerStripeRoutes, sendStripe } from './routes.js';
import { StripeState } from './state.js';
import type { StripeEventRecord } from './webhooks.js';

export interface StripeSandboxOptions {
  /** The API secret key callers authenticate with (default: a fresh `sk_test_…`). */
  readonly secretKey?: string;
  /** The webhook endpoint secret events are signed with (default: a fresh `whsec_…`). */
  readonly webhookSecret?: string;
  readonly webhookUrls?: readonly string[];
  readonly adminToken?: string;
  /** How long an idempotency key is remembered (Stripe: 24 h). */
  readonly idempotencyTtlMs?: number;
  readonly clock?: Clock;
  readonly ids?: IdSource;
}

export interface StripeSandbox {
  readonly app: FastifyInstance;
  readonly secretKey: string;
  readonly webhookSecret: string;
  readonly adminToken: string;
  readonly url: string;
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
  /** Effects applied under one Idempotency-Key: the duplicate oracle. */
  effectCount(idempotencyKey: string): number;
  effects(): readonly StripeEffect[];
  events(): readonly StripeEventRecord[];
  advanceClock(ms: number): void;
  webhooksIdle(): Promise<void>;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The references the shipped Stripe profiles give the secret key and the webhook secret (names in
 * Baton's `baton.credentials/1` file, never the secrets), served so `--pin-to-sandbox` can check them.
 */
export const STRIPE_CREDENTIAL_REFERENCES = {
  secretKey: 'stripe-secret-key',
  webhookSecret: 'stripe-webhook-secret',
} as const;
const BODY_LIMIT = 64 * 1024;

function adminAuthorized(token: string, request: FastifyRequest): boolean {
  const a = Buffer.from(request.headers.authorization ?? '', 'utf8');
  const b = Buffer.from(`Bearer ${token}`, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function registerAdmin(app: FastifyInstance, state: StripeState, token: string): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/admin/') && !adminAuthorized(token, request)) {
      await sendStripe(reply, request, stripeError(401, 'invalid_request_error', 'Invalid admin token.'));
    }
  });
  app.get('/admin/effects', async (request, reply) =>
    sendStripe(reply, request, { status: 200, body: { effects: state.effects } }),
  );
  app.get('/admin/events', async (request, reply) =>
    sendStripe(reply, request, {
      status: 200,
      body: { events: state.webhooks.events.map(({ id, type, deliveries }) => ({ id, type, deliveries })) },
    }),
  );
  app.post('/admin/clock', async (request: FastifyRequest<{ Body: unknown }>, reply) => {
    const ms = (request.body as { advance_ms?: unknown } | undefined)?.advance_ms;
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
      return sendStripe(
        reply,
        request,
        stripeError(400, 'invalid_request_error', 'advance_ms must be a whole number'),
      );
    }
    state.advance(ms);
    return sendStripe(reply, request, { status: 200, body: { now: state.nowSeconds() } });
  });
}

function buildApp(state: StripeState, secretKey: string, adminToken: string): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT, forceCloseConnections: true });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_r, body, done) =>
    done(null, body),
  );
  app.setNotFoundHandler((request, reply) =>
    sendStripe(
      reply,
      request,
      stripeError(
        404,
        'invalid_request_error',
        `Unrecognized request URL (${request.method}: ${request.url.split('?')[0]?.slice(0, 200)}).`,
      ),
    ),
  );
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    const answer =
      status !== undefined && status < 500
        ? stripeError(status, 'invalid_request_error', 'Invalid request.')
        : stripeError(500, 'api_error', 'An unknown error occurred.');
    return sendStripe(reply, request, answer);
  });
  // The discovery document `baton profiles add --pin-to-sandbox` reads (docs/config.md): the
  // origin is where it is asked; no secret, only what the profile pins names them by.
  app.get('/.well-known/baton-sandbox', async (request, reply) =>
    sendStripe(reply, request, {
      status: 200,
      body: {
        flavor: 'stripe',
        environment: 'test',
        verification: {
          channel: { credential: STRIPE_CREDENTIAL_REFERENCES.secretKey },
          'stripe-signature': { secret_id: STRIPE_CREDENTIAL_REFERENCES.webhookSecret },
        },
      },
    }),
  );
  registerAdmin(app, state, adminToken);
  registerStripeRoutes(app, state, secretKey);
  return app;
}

export function createStripeSandbox(options: StripeSandboxOptions = {}): StripeSandbox {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(24).toString('base64url')}`;
  const webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString('base64url')}`;
  const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
  const s = new StripeState({
    clock: options.clock ?? systemClock,
    ids: options.ids ?? randomIdSource,
    idempotencyTtlMs: options.idempotencyTtlMs ?? DAY_MS,
    webhookSecret,
    webhookUrls: options.webhookUrls ?? [],
  });
  const app = buildApp(s, secretKey, adminToken);
  let url: string | undefined;
  return {
    app,
    secretKey,
    webhookSecret,
    adminToken,
    get url() {
      if (url === undefined) throw new BatonError('unavailable', 'the stripe sandbox is not listening');
      return url;
    },
    async listen(port = 0, host = '127.0.0.1') {
      await app.listen({ port, host });
      const address = app.server.address() as AddressInfo;
      url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
      return url;
    },
    async close() {
      s.abort.abort();
      await app.close();
      await s.webhooks.idle();
    },
    effectCount: (key) => s.effectCount(key),
    effects: () => s.effects,
    events: () => s.webhooks.events,
    advanceClock: (ms) => s.advance(ms),
    webhooksIdle: () => s.webhooks.idle(),
  };
}
