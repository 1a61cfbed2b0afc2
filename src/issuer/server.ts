/**
 * `baton issuer`: the reference Mission issuer (DESIGN.md §5) — AS metadata, JWKS with rotation
 * and a retired-key archive, Mission Status, Mission Lifecycle, lifecycle SETs pushed or polled,
 * a token endpoint for Mission-bound `at+jwt`s, and fault switches. An edge like `src/sor/`, built
 * for development and tests only: it is labelled so in its metadata and output, keeps everything
 * in memory, and is not an authorization server for production.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../core/clock.js';
import { parseStrictJson } from '../core/json.js';
import { Delivery, type DeliveryOptions } from './delivery.js';
import { registerFormParser } from './form.js';
import { IssuerKeyRing, type IssuerAlg } from './keys.js';
import { registerAdminRoutes } from './routes-admin.js';
import { REFERENCE_LABEL, registerPublicRoutes } from './routes-public.js';
import { IssuerState, type IssuerConfig } from './state.js';

export { PATHS, REFERENCE_LABEL } from './routes-public.js';
export { STATUS_FAULTS, SET_FAULTS, type StatusFault, type SetFault } from './faults.js';

export interface IssuerOptions extends Partial<IssuerConfig>, DeliveryOptions {
  readonly port?: number;
  readonly host?: string;
  readonly alg?: IssuerAlg;
  readonly adminToken?: string;
  readonly clock?: Clock;
  /** The issuer identifier; default `http://HOST:PORT` once listening. */
  readonly publicOrigin?: string;
}

export interface RunningIssuer {
  readonly url: string;
  readonly origin: string;
  readonly adminToken: string;
  readonly app: FastifyInstance;
  readonly state: IssuerState;
  readonly label: string;
  close(): Promise<void>;
}

const DEFAULTS: IssuerConfig = {
  relianceSec: 60,
  setLifetimeSec: 300,
  tokenLifetimeSec: 300,
  maxStaleSeconds: 60,
  rateLimitPerMinute: 600,
};

function buildApp(): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024, forceCloseConnections: true });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, raw: Buffer, done) => {
    try {
      done(null, raw.length === 0 ? undefined : parseStrictJson(raw, { maxBytes: 64 * 1024 }));
    } catch (error) {
      done(Object.assign(error as Error, { statusCode: 400 }), undefined);
    }
  });
  registerFormParser(app);
  app.setErrorHandler((error, _request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    const code = status !== undefined && status >= 400 && status < 500 ? status : 500;
    return reply
      .code(code)
      .header('content-type', 'application/json')
      .send(JSON.stringify({ error: code === 500 ? 'server_error' : 'invalid_request' }));
  });
  return app;
}

export async function startIssuer(o: IssuerOptions = {}): Promise<RunningIssuer> {
  const clock = o.clock ?? systemClock;
  const config: IssuerConfig = {
    relianceSec: o.relianceSec ?? DEFAULTS.relianceSec,
    setLifetimeSec: o.setLifetimeSec ?? DEFAULTS.setLifetimeSec,
    tokenLifetimeSec: o.tokenLifetimeSec ?? DEFAULTS.tokenLifetimeSec,
    maxStaleSeconds: o.maxStaleSeconds === undefined ? DEFAULTS.maxStaleSeconds : o.maxStaleSeconds,
    rateLimitPerMinute: o.rateLimitPerMinute ?? DEFAULTS.rateLimitPerMinute,
  };
  const delivery = new Delivery(o);
  const state = new IssuerState(await IssuerKeyRing.create(o.alg ?? 'ES256'), clock, config, delivery);
  const adminToken = o.adminToken ?? randomBytes(24).toString('base64url');
  const app = buildApp();
  registerPublicRoutes(app, state);
  registerAdminRoutes(app, state, adminToken);
  const host = o.host ?? '127.0.0.1';
  await app.listen({ port: o.port ?? 0, host });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  state.origin = (o.publicOrigin ?? url).replace(/\/+$/, '');
  return {
    url,
    origin: state.origin,
    adminToken,
    app,
    state,
    label: REFERENCE_LABEL,
    async close() {
      delivery.close();
      await app.close();
    },
  };
}
