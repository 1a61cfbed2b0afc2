/**
 * A real world for the provider tests: a SQLite file in a temp dir with the occurrences service,
 * the sandbox over HTTP on 127.0.0.1:0, the checked-in profile deployed to that sandbox, the HTTP
 * adapter and the status sources. The sandbox and Baton share one ManualClock unless told otherwise.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import Fastify from 'fastify';
import { ManualClock } from '../../src/core/clock.js';
import type {
  EntryTicket,
  ObserveResult,
  OccurrencesService,
  OccurrenceView,
  ProviderProfile,
  RegisteredProfile,
} from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  recordSend,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  StatusSources,
  type KeyResolver,
  type SandboxOptions,
  type SandboxProfileName,
  type SandboxProvider,
  type SendResult,
  type StatusSourcesOptions,
  webhookReceiver,
  type WebhookReceiverOptions,
  type WebhookRecorded,
} from '../../src/providers/index.js';
import { openOccurrencesOnSqlite, type OccurrencesOnSqlite } from '../../src/store/index.js';
import { domainConfig } from '../occurrences/helpers.js';
import { waitUntil } from '../support/wait.js';

export const ACCOUNT = 'acct_sandbox';
export const ADMIN = 'admin-token-for-provider-tests';
export const WEBHOOK_PATH = '/hooks/sandbox-payments';

export function admin(url: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

export interface WorldOptions {
  readonly sandbox?: SandboxOptions;
  /** A separate clock for the sandbox (default: the world's own clock). */
  readonly sandboxClock?: ManualClock;
  readonly sources?: Partial<StatusSourcesOptions>;
  readonly edit?: (p: ProviderProfile) => ProviderProfile;
  readonly limits?: Partial<Record<string, number>>;
  readonly timeoutMs?: number;
  readonly profileName?: SandboxProfileName;
  /** Start Baton's webhook receiver and point the sandbox's webhooks at it. */
  readonly webhook?: boolean;
}

export interface World extends OccurrencesOnSqlite {
  readonly clock: ManualClock;
  readonly svc: OccurrencesService;
  readonly sandbox: SandboxProvider;
  readonly url: string;
  readonly profile: RegisteredProfile;
  readonly keys: KeyResolver;
  readonly hmacSecret: Buffer;
  readonly adapter: HttpProviderAdapter;
  readonly sources: StatusSources;
  readonly domainId: string;
  readonly recorded: WebhookRecorded[];
  readonly receiverUrl: string | undefined;
  credential: string;
}

async function startReceiver(
  t: TestContext,
  options: Omit<WebhookReceiverOptions, 'path' | 'sourceId' | 'onRecorded'>,
  recorded: WebhookRecorded[],
): Promise<string> {
  const app = Fastify();
  await app.register(webhookReceiver, {
    ...options,
    path: WEBHOOK_PATH,
    sourceId: 'webhook',
    onRecorded: (r) => recorded.push(r),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export async function openWorld(t: TestContext, options: WorldOptions = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-prov-'));
  const clock = new ManualClock(Date.now());
  const hmacSecret = Buffer.alloc(32, 9);
  const sandbox = createSandboxProvider({
    adminToken: ADMIN,
    hmacSecret,
    clock: options.sandboxClock ?? clock,
    ...options.sandbox,
  });
  const url = await sandbox.listen(0);
  const opened = await openOccurrencesOnSqlite(join(dir, 'baton.db'), { clock });
  t.after(async () => {
    await sandbox.close();
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const svc = opened.service;
  const domain = await svc.configureDomain(domainConfig(options.limits) as never);
  const keys = staticKeys({ [sandboxDeployment(sandbox).hmacSecretId!]: hmacSecret });
  const recorded: WebhookRecorded[] = [];
  const pinned: { profile?: RegisteredProfile } = {};
  const receiverUrl = options.webhook
    ? await startReceiver(
        t,
        { profile: () => pinned.profile, domainId: domain.id, service: svc, keys, clock },
        recorded,
      )
    : undefined;
  if (receiverUrl !== undefined)
    await admin(url, 'PUT', '/admin/webhooks', { urls: [receiverUrl + WEBHOOK_PATH] });
  const deployed = deployProfile(
    loadProfile(options.profileName ?? 'sandbox-payments'),
    sandboxDeployment(sandbox, receiverUrl),
  );
  const profile = await svc.registerProfile(options.edit ? options.edit(deployed) : deployed);
  pinned.profile = profile;
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 1_000_000 });
  const adapter = new HttpProviderAdapter(profile.document, {
    entryUrl: sandboxEntryUrl(url),
    keys,
    clock,
    timeoutMs: options.timeoutMs ?? 5_000,
  });
  const sources = new StatusSources({ keys, clock, ...options.sources });
  const { credential } = await svc.takeover({ lineage: 'invoice-agent' });
  return {
    ...opened,
    clock,
    svc,
    sandbox,
    url,
    profile,
    keys,
    hmacSecret,
    adapter,
    sources,
    domainId: domain.id,
    recorded,
    receiverUrl,
    credential,
  };
}

export function paymentRequest(invoice: string, amount = 1250): Record<string, string | number> {
  return { amount, currency: 'eur', payee: 'acme-supplies', invoice };
}

export async function createOcc(w: World, invoice: string, amount = 1250): Promise<OccurrenceView> {
  const { occurrence } = await w.svc.create({
    credential: w.credential,
    creationKey: invoice,
    provider: { profileId: w.profile.id, profileVersion: w.profile.version },
    request: paymentRequest(invoice, amount),
    authority: { id: 'payouts', amount },
  });
  return occurrence;
}

export interface Paid {
  readonly ticket: EntryTicket;
  readonly sent: SendResult;
  readonly ack: ObserveResult;
  readonly key: string;
}

/** create + enter + send once (with sandbox fault rules on the native key) + record the answer. */
export async function pay(w: World, invoice: string, faults: readonly string[] = []): Promise<Paid> {
  const occurrence = await createOcc(w, invoice);
  const ticket = await w.svc.enter({ credential: w.credential, occurrenceId: occurrence.id });
  const key = ticket.nativeKey!;
  for (const fault of faults) w.sandbox.addFault({ key }, fault);
  const sent = await w.adapter.send(ticket);
  const ack = await recordSend(w.svc, sent);
  return { ticket, sent, ack, key };
}

/** Ask one source of the world's profile and record the answer. */
export async function ask(w: World, occurrenceId: string, source: string): Promise<ObserveResult> {
  const { occurrence } = await w.svc.getOccurrence(occurrenceId);
  const reading = await w.sources.query(w.profile.document, occurrence, source);
  return w.svc.observe(reading.observation);
}

export async function entries(w: World, occurrenceId: string): Promise<number> {
  const { evidence } = await w.svc.getOccurrence(occurrenceId);
  return evidence.filter((e) => e.type === 'provider_entered').length;
}

/** Wait (without timing anything) until the sandbox holds no request with this key in flight. */
export async function settled(w: World, key: string): Promise<void> {
  await waitUntil(
    `the sandbox to settle ${key}`,
    async () => {
      const res = await fetch(`${w.url}/admin/effects/${encodeURIComponent(key)}`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      return !((await res.json()) as { in_flight: boolean }).in_flight;
    },
    { pollMs: 1 },
  );
}
