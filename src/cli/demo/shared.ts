/** What the demo's parent (story.ts) and its worker processes (worker.ts) agree on. */
import type { OccurrencesService } from '../../occurrences/index.js';

export const LINEAGE = 'invoice-agent';
export const AUTHORITY = 'invoices';
export const AMOUNT = 1250;
/** The worker prints this, then waits to be killed, right after it sent the doomed invoice. */
export const MARKER = '@@sent-then-wait';

/** Inputs reach the worker through its environment: secrets never appear in a process listing. */
export const ENV = {
  db: 'BATON_DEMO_DB',
  sandbox: 'BATON_DEMO_SANDBOX',
  profile: 'BATON_DEMO_PROFILE',
  invoices: 'BATON_DEMO_INVOICES',
  dieAfter: 'BATON_DEMO_DIE_AFTER',
  credential: 'BATON_DEMO_CREDENTIAL',
  hmacSecret: 'BATON_DEMO_HMAC_SECRET',
  generation: 'BATON_DEMO_GENERATION',
} as const;

export function invoiceRequest(invoice: string): {
  amount: number;
  currency: string;
  payee: string;
  invoice: string;
} {
  return { amount: AMOUNT, currency: 'eur', payee: 'acme-supplies', invoice };
}

/** The reason of the latest observation that did not count (null when the latest one did). */
export async function lastReason(svc: OccurrencesService, occurrenceId: string): Promise<string | null> {
  const { evidence } = await svc.getOccurrence(occurrenceId);
  const last = evidence.filter((e) => e.type === 'observation_recorded').at(-1);
  const body = last?.body as { interpretation?: { missingKnowledge?: string | null } } | undefined;
  return body?.interpretation?.missingKnowledge ?? null;
}
