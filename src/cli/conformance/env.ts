/**
 * The conformance world: the real occurrences service on a SQLite file in a temp dir (or on a
 * scratch PostgreSQL database created for the run and dropped after it), the sandbox
 * provider over HTTP on 127.0.0.1:0, Baton's webhook receiver, the checked-in profiles deployed to
 * that sandbox, the HTTP adapter and the status sources. One ManualClock drives Baton and the
 * sandbox, so retention and freshness cases are exact. Every secret the run creates is collected so
 * the report can be audited for leaks before it is written.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { ManualClock } from '../../core/clock.js';
import { BatonError } from '../../core/errors.js';
import type { EntryTicket, RegisteredProfile } from '../../occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  StatusSources,
  webhookReceiver,
  type KeyResolver,
  type SandboxProvider,
  type WebhookRecorded,
} from '../../providers/index.js';
import type { MissionsService, StatusFetcher } from '../../missions/index.js';
import type { OccurrencesService } from '../../occurrences/index.js';
import type { StoreEngine } from '../../store/index.js';
import { openOccurrencesOn, openOccurrencesOnSqlite, openPostgresEngine } from '../../store/index.js';
import { createScratchDatabase } from '../../store/postgres-scratch.js';
import { CONFORMANCE_DOMAIN } from './domain.js';

export const WEBHOOK_PATH = '/hooks/sandbox-payments';

export interface Env {
  readonly svc: OccurrencesService;
  /** The harness gating governed entry (the harness suite drives it; the AOC cases never bind). */
  readonly harness: MissionsService;
  readonly engine: StoreEngine;
  readonly clock: ManualClock;
  readonly sandbox: SandboxProvider;
  readonly adminToken: string;
  readonly keys: KeyResolver;
  readonly profile: RegisteredProfile;
  readonly ed25519Profile: RegisteredProfile;
  readonly sources: StatusSources;
  readonly recorded: WebhookRecorded[];
  /** Credentials, the HMAC secret, the admin token and raw request bodies: never in the report. */
  readonly secrets: Set<string>;
  adapterFor(ticket: EntryTicket): HttpProviderAdapter;
  close(): Promise<void>;
}

