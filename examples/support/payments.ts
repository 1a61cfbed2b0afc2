/**
 * The payment step both engine examples run, with Baton and without it. The step is what a
 * durable-execution engine re-runs after a crash when it did not record the step's result: with
 * Baton, the re-run finds the occurrence the first run entered, never sends again, and settles it
 * from the provider's signed status; without Baton, the re-run pays again.
 */
import { randomUUID } from 'node:crypto';
import { InProcessBatonClient, type Executor, type ProviderAdapter } from '../../src/client/index.js';
import {
  DEFAULT_ACCOUNT,
  hmacSecretId,
  HttpProviderAdapter,
  sandboxEntryUrl,
  staticKeys,
  StatusSources,
} from '../../src/providers/index.js';
import { openOccurrencesOnSqlite } from '../../src/store/index.js';

export const LINEAGE = 'payments-step';
export const AUTHORITY = 'invoices';
export const AMOUNT = 4200;

export const EXAMPLE_ENV = {
  db: 'BATON_EXAMPLE_DB',
  sandbox: 'BATON_EXAMPLE_SANDBOX',
  profile: 'BATON_EXAMPLE_PROFILE',
  hmacSecret: 'BATON_EXAMPLE_HMAC_SECRET',
  lineage: 'BATON_EXAMPLE_LINEAGE',
  /** The invoice after whose send the worker SIGKILLs itself (first run only). */
  crashAfter: 'BATON_EXAMPLE_CRASH_AFTER',
} as const;

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
};

export interface Paid {
  readonly invoice: string;
  readonly status: string;
  readonly occurrenceId: string | null;
  readonly attemptsSent: number;
}

/** Die the way a worker dies: after the provider applied the payment, before anyone recorded it. */
function crashHere(invoice: string): void {
  if (process.env[EXAMPLE_ENV.crashAfter] === invoice) process.kill(process.pid, 'SIGKILL');
}

/** Without Baton: a payment call with a key minted inside the step — the re-run cannot know it. */
export async function payWithoutBaton(invoice: string): Promise<Paid> {
  const url = sandboxEntryUrl(env(EXAMPLE_ENV.sandbox)).replace('{account}', DEFAULT_ACCOUNT);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ amount: AMOUNT, currency: 'eur', payee: 'acme-supplies', invoice }),
  });
  await res.arrayBuffer();
  crashHere(invoice);
  return {
    invoice,
    status: res.ok ? 'succeeded' : `http_${res.status}`,
    occurrenceId: null,
    attemptsSent: 1,
  };
}

export interface BatonWorker {
  readonly executor: Executor;
  readonly adapter: ProviderAdapter;
  close(): Promise<void>;
}

/** One executor generation per worker process: a restarted worker takes the lineage over. */
export async function openBatonWorker(): Promise<BatonWorker> {
  const opened = await openOccurrencesOnSqlite(env(EXAMPLE_ENV.db));
  const secret = Buffer.from(env(EXAMPLE_ENV.hmacSecret), 'base64url');
  const keys = staticKeys({ [hmacSecretId(secret)]: secret });
  const [profileId = '', profileVersion = ''] = env(EXAMPLE_ENV.profile).split('@');
  const profile = (await opened.service.getProfile(profileId, profileVersion)).document;
  const client = new InProcessBatonClient({
    service: opened.service,
    statusSources: new StatusSources({ keys }),
  });
  const executor = await client.takeover(env(EXAMPLE_ENV.lineage));
  const http = new HttpProviderAdapter(profile, {
    entryUrl: sandboxEntryUrl(env(EXAMPLE_ENV.sandbox)),
    keys,
  });
  const adapter: ProviderAdapter = {
    async send(ticket) {
      const sent = await http.send(ticket);
      crashHere(String((ticket.request as { invoice?: unknown }).invoice));
      return sent;
    },
  };
  return { executor, adapter, close: () => opened.close() };
}

/**
 * With Baton: `perform` creates (or finds, by the invoice as creation key) the occurrence, enters
 * it at most once ever and sends. A re-run of a step whose first run was entered gets that
 * occurrence back; it asks Baton's pinned status sources instead of sending again.
 */
export async function payWithBaton(worker: BatonWorker, invoice: string): Promise<Paid> {
  const [profileId = '', profileVersion = ''] = env(EXAMPLE_ENV.profile).split('@');
  const result = await worker.executor.perform(
    {
      creationKey: invoice,
      provider: { profileId, profileVersion },
      request: { amount: AMOUNT, currency: 'eur', payee: 'acme-supplies', invoice },
      authority: { id: AUTHORITY, amount: AMOUNT },
    },
    worker.adapter,
  );
  let status: string = result.status;
  if (result.status === 'unresolved' && result.occurrenceId !== null) {
    // Entered by an earlier run of this step: settle it from the signed status, never re-send.
    const checked = await worker.executor.reconcile(result.occurrenceId);
    const o = checked.occurrence;
    status = o.unresolved ? 'unresolved' : o.effect === 'occurred' ? 'succeeded' : 'failed';
  }
  return { invoice, status, occurrenceId: result.occurrenceId, attemptsSent: result.adapterCalls };
}
