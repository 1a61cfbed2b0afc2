/**
 * Reconciliation inside `baton serve` (issue 13 §8), each beside its ceiling in the same run:
 * - webhook ingestion: signed status events POSTed to a real server's `POST /v1/webhooks/{id}`
 *   (verify the raw bytes + remember the event id + settle the occurrence + append evidence, one
 *   SQLite file) per second, vs raw HMAC-SHA256 verification of the same payloads with
 *   node:crypto — target >= 0.3x;
 * - reconciler lookups: the background reconciler's ticks over unresolved occurrences (claim, one
 *   signed lookup by key at the real sandbox, observe, release) per second, vs the same lookups
 *   sent to the sandbox alone with the same HTTP client and concurrency — target >= 0.8x.
 * Rounds alternate which side goes first; figures are medians of per-round rates. Run by
 * `npm run bench` (scripts/run-bench.mjs runs every dist/bench/*.bench.js) or alone:
 * npm run build && node dist/bench/reconciliation.bench.js
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../src/core/clock.js';
import { formatRfc3339 } from '../src/core/time.js';
import type { EntryTicket, RegisteredProfile } from '../src/occurrences/index.js';
import {
  createSandboxProvider,
  deployProfile,
  HttpProviderAdapter,
  loadProfile,
  recordSend,
  sandboxDeployment,
  sandboxEntryUrl,
  sandboxSignedString,
  signSandboxMessage,
  staticKeys,
  StatusSources,
} from '../src/providers/index.js';
import { exchange } from '../src/providers/http-client.js';
import { BackgroundReconciler } from '../src/server/background-reconciler.js';
import { buildServer } from '../src/server/index.js';
import { openBaton } from '../src/server/open.js';
import { domainConfig } from '../test/occurrences/helpers.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 100);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 4);
const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const dir = mkdtempSync(join(tmpdir(), 'baton-bench-reconcile-'));
const secret = Buffer.alloc(32, 3);
const sandbox = createSandboxProvider({ hmacSecret: secret, adminToken: 'bench-admin' });
await sandbox.listen(0, '127.0.0.1');
const opened = await openBaton({ kind: 'sqlite', path: join(dir, 'baton.db') });
const deployment = sandboxDeployment(sandbox);
const secretId = deployment.hmacSecretId ?? '';
const keys = staticKeys({ [secretId]: secret });
const app = buildServer({ engine: opened.engine, service: opened.service, keys });
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const svc = opened.service;
await svc.configureDomain(
  domainConfig({
    maxInFlightPerLineage: 100_000,
    maxPendingPerLineage: 100_000,
    maxInFlightPerDomain: 100_000,
    maxPendingPerDomain: 100_000,
  }) as never,
);
const template = deployProfile(loadProfile('sandbox-payments'), deployment);
const hookPath = `/v1/webhooks/${template.id}`;
const profile: RegisteredProfile = await svc.registerProfile({
  ...template,
  statusSources: template.statusSources.map((s) =>
    s.kind === 'webhook' ? { ...s, url: url + hookPath } : s,
  ),
});
await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 1_000_000_000 });
const adapter = new HttpProviderAdapter(profile.document, {
  entryUrl: sandboxEntryUrl(sandbox.url),
  keys,
  timeoutMs: 30_000,
});
let credential = (await svc.takeover({ lineage: 'bench' })).credential;
let n = 0;

/** Unresolved occurrences: entered, paid at the sandbox, the answer lost, no webhook sent. */
async function unresolved(count: number): Promise<EntryTicket[]> {
  const out: EntryTicket[] = [];
  for (let i = 0; i < count; i++) {
    const invoice = `inv-bench-${++n}`;
    const { occurrence } = await svc.create({
      credential,
      creationKey: invoice,
      provider: { profileId: profile.id, profileVersion: profile.version },
      request: { amount: 1, currency: 'eur', payee: 'acme', invoice },
      authority: { id: 'payouts', amount: 1 },
    });
    const ticket = await svc.enter({ credential, occurrenceId: occurrence.id });
    sandbox.addFault({ key: ticket.nativeKey! }, 'drop_response_after_apply');
    sandbox.addFault({ key: ticket.nativeKey! }, 'drop_webhook');
    await recordSend(svc, await adapter.send(ticket));
    out.push(ticket);
  }
  // A fresh lineage generation keeps the per-lineage counts small between rounds.
  credential = (await svc.takeover({ lineage: 'bench' })).credential;
  return out;
}

async function pool<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
  return (items.length * 1000) / (performance.now() - start);
}

interface Delivery {
  readonly body: string;
  readonly header: string;
}

async function signedEvents(tickets: readonly EntryTicket[]): Promise<Delivery[]> {
  const key = { kind: 'hmac' as const, secretId, secret };
  const out: Delivery[] = [];
  for (const t of tickets) {
    const res = await exchange({
      method: 'GET',
      url: new URL(`${sandbox.url}/v1/accounts/${profile.document.account}/payments/by-key/${t.nativeKey!}`),
      timeoutMs: 10_000,
    });
    if (!res.ok || res.status !== 200) throw new Error('bench setup: lookup failed');
    const now = Date.now();
    const body = JSON.stringify({
      id: `evt_${t.occurrence.id}`,
      object: 'event',
      type: 'payment.succeeded',
      created_at: formatRfc3339(now),
      data: JSON.parse(res.body) as unknown,
    });
    out.push({
      body,
      header: signSandboxMessage(key, sandboxSignedString({ method: 'POST', path: hookPath, body }), now),
    });
  }
  return out;
}