async function startReceiver(
  svc: OccurrencesService,
  keys: KeyResolver,
  clock: ManualClock,
  profile: () => RegisteredProfile | undefined,
  recorded: WebhookRecorded[],
): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify({ logger: false });
  await app.register(webhookReceiver, {
    path: WEBHOOK_PATH,
    profile,
    sourceId: 'webhook',
    domainId: CONFORMANCE_DOMAIN.id,
    service: svc,
    keys,
    clock,
    onRecorded: (r) => recorded.push(r),
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

function noteSecret(secrets: Set<string>, bytes: Buffer): void {
  for (const encoding of ['base64url', 'base64', 'hex'] as const) secrets.add(bytes.toString(encoding));
}

/** Close everything opened so far, newest first (also when opening fails half-way). */
class Closers {
  readonly #stack: (() => Promise<unknown>)[] = [];

  push(close: () => Promise<unknown>): void {
    this.#stack.push(close);
  }

  async closeAll(): Promise<void> {
    for (const close of this.#stack.reverse()) await close();
  }
}

/** Where the run keeps its state: a SQLite file in the temp dir, or a scratch database on a server. */
export type ConformanceStore =
  | { readonly kind: 'sqlite' }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      readonly scratch?: string;
      /** Told the scratch database's name once it exists (the run prints it). */
      readonly onScratch?: (name: string) => void;
    };

/** The store a run's options name (`--engine`, `--postgres`); `scratch` names the harness suite's database. */
export function conformanceStore(
  options: {
    readonly engine?: 'sqlite' | 'postgres';
    readonly postgresUrl?: string;
    readonly onScratch?: (name: string) => void;
  },
  scratch?: string,
): ConformanceStore {
  if ((options.engine ?? 'sqlite') === 'sqlite') return { kind: 'sqlite' };
  if (options.postgresUrl === undefined) {
    throw new BatonError('usage', 'the PostgreSQL engine needs a server URL (--postgres URL)');
  }
  return {
    kind: 'postgres',
    url: options.postgresUrl,
    ...(scratch !== undefined && { scratch }),
    ...(options.onScratch !== undefined && { onScratch: options.onScratch }),
  };
}

export interface EnvOptions {
  /** The harness's Status fetch (the harness suite's issuer); default none. */
  readonly fetchStatus?: StatusFetcher;
}

async function openService(
  dir: string,
  clock: ManualClock,
  store: ConformanceStore,
  closers: Closers,
  o: EnvOptions,
): Promise<{ svc: OccurrencesService; harness: MissionsService; engine: StoreEngine }> {
  const options = { clock, ...(o.fetchStatus !== undefined && { fetchStatus: o.fetchStatus }) };
  if (store.kind === 'sqlite') {
    const opened = await openOccurrencesOnSqlite(join(dir, 'conformance.db'), options);
    closers.push(() => opened.close());
    return { svc: opened.service, harness: opened.harness, engine: opened.engine };
  }
  const scratch = await createScratchDatabase(store.url, store.scratch ?? 'conformance');
  closers.push(() => scratch.drop());
  store.onScratch?.(scratch.name);
  const engine = openPostgresEngine(scratch.url);
  closers.push(() => engine.close());
  const { service, harness } = await openOccurrencesOn(engine, join(dir, 'conformance'), options);
  return { svc: service, harness, engine };
}

export async function openEnv(
  dir: string,
  store: ConformanceStore = { kind: 'sqlite' },
  o: EnvOptions = {},
  clock: ManualClock = new ManualClock(Date.now()),
): Promise<Env> {
  const closers = new Closers();
  try {
    return await open(dir, store, closers, o, clock);
  } catch (error) {
    await closers.closeAll();
    throw error;
  }
}

async function open(
  dir: string,
  store: ConformanceStore,
  closers: Closers,
  o: EnvOptions,
  clock: ManualClock,
): Promise<Env> {
  const hmacSecret = randomBytes(32);
  const adminToken = randomBytes(24).toString('base64url');
  const secrets = new Set<string>([adminToken]);
  noteSecret(secrets, hmacSecret);
  const sandbox = createSandboxProvider({ hmacSecret, adminToken, clock });
  closers.push(() => sandbox.close());
  const url = await sandbox.listen(0, '127.0.0.1');
  const { svc, harness, engine } = await openService(dir, clock, store, closers, o);
  await svc.configureDomain(CONFORMANCE_DOMAIN);
  const deployment = sandboxDeployment(sandbox);
  const keys = staticKeys({ [deployment.hmacSecretId ?? '']: hmacSecret });
  const pinned: { profile?: RegisteredProfile } = {};
  const recorded: WebhookRecorded[] = [];
  const receiver = await startReceiver(svc, keys, clock, () => pinned.profile, recorded);
  closers.push(() => receiver.app.close());
  await fetch(`${url}/admin/webhooks`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ urls: [receiver.url + WEBHOOK_PATH] }),
  });
  const deployed = { ...deployment, webhookOrigin: receiver.url };
  const profile = await svc.registerProfile(deployProfile(loadProfile('sandbox-payments'), deployed));
  pinned.profile = profile;
  const ed25519Profile = await svc.registerProfile(
    deployProfile(loadProfile('sandbox-payments-ed25519'), deployed),
  );
  const adapters = new Map(
    [profile, ed25519Profile].map((p) => [
      p.digest,
      new HttpProviderAdapter(p.document, { entryUrl: sandboxEntryUrl(url), keys, clock }),
    ]),
  );
  return {
    svc,
    harness,
    engine,
    clock,
    sandbox,
    adminToken,
    keys,
    profile,
    ed25519Profile,
    sources: new StatusSources({ keys, clock }),
    recorded,
    secrets,
    adapterFor(ticket) {
      const adapter = adapters.get(ticket.profile.digest as RegisteredProfile['digest']);
      if (adapter === undefined) throw new Error('no adapter for this profile');
      return adapter;
    },
    close: () => closers.closeAll(),
  };
}
