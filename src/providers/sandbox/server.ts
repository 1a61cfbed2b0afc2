/**
 * createSandboxProvider: the sandbox payments provider (DESIGN.md §4) as a Fastify app with an
 * in-process handle for tests — effectCount(key) is the oracle every duplicate test reads.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../../core/clock.js';
import { BatonError } from '../../core/errors.js';
import { randomIdSource, type IdSource } from '../../core/ids.js';
import { parseStrictJson } from '../../core/json.js';
import { registerAdminRoutes } from './admin-routes.js';
import { registerCreateRoute } from './create-route.js';
import { parseFault, type Fault } from './faults.js';
import { errorAnswer, send } from './http.js';
import {
  createSandboxKeys,
  sandboxPins,
  verificationMaterial,
  type KeyOptions,
  type VerificationMaterial,
} from './keys.js';
import { registerLookupRoutes } from './lookup-routes.js';
import { ENVIRONMENT, type EffectEntry } from './model.js';
import { failureAnswer } from './request.js';
import type { SandboxPin } from './signature.js';
import { SandboxState } from './state.js';

export interface SandboxOptions extends KeyOptions {
  /** Accounts served; the first is the default. */
  accounts?: readonly string[];
  /** The account an `other_account` answer claims. */
  otherAccount?: string;
  adminToken?: string;
  clock?: Clock;
  ids?: IdSource;
  /** Records older than this are pruned from the API (default 24 h). */
  retentionMs?: number;
  /** pending → terminal after this long (default 0: settled before the response). */
  settleDelayMs?: number;
  webhookUrls?: readonly string[];
  /** How often a timer settles due payments when settleDelayMs > 0 (default 100 ms). */
  tickMs?: number;
}

export interface SandboxProvider {
  readonly app: FastifyInstance;
  readonly adminToken: string;
  readonly accounts: readonly string[];
  readonly verification: VerificationMaterial;
  /** The URL it listens on; throws before listen(). */
  readonly url: string;
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
  effectCount(key: string, account?: string): number;
  effects(): readonly EffectEntry[];
  /** The pins an in-process verifier needs (the HMAC pin carries the secret). */
  pins(): SandboxPin[];
  addFault(target: { key: string } | 'next' | 'all', fault: string | Fault, count?: number): void;
  advanceClock(ms: number): void;
  /** Wait for in-flight webhook deliveries. */
  webhooksIdle(): Promise<void>;
}

export const DEFAULT_ACCOUNT = 'acct_sandbox';
const DAY_MS = 24 * 3600 * 1000;
const BODY_LIMIT = 64 * 1024;

function buildApp(state: SandboxState): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT, forceCloseConnections: true });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, raw: Buffer, done) => {
    try {
      done(null, raw.length === 0 ? undefined : parseStrictJson(raw, { maxBytes: BODY_LIMIT }));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addHook('onRequest', (_request, _reply, done) => {
    state.tick();
    done();
  });
  app.setNotFoundHandler((request, reply) =>
    send(state, request, reply, errorAnswer(state, 404, 'no_such_route')),
  );
  app.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    const batonish = error instanceof BatonError || status === undefined || status >= 500;
    const answer = batonish ? failureAnswer(state, error) : errorAnswer(state, status, 'invalid_request');
    return send(state, request, reply, answer);
  });
  // Public verification material (no secret), so a profile can be pinned to this running sandbox
  // (`baton profiles pin --from-sandbox`, docs/config.md). Signed like every other answer.
  app.get('/.well-known/baton-sandbox', (request, reply) =>
    send(state, request, reply, {
      status: 200,
      body: {
        environment: ENVIRONMENT,
        accounts: [...state.accounts],
        verification: verificationMaterial(state.options.keys),
      },
    }),
  );
  registerCreateRoute(app, state);
  registerLookupRoutes(app, state);
  registerAdminRoutes(app, state);
  return app;
}

export function createSandboxProvider(options: SandboxOptions = {}): SandboxProvider {
  const accounts = options.accounts?.length ? [...options.accounts] : [DEFAULT_ACCOUNT];
  const keys = createSandboxKeys(options);
  const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
  const state = new SandboxState({
    accounts,
    otherAccount: options.otherAccount ?? 'acct_other',
    keys,
    clock: options.clock ?? systemClock,
    ids: options.ids ?? randomIdSource,
    retentionMs: options.retentionMs ?? DAY_MS,
    settleDelayMs: options.settleDelayMs ?? 0,
    webhookUrls: options.webhookUrls ?? [],
    adminToken,
  });
  const app = buildApp(state);
  let url: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  return {
    app,
    adminToken,
    accounts,
    verification: verificationMaterial(keys),
    get url() {
      if (url === undefined) throw new BatonError('unavailable', 'the sandbox is not listening');
      return url;
    },
    async listen(port = 0, host = '127.0.0.1') {
      await app.listen({ port, host });
      const address = app.server.address() as AddressInfo;
      url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
      if ((options.settleDelayMs ?? 0) > 0)
        timer = setInterval(() => state.tick(), options.tickMs ?? 100).unref();
      return url;
    },
    async close() {
      clearInterval(timer);
      state.abort.abort();
      await app.close();
      await state.webhooks.close();
    },
    effectCount: (key, account) => state.ledger.effectCount(key, account),
    effects: () => state.ledger.effects(),
    pins: () => sandboxPins(keys),
    addFault(target, fault, count) {
      state.faults.add(target, typeof fault === 'string' ? parseFault(fault) : fault, count);
    },
    advanceClock: (ms) => state.advance(ms),
    webhooksIdle: () => state.webhooks.idle(),
  };
}