async function ingest(d: Delivery): Promise<void> {
  const res = await fetch(url + hookPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'sandbox-signature': d.header },
    body: d.body,
  });
  const answer = (await res.json()) as { effective?: boolean };
  if (res.status !== 200 || answer.effective !== true)
    throw new Error(`bench: delivery not settled (${res.status})`);
}

function rawVerify(d: Delivery): void {
  const t = Number(/t=([0-9]+)/.exec(d.header)![1]);
  const v1 = Buffer.from(/v1=([0-9a-f]{64})/.exec(d.header)![1]!, 'hex');
  const expected = createHmac('sha256', secret)
    .update(`${t}.${sandboxSignedString({ method: 'POST', path: hookPath, body: d.body })}`)
    .digest();
  if (!timingSafeEqual(expected, v1)) throw new Error('bench: raw verify failed');
}

function rawRate(deliveries: readonly Delivery[]): number {
  const start = performance.now();
  let count = 0;
  while (performance.now() - start < 200) {
    for (const d of deliveries) rawVerify(d);
    count += deliveries.length;
  }
  return (count * 1000) / (performance.now() - start);
}

async function lookupsAlone(tickets: readonly EntryTicket[]): Promise<number> {
  return pool(tickets, async (t) => {
    const res = await exchange({
      method: 'GET',
      url: new URL(`${sandbox.url}/v1/accounts/${profile.document.account}/payments/by-key/${t.nativeKey!}`),
      timeoutMs: 10_000,
    });
    if (!res.ok || res.status !== 200) throw new Error('bench: lookup failed');
  });
}

async function reconcilerRate(count: number): Promise<number> {
  let asks = 0;
  const bg = new BackgroundReconciler({
    engine: opened.engine,
    service: svc,
    sources: new StatusSources({ keys, clock: systemClock }),
    clock: systemClock,
    everyMs: 1000,
    concurrency: CONCURRENCY,
    batch: count,
    onVisit: (v) => {
      asks += v.asks;
      if (!v.resolved) throw new Error('bench: an occurrence stayed unresolved');
    },
  });
  const start = performance.now();
  const visited = await bg.tick();
  const rate = (asks * 1000) / (performance.now() - start);
  if (visited !== count || asks !== count)
    throw new Error(`bench: ${visited} visited, ${asks} asks of ${count}`);
  return rate;
}

const ingestion: number[] = [];
const raw: number[] = [];
const reconciled: number[] = [];
const alone: number[] = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const tickets = await unresolved(BATCH);
    const deliveries = await signedEvents(tickets);
    const firstRaw = r % 2 === 0;
    if (firstRaw) raw.push(rawRate(deliveries));
    ingestion.push(await pool(deliveries, ingest));
    if (!firstRaw) raw.push(rawRate(deliveries));
    const more = await unresolved(BATCH);
    if (firstRaw) alone.push(await lookupsAlone(more));
    reconciled.push(await reconcilerRate(BATCH));
    if (!firstRaw) alone.push(await lookupsAlone(more));
    console.log(
      `  round ${r + 1}/${ROUNDS}: webhook ingestion ${ingestion.at(-1)!.toFixed(0)}/s, raw HMAC ${raw.at(-1)!.toFixed(0)}/s; reconciler ${reconciled.at(-1)!.toFixed(0)} lookups/s, sandbox alone ${alone.at(-1)!.toFixed(0)}/s`,
    );
  }
  const report = (
    what: string,
    a: number[],
    b: number[],
    aName: string,
    bName: string,
    target: number,
  ): void => {
    const ratio = median(a.map((x, i) => x / (b[i] ?? NaN)));
    const met = ratio >= target;
    console.log(
      `${what}: ${aName} ${median(a).toFixed(0)}/s vs ${bName} ${median(b).toFixed(0)}/s = ${ratio.toFixed(4)}x (target >= ${target}x: ${met ? 'met' : 'NOT met'})`,
    );
    if (!met) console.log(`  ceiling (the same work as ${bName}, this run): ${median(b).toFixed(0)}/s`);
  };
  console.log(
    `machine loaded (shared by other engineers): figures are indicative; SQLite, ${CONCURRENCY} concurrent, ${BATCH} per batch`,
  );
  report(
    'webhook ingestion (verify + settle + evidence, HTTP)',
    ingestion,
    raw,
    'baton',
    'raw HMAC-SHA256 verify',
    0.3,
  );
  report(
    'reconciler lookups (claim + lookup + observe + release)',
    reconciled,
    alone,
    'baton',
    'sandbox alone',
    0.8,
  );
} finally {
  await app.close();
  await sandbox.close();
  await opened.close();
  rmSync(dir, { recursive: true, force: true });
}
