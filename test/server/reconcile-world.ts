/**
 * A real world for reconciliation in serve: a Baton server (buildServer over SQLite or one
 * PostgreSQL schema) listening on 127.0.0.1:0, the real sandbox provider over HTTP whose webhooks
 * point at the server's `POST /v1/webhooks/{profileId}`, the checked-in profile deployed to both,
 * and the in-process service for setup. The sandbox and the server share one ManualClock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../src/core/clock.js';
import type { EntryTicket, OccurrencesService, RegisteredProfile } from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  recordSend,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  type KeyResolver,
  type SandboxProvider,
} from '../../src/providers/index.js';
import { buildServer, Metrics } from '../../src/server/index.js';
import { openBaton, type OpenedBaton } from '../../src/server/open.js';
import { ReconcileMetrics } from '../../src/server/reconcile-metrics.js';
import { ReconciliationStore } from '../../src/store/reconciliation.js';
import { domainConfig } from '../occurrences/helpers.js';

export const SANDBOX_ADMIN = 'sandbox-admin-token-reconcile';
export type EngineName = 'sqlite' | 'postgres';

export interface ReconcileWorld {
  readonly clock: ManualClock;
  readonly opened: OpenedBaton;
  readonly svc: OccurrencesService;
  readonly app: FastifyInstance;
  readonly url: string;
  readonly sandbox: SandboxProvider;
  readonly profile: RegisteredProfile;
  readonly keys: KeyResolver;
  readonly secret: Buffer;
  readonly secretId: string;
  readonly hookPath: string;
  readonly metrics: Metrics;
  readonly reconcileMetrics: ReconcileMetrics;
  readonly adapter: HttpProviderAdapter;
  credential: string;
}

export interface WorldOptions {
  readonly engine: EngineName;
  /** The PostgreSQL URL (one fresh schema) when engine is postgres. */
  readonly postgresUrl?: string;
  /** Point the sandbox's webhooks at the server (default true). */
  readonly webhooks?: boolean;
  /** Hooks on the sandbox's own Fastify app, added before it listens (counting lookups, faults). */
  readonly beforeListen?: (sandbox: SandboxProvider) => void;
  /** What the server resolves keys with, given the world's own (default: those keys). */
  readonly serverKeys?: (keys: KeyResolver) => KeyResolver;
  /** The server's structured log (info and up), when a test reads it. */
  readonly logs?: NodeJS.WritableStream;
}

async function openStore(t: TestContext, o: WorldOptions, clock: ManualClock): Promise<OpenedBaton> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-reconcile-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  if (o.engine === 'sqlite') return openBaton({ kind: 'sqlite', path: join(dir, 'baton.db') }, { clock });
  return openBaton(
    { kind: 'postgres', url: o.postgresUrl!, domainKeyFile: join(dir, 'baton.domain-key.pem') },
    { clock },
  );
}

export async function openReconcileWorld(t: TestContext, o: WorldOptions): Promise<ReconcileWorld> {
  const clock = new ManualClock(Date.now());
  const secret = Buffer.alloc(32, 7);
  const sandbox = createSandboxProvider({ adminToken: SANDBOX_ADMIN, hmacSecret: secret, clock });
  o.beforeListen?.(sandbox);
  await sandbox.listen(0, '127.0.0.1');
  t.after(() => sandbox.close());
  const opened = await openStore(t, o, clock);
  const deployment = sandboxDeployment(sandbox);
  const secretId = deployment.hmacSecretId ?? '';
  const keys = staticKeys({ [secretId]: secret });
  const metrics = new Metrics();
  const store = new ReconciliationStore(opened.engine);
  const reconcileMetrics = new ReconcileMetrics(
    () => store.oldestUnresolvedEnteredAt(),
    () => clock.wallMs(),
  );
  const app = buildServer({
    engine: opened.engine,
    service: opened.service,
    clock,
    keys: o.serverKeys?.(keys) ?? keys,
    metrics,
    reconcileMetrics,
    ...(o.logs !== undefined && { logger: { level: 'info', stream: o.logs } }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await opened.close();
  });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const svc = opened.service;
  await svc.configureDomain(domainConfig({ maxInFlightPerLineage: 50, maxPendingPerLineage: 50 }) as never);
  const template = deployProfile(loadProfile('sandbox-payments'), deployment);
  const hookPath = `/v1/webhooks/${template.id}`;
  const document = {
    ...template,
    statusSources: template.statusSources.map((s) =>
      s.kind === 'webhook' ? { ...s, url: url + hookPath } : s,
    ),
  };
  const profile = await svc.registerProfile(document);
  if (o.webhooks !== false) {
    const res = await fetch(`${sandbox.url}/admin/webhooks`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${SANDBOX_ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ urls: [url + hookPath] }),
    });
    if (res.status !== 200) throw new Error(`sandbox webhooks: ${res.status}`);
  }
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 10_000_000 });
  const adapter = new HttpProviderAdapter(profile.document, {
    entryUrl: sandboxEntryUrl(sandbox.url),
    keys,
    clock,
    timeoutMs: 10_000,
  });
  const { credential } = await svc.takeover({ lineage: 'invoice-agent' });
  return {
    clock,
    opened,
    svc,
    app,
    url,
    sandbox,
    profile,
    keys,
    secret,
    secretId,
    hookPath,
    metrics,
    reconcileMetrics,
    adapter,
    credential,
  };
}

/** create + enter one payment of 1250 eur under `invoice`: its entry ticket (nothing sent yet). */
export async function enterPayment(w: ReconcileWorld, invoice: string): Promise<EntryTicket> {
  const { occurrence } = await w.svc.create({
    credential: w.credential,
    creationKey: invoice,
    provider: { profileId: w.profile.id, profileVersion: w.profile.version },
    request: { amount: 1250, currency: 'eur', payee: 'acme-supplies', invoice },
    authority: { id: 'payouts', amount: 1250 },
  });
  return w.svc.enter({ credential: w.credential, occurrenceId: occurrence.id });
}

/** create + enter + send once with sandbox faults on the native key + record the answer. */
export async function pay(
  w: ReconcileWorld,
  invoice: string,
  faults: readonly string[] = [],
): Promise<EntryTicket> {
  const ticket = await enterPayment(w, invoice);
  for (const fault of faults) w.sandbox.addFault({ key: ticket.nativeKey! }, fault);
  const sent = await w.adapter.send(ticket);
  await recordSend(w.svc, sent);
  return ticket;
}

/** The payment as the sandbox reports it now (its lookup by key), for building signed events. */
export async function paymentView(w: ReconcileWorld, key: string): Promise<Record<string, unknown>> {
  const res = await fetch(
    `${w.sandbox.url}/v1/accounts/${w.profile.document.account}/payments/by-key/${encodeURIComponent(key)}`,
  );
  if (res.status !== 200) throw new Error(`lookup ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}
