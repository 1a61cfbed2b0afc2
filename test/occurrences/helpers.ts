/**
 * Shared setup for the occurrences tests: a REAL SQLite file in a temp dir, a manual clock, a
 * realistic payments-like provider profile, and a SIMULATED provider (a call counter standing in
 * for the HTTP sandbox, which comes with src/providers).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { sha256HexTag } from '../../src/core/digest.js';
import type { JsonObject } from '../../src/core/json.js';
import { OccurrencesService, type EntryTicket, type ObservationInput } from '../../src/occurrences/index.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import {
  migrate,
  occurrencesUnitOfWork,
  openOccurrencesOnSqlite,
  type OccurrencesOnSqlite,
} from '../../src/store/index.js';
import type { EngineUnderTest } from '../store/engines.js';

export const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
export const ACCOUNT = 'acct_sandbox_001';
export const ENVIRONMENT = 'sandbox';
export const WEBHOOK_KEY = Buffer.alloc(32, 7).toString('base64url');
export const WEBHOOK_KID = sha256HexTag(Buffer.from(WEBHOOK_KEY, 'base64url'));

/** A payments-like profile: pending→accepted, succeeded→success, failed→final_failure (no no-effect),
 * canceled_before_processing→not_accepted WITH no-effect; anything else unmapped. */
export function paymentsProfile(overrides: JsonObject = {}): JsonObject {
  return {
    format: 'baton.provider-profile/1',
    id: 'sandbox-payments',
    version: '2026-01-01',
    provider: { name: 'Sandbox Payments', apiVersion: '2026-01-01' },
    account: ACCOUNT,
    environment: ENVIRONMENT,
    request: {
      members: ['amount', 'currency', 'destination', 'memo'],
      required: ['amount', 'currency', 'destination'],
      private: false,
    },
    authority: { amount: 'amount', unit: { member: 'currency', values: { EUR: 'EUR-cents' } } },
    nativeKey: { rule: 'template', template: 'baton:{domain}:{occurrenceId}', header: 'Idempotency-Key' },
    reference: { member: 'id', pattern: '^pay_[A-Za-z0-9]{4,64}$' },
    acknowledgement: {
      authentication: { kind: 'hmac-sha256', secretId: 'sandbox-response-2026' },
      freshnessSeconds: 300,
    },
    statusSources: [
      {
        id: 'by-key',
        kind: 'lookup_by_key',
        url: 'http://127.0.0.1:8787/v1/payments/by-key',
        authentication: { kind: 'hmac-sha256', secretId: 'sandbox-response-2026' },
        retentionSeconds: 7 * 86_400,
        freshnessSeconds: 300,
        completeness: 'exact',
        pagination: 'none',
      },
      {
        id: 'listing',
        kind: 'listing',
        url: 'http://127.0.0.1:8787/v1/payments',
        authentication: { kind: 'hmac-sha256', secretId: 'sandbox-response-2026' },
        retentionSeconds: 30 * 86_400,
        freshnessSeconds: 600,
        completeness: 'paged_to_end',
        pagination: 'cursor',
      },
      {
        id: 'webhook',
        kind: 'webhook',
        url: 'http://127.0.0.1:9000/hooks/sandbox',
        authentication: { kind: 'ed25519', kid: WEBHOOK_KID, publicKey: WEBHOOK_KEY },
        retentionSeconds: 3 * 86_400,
        freshnessSeconds: 3_600,
        completeness: 'best_effort',
        pagination: 'none',
      },
    ],
    statuses: {
      pending: { interpretation: 'accepted', establishesNoEffect: false },
      succeeded: { interpretation: 'success', establishesNoEffect: false },
      failed: { interpretation: 'final_failure', establishesNoEffect: false },
      canceled_before_processing: { interpretation: 'not_accepted', establishesNoEffect: true },
    },
    ...overrides,
  };
}

export function domainConfig(limits: Partial<Record<string, number>> = {}): JsonObject {
  return {
    id: 'test-domain',
    limits: {
      maxPendingPerLineage: 10,
      maxInFlightPerLineage: 10,
      maxPendingPerDomain: 100,
      maxInFlightPerDomain: 100,
      entryWindowSeconds: 300,
      ...limits,
    },
    bypassPaths: [
      { kind: 'direct', status: 'present', description: 'the sandbox API key also works without Baton' },
      { kind: 'administrator', status: 'present', description: 'the sandbox dashboard can create payments' },
      { kind: 'break-glass', status: 'absent', description: 'no break-glass credential is issued' },
      {
        kind: 'queued',
        status: 'unknown',
        description: 'provider-side scheduled payments are not inventoried',
      },
      { kind: 'alternate-protocol', status: 'absent', description: 'no file or batch interface is enabled' },
      {
        kind: 'system-of-record',
        status: 'unknown',
        description: 'ledger adjustments are outside this domain',
      },
    ],
  };
}

export interface Harness extends OccurrencesOnSqlite {
  readonly dir: string;
  readonly path: string;
  readonly clock: ManualClock;
  readonly svc: OccurrencesService;
}

export async function openHarness(
  t: TestContext,
  path?: string,
  clock = new ManualClock(T0),
): Promise<Harness> {
  const dir = path === undefined ? mkdtempSync(join(tmpdir(), 'baton-occ-')) : '';
  const file = path ?? join(dir, 'baton.db');
  const opened = await openOccurrencesOnSqlite(file, { clock });
  t.after(async () => {
    await opened.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });
  return { ...opened, dir, path: file, clock, svc: opened.service };
}

