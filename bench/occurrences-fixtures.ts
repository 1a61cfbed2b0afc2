/** Inputs for bench/occurrences.bench.ts: a payments-like profile, a domain, requests, observations. */
import { BYPASS_PATH_KINDS, type EntryTicket, type ObservationInput } from '../src/occurrences/index.js';

export const ACCOUNT = 'acct_bench_001';

export function benchProfile() {
  const pin = { kind: 'hmac-sha256', secretId: 'bench-2026' };
  return {
    format: 'baton.provider-profile/1',
    id: 'bench-payments',
    version: '1',
    provider: { name: 'Bench Payments', apiVersion: '2026-01-01' },
    account: ACCOUNT,
    environment: 'bench',
    request: {
      members: ['amount', 'currency', 'destination', 'memo'],
      required: ['amount', 'currency'],
      private: false,
    },
    authority: { amount: 'amount', unit: { member: 'currency', values: { EUR: 'EUR-cents' } } },
    nativeKey: { rule: 'template', template: 'baton:{domain}:{occurrenceId}', header: 'Idempotency-Key' },
    reference: { member: 'id', pattern: '^pay_[A-Za-z0-9]{4,64}$' },
    acknowledgement: { authentication: pin, freshnessSeconds: 300 },
    statusSources: [
      {
        id: 'by-key',
        kind: 'lookup_by_key',
        url: 'http://127.0.0.1:8787/v1/payments/by-key',
        authentication: pin,
        retentionSeconds: 604_800,
        freshnessSeconds: 300,
        completeness: 'exact',
        pagination: 'none',
      },
    ],
    statuses: {
      pending: { interpretation: 'accepted', establishesNoEffect: false },
      succeeded: { interpretation: 'success', establishesNoEffect: false },
      failed: { interpretation: 'final_failure', establishesNoEffect: false },
    },
  };
}

/**
 * The domain's pending and in-flight limits: 1000 (15–16 units per stripe), or `BENCH_DOMAIN_LIMIT`
 * (e.g. 100, what `baton demo` configures: 28 of the 64 stripes then hold one unit; docs/store.md
 * "Domain-wide limits").
 */
function domainLimit(): number {
  const raw = process.env['BENCH_DOMAIN_LIMIT'];
  const n = raw === undefined ? 1000 : Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`BENCH_DOMAIN_LIMIT must be a positive integer, not ${raw}`);
  return n;
}

export function domain() {
  const limit = domainLimit();
  return {
    id: 'bench-domain',
    limits: {
      // A lineage's limit may not exceed the domain's (PUT /v1/domain refuses it).
      maxPendingPerLineage: Math.min(1000, limit),
      maxInFlightPerLineage: Math.min(1000, limit),
      maxPendingPerDomain: limit,
      maxInFlightPerDomain: limit,
      entryWindowSeconds: 300,
    },
    bypassPaths: BYPASS_PATH_KINDS.map((kind) => ({
      kind,
      status: 'unknown',
      description: 'not inventoried in the bench',
    })),
  };
}

export function request(i: number) {
  return {
    amount: 100 + (i % 50),
    currency: 'EUR',
    destination: `acct_dest_${i % 97}`,
    memo: `invoice ${i}`,
  };
}

/** An authenticated, exactly bound `succeeded` answer carrying the provider reference. */
export function acknowledgementFree(ticket: EntryTicket, reference: string): ObservationInput {
  return {
    occurrenceId: ticket.occurrence.id,
    source: 'by-key',
    observedAt: Date.now(),
    result: 'found',
    nativeStatus: 'succeeded',
    response: { id: reference, status: 'succeeded', amount: ticket.request['amount'] ?? 0 },
    authentication: { verified: true, pin: 'bench-2026' },
    carried: {
      account: ACCOUNT,
      environment: 'bench',
      nativeKey: ticket.nativeKey ?? '',
      requestDigest: ticket.requestDigest,
    },
    complete: true,
  };
}
