/**
 * A REAL server for the HTTP tests: a SQLite file in a temp dir, the occurrences service over it,
 * the Fastify app listening on 127.0.0.1 port 0, and fetch. Tokens are created through the same
 * code `baton tokens` uses. Everything is closed and removed after the test.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import type { MissionsService } from '../../src/missions/index.js';
import type { OccurrencesService } from '../../src/occurrences/index.js';
import type { KeyResolver } from '../../src/providers/index.js';
import { buildServer, Metrics } from '../../src/server/index.js';
import { openBaton, type StoreChoice } from '../../src/server/open.js';
import { createToken } from '../../src/server/tokens.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { domainConfig, paymentsProfile, snapshot, T0 } from '../occurrences/helpers.js';

export { domainConfig, paymentsProfile, T0 };

export interface Answer {
  readonly status: number;
  readonly type: string;
  readonly headers: Headers;
  readonly body: JsonObject;
  readonly text: string;
}

export interface Api {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly engine: StoreEngine;
  readonly service: OccurrencesService;
  readonly harness: MissionsService;
  readonly clock: ManualClock;
  readonly metrics: Metrics;
  readonly dir: string;
  readonly admin: string;
  readonly operator: string;
  call(method: string, path: string, opts?: CallOptions): Promise<Answer>;
  /** Every row of every table: equal snapshots mean no state changed. */
  snapshot(): Promise<string>;
}

export interface CallOptions {
  readonly token?: string | undefined;
  readonly body?: unknown;
  /** Raw bytes or text sent as is (with `contentType`, default application/json). */
  readonly raw?: string | Uint8Array;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
}

export async function startApi(
  t: TestContext,
  options: {
    logs?: NodeJS.WritableStream;
    keys?: KeyResolver;
    clock?: ManualClock;
    /** What the server's own reads go through (the service keeps the real engine). */
    wrapEngine?: (engine: StoreEngine) => StoreEngine;
    /** Give the server the domain's signing key, so /v1/continuity answers (routes/continuity.ts). */
    continuity?: boolean;
    /** Folders the Mission issuer registry's `file:` references may name (`baton serve --secret-dir`). */
    secretDirs?: readonly string[];
    /** `baton serve --secure-cookies`: the session cookie is Secure on plain http too. */
    secureCookies?: boolean;
  } = {},
): Promise<Api> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-server-'));
  const clock = options.clock ?? new ManualClock(T0);
  const opened = await openBaton({ kind: 'sqlite', path: join(dir, 'baton.db') }, { clock });
  const metrics = new Metrics();
  const logger = options.logs === undefined ? false : { level: 'info', stream: options.logs };
  const app = buildServer({
    engine: options.wrapEngine?.(opened.engine) ?? opened.engine,
    service: opened.service,
    harness: opened.harness,
    clock,
    metrics,
    logger,
    ...(options.keys !== undefined && { keys: options.keys }),
    ...(options.continuity === true && { signingKey: opened.domainKey.privateKey }),
    ...(options.secretDirs !== undefined && { secretScope: { dirs: options.secretDirs } }),
    ...(options.secureCookies === true && { secureCookies: true }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const deps = { clock, actor: 'test' };
  const admin = (await createToken(opened.engine, { role: 'admin' }, deps)).token;
  const operator = (await createToken(opened.engine, { role: 'operator' }, deps)).token;
  const call = (method: string, path: string, opts: CallOptions = {}): Promise<Answer> =>
    request(url, method, path, opts);
  return {
    url,
    app,
    engine: opened.engine,
    service: opened.service,
    harness: opened.harness,
    clock,
    metrics,
    dir,
    admin,
    operator,
    call,
    snapshot: () => snapshot(opened),
  };
}

/** A server on `choice` (either engine, the system clock) and one admin token: closed after the test. */
export async function serveWithAdmin(
  t: TestContext,
  choice: StoreChoice,
): Promise<{ readonly url: string; readonly admin: string }> {
  const opened = await openBaton(choice);
  const app = buildServer({ engine: opened.engine, service: opened.service });
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const clock = { wallMs: () => Date.now(), monotonicMs: () => performance.now() };
  const admin = (await createToken(opened.engine, { role: 'admin' }, { clock, actor: 'test' })).token;
  return { url, admin };
}

export async function request(
  url: string,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
  let body: string | Uint8Array | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(`${url}${path}`, { method, headers, body });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const parsed = type.includes('json') && text !== '' ? (JSON.parse(text) as JsonObject) : {};
  return { status: res.status, type, headers: res.headers, body: parsed, text };
}

/** Assert an RFC 9457 problem with this code and status. */
export function assertProblem(a: Answer, status: number, code: string): void {
  assert.equal(a.status, status, `expected ${status} ${code}, got ${a.status} ${a.text}`);
  assert.match(a.type, /^application\/problem\+json/);
  assert.equal(a.body['code'], code);
  assert.equal(a.body['status'], status);
  assert.equal(a.body['type'], `urn:baton:problem:${code}`);
  assert.equal(typeof a.body['title'], 'string');
  assert.equal(typeof a.body['detail'], 'string');
}

/** Domain, profile and a budget, set up over HTTP. */
export async function setupOverHttp(api: Api): Promise<void> {
  const d = await api.call('PUT', '/v1/domain', { token: api.admin, body: domainConfig() });
  assert.equal(d.status, 200, d.text);
  const p = await api.call('POST', '/v1/profiles', { token: api.operator, body: paymentsProfile() });
  assert.equal(p.status, 200, p.text);
  const a = await api.call('POST', '/v1/authorities', {
    token: api.operator,
    body: { id: 'payouts', unit: 'EUR-cents', total: 100_000 },
  });
  assert.equal(a.status, 200, a.text);
}

export async function takeover(api: Api, lineage: string): Promise<string> {
  const r = await api.call('POST', `/v1/lineages/${lineage}/takeover`, { token: api.operator });
  assert.equal(r.status, 201, r.text);
  return r.body['credential'] as string;
}

export function createBody(key: string, amount = 1_000): JsonObject {
  return {
    creationKey: key,
    provider: { profileId: 'sandbox-payments', profileVersion: '2026-01-01' },
    request: { amount, currency: 'EUR', destination: 'acct_dest_42' },
    authority: { id: 'payouts', amount },
  };
}

export async function createOccurrence(api: Api, credential: string, key: string): Promise<JsonObject> {
  const r = await api.call('POST', '/v1/occurrences', { token: credential, body: createBody(key) });
  assert.equal(r.status, 201, r.text);
  return r.body['occurrence'] as JsonObject;
}

/** The string member `name` of a JSON object (fails the test when it is missing or not a string). */
export function str(o: JsonObject, name = 'id'): string {
  const v = o[name];
  assert.equal(typeof v, 'string', `${name} is a string`);
  return v as string;
}