/** Domain + profile + one authority budget. */
export async function setupDomain(
  h: Harness,
  opts: { total?: number; limits?: Partial<Record<string, number>> } = {},
) {
  await h.svc.configureDomain(domainConfig(opts.limits) as never);
  const profile = await h.svc.registerProfile(paymentsProfile());
  await h.svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: opts.total ?? 100_000 });
  return profile;
}

/**
 * The occurrences service on a migrated store of engine `e` (a both-engines test), set up as
 * `setupDomain` does — the domain, the payments profile, a `payouts` budget of `total` EUR-cents —
 * and a generation of lineage `invoice-agent`.
 */
export async function serviceOn(t: TestContext, e: EngineUnderTest, total: number) {
  const store = await e.open(t);
  await migrate(store.engine);
  const pair = generateEd25519KeyPair();
  const svc = new OccurrencesService({
    uow: occurrencesUnitOfWork(store.engine),
    domainKey: { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') },
    clock: new ManualClock(T0),
  });
  await svc.configureDomain(domainConfig() as never);
  await svc.registerProfile(paymentsProfile());
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total });
  const g = await svc.takeover({ lineage: 'invoice-agent' });
  return { store, svc, g };
}

export function createInput(credential: string, key: string, amount = 1_000, extra: JsonObject = {}) {
  return {
    credential,
    creationKey: key,
    provider: { profileId: 'sandbox-payments', profileVersion: '2026-01-01' },
    request: { amount, currency: 'EUR', destination: 'acct_dest_42', ...extra },
    authority: { id: 'payouts', amount },
  };
}

/** SIMULATED provider: applies a payment per native key and counts how often each key was sent. */
export class SimulatedProvider {
  readonly calls = new Map<string, number>();
  readonly effects = new Map<string, number>();

  send(ticket: EntryTicket): { id: string; status: string } {
    const key = ticket.nativeKey ?? 'none';
    this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
    // A native idempotency key: the provider applies the effect at most once per key.
    if (!this.effects.has(key)) this.effects.set(key, 1);
    return { id: `pay_${Buffer.from(key).toString('hex').slice(-16)}`, status: 'pending' };
  }

  get totalCalls(): number {
    return [...this.calls.values()].reduce((a, b) => a + b, 0);
  }
}

/** An authenticated, exactly bound observation; override any member to break one property. */
export function observation(
  ticket: Pick<EntryTicket, 'nativeKey' | 'requestDigest'> & { occurrence: { id: string } },
  nativeStatus: string | null,
  at: number,
  overrides: Partial<ObservationInput> = {},
): ObservationInput {
  return {
    occurrenceId: ticket.occurrence.id,
    source: 'by-key',
    observedAt: new Date(at).toISOString(),
    result: nativeStatus === null ? 'not_found' : 'found',
    ...(nativeStatus === null ? {} : { nativeStatus }),
    authentication: { verified: true, pin: 'sandbox-response-2026' },
    carried: {
      account: ACCOUNT,
      environment: ENVIRONMENT,
      nativeKey: ticket.nativeKey ?? undefined,
      requestDigest: ticket.requestDigest,
    },
    complete: true,
    ...overrides,
  };
}

export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.equal(
      (e as { code?: string }).code,
      code,
      `expected ${code}, got ${String((e as Error).message)}`,
    );
    return true;
  });
}

/** The signed answer to the entry call, as the acknowledgement input (no `source`). */
export function acknowledgement(
  ticket: Pick<EntryTicket, 'nativeKey' | 'requestDigest'> & { occurrence: { id: string } },
  answer: { id: string; status: string },
  at: number,
  overrides: Partial<ObservationInput> = {},
) {
  const { source: _source, ...rest } = observation(ticket, answer.status, at, {
    response: answer,
    ...overrides,
  });
  return rest;
}

/** Every row of every table, as text: two equal snapshots mean nothing changed. */
export async function snapshot(h: Pick<Harness, 'engine'>): Promise<string> {
  return h.engine.read(async (ex) => {
    const tables = await ex.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    );
    const parts: string[] = [];
    for (const { name } of tables) {
      // Rows sorted as text, not by rowid: a WITHOUT ROWID table has none (migration 21).
      const rows = (await ex.all(`SELECT * FROM "${name}"`)).map((r) => JSON.stringify(r)).sort();
      parts.push(`${name}:${rows.join(',')}`);
    }
    return parts.join('\n');
  });
}

/** The types of an occurrence's evidence events, oldest first. */
export async function eventTypes(h: Harness, occurrenceId: string): Promise<string[]> {
  return (await h.svc.getOccurrence(occurrenceId)).evidence.map((e) => e.type);
}

export async function entryCount(h: Harness, occurrenceId: string): Promise<number> {
  return (await eventTypes(h, occurrenceId)).filter((t) => t === 'provider_entered').length;
}

/** create + enter; returns the entry ticket. */
export async function createAndEnter(h: Harness, credential: string, key: string, amount = 1_000) {
  const created = await h.svc.create(createInput(credential, key, amount));
  return h.svc.enter({ credential, occurrenceId: created.occurrence.id });
}
