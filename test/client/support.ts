/**
 * Shared setup for the client contract: the REAL sandbox provider on 127.0.0.1:0, its checked-in
 * profile (profiles/sandbox-payments.json) re-pinned to it, src/providers' HttpProviderAdapter and
 * status sources, and a REAL SQLite file in a temp dir.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { BatonClient, Operation, ProviderAdapter } from '../../src/client/index.js';
import type { Clock } from '../../src/core/clock.js';
import type { JsonObject } from '../../src/core/json.js';
import {
  BYPASS_PATH_KINDS,
  type EntryTicket,
  type ObserveResult,
  type ProviderProfile,
} from '../../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  recordReading,
  sandboxDeployment,
  sandboxEntryUrl,
  staticKeys,
  StatusSources,
  type KeyResolver,
  type SandboxProvider,
  type SendResult,
} from '../../src/providers/index.js';
import { openOccurrencesOnSqlite, type OccurrencesOnSqlite } from '../../src/store/index.js';

export const AUTHORITY = 'payouts';

export interface Provider {
  readonly sandbox: SandboxProvider;
  /** The checked-in sandbox profile, deployed to this sandbox's URL and key. */
  readonly profile: ProviderProfile;
  readonly keys: KeyResolver;
}

export async function startSandbox(t: TestContext): Promise<Provider> {
  const secret = randomBytes(32);
  const sandbox = createSandboxProvider({ signing: 'hmac', hmacSecret: secret });
  await sandbox.listen(0, '127.0.0.1');
  t.after(() => sandbox.close());
  const deployment = sandboxDeployment(sandbox);
  const profile = deployProfile(loadProfile('sandbox-payments'), deployment);
  return { sandbox, profile, keys: staticKeys({ [deployment.hmacSecretId ?? '']: secret }) };
}

/** Counts every send; wraps src/providers' HttpProviderAdapter unless given another adapter. */
export class CountingAdapter implements ProviderAdapter {
  calls = 0;
  readonly #inner: ProviderAdapter;

  constructor(inner: Provider | ProviderAdapter) {
    this.#inner =
      'sandbox' in inner
        ? new HttpProviderAdapter(inner.profile, {
            entryUrl: sandboxEntryUrl(inner.sandbox.url),
            keys: inner.keys,
          })
        : inner;
  }

  send(ticket: EntryTicket): Promise<{ acknowledgement: SendResult['acknowledgement'] }> {
    this.calls += 1;
    return this.#inner.send(ticket) as Promise<SendResult>;
  }
}

/** Sends for real, then throws: an adapter that failed after the provider applied the request. */
export class ThrowingAfterSend extends CountingAdapter {
  override async send(ticket: EntryTicket): Promise<never> {
    await super.send(ticket);
    throw new Error('adapter crashed after sending');
  }
}

/** Sends for real, then never answers: the worker process "crashed" mid-call. */
export class HangingAdapter extends CountingAdapter {
  /** Resolves with the occurrence id once the provider has answered (to nobody). */
  readonly sent: Promise<string>;
  #sent: (occurrenceId: string) => void = () => undefined;

  constructor(inner: Provider) {
    super(inner);
    this.sent = new Promise((resolve) => (this.#sent = resolve));
  }

  override async send(ticket: EntryTicket): Promise<never> {
    await super.send(ticket);
    this.#sent(ticket.occurrence.id);
    return new Promise<never>(() => undefined);
  }
}

/** Baton's trusted status-source layer (src/providers): a by-key lookup, authenticated, observed. */
export async function reconcileByKey(
  store: Store,
  occurrenceId: string,
  p: Provider,
): Promise<ObserveResult> {
  const { occurrence } = await store.service.getOccurrence(occurrenceId);
  const reading = await new StatusSources({ keys: p.keys }).query(p.profile, occurrence, 'by-key');
  return recordReading(store.service, reading);
}

export function domainConfig(): JsonObject {
  return {
    id: 'client-contract',
    limits: {
      maxPendingPerLineage: 10,
      maxInFlightPerLineage: 10,
      maxPendingPerDomain: 100,
      maxInFlightPerDomain: 100,
      entryWindowSeconds: 300,
    },
    bypassPaths: BYPASS_PATH_KINDS.map((kind) => ({
      kind,
      status: 'unknown',
      description: 'not inventoried in tests',
    })),
  };
}

export interface Store extends OccurrencesOnSqlite {
  readonly path: string;
}

/**
 * A configured domain in a real SQLite file: the operator's part, which the SDK does not do.
 * `clock`: the service's and harness's time (default the system clock), for tests that move it.
 */
export async function openStore(t: TestContext, p: Provider, total = 100_000, clock?: Clock): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-client-'));
  const path = join(dir, 'baton.db');
  const opened = await openOccurrencesOnSqlite(path, clock === undefined ? {} : { clock });
  t.after(async () => {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await opened.service.configureDomain(domainConfig() as never);
  await opened.service.registerProfile(JSON.parse(JSON.stringify(p.profile)));
  await opened.service.createAuthority({ id: AUTHORITY, unit: 'EUR-cents', total });
  return { ...opened, path };
}

export type Op = (creationKey: string, amount?: number) => Operation;

/** Payments under the deployed profile (its version carries the deployment's tag). */
export function payments(p: Provider): Op {
  return (creationKey, amount = 1_250) => ({
    creationKey,
    provider: { profileId: p.profile.id, profileVersion: p.profile.version },
    request: { amount, currency: 'eur', payee: 'acme-supplies', invoice: `inv-${creationKey}` },
    authority: { id: AUTHORITY, amount },
  });
}

export interface Env {
  readonly sandbox: SandboxProvider;
  readonly provider: Provider;
  readonly op: Op;
  readonly store: Store;
  readonly client: BatonClient;
}

export type MakeEnv = (t: TestContext, options?: { total?: number }) => Promise<Env>;
