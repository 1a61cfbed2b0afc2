/**
 * The demo's worker: a separate process that pays invoices through the occurrences service and the
 * sandbox. It first looks at its lineage's unresolved occurrences and reconciles them from their
 * signed status sources; then, per invoice, the creation binding (the invoice number) says whether
 * it was already handled — an unresolved one is never paid again. With BATON_DEMO_DIE_AFTER it
 * prints a marker right after it has SENT that invoice and the provider has answered, and waits
 * for the parent's SIGKILL before it can record the answer.
 */
import { setInterval } from 'node:timers';
import { isBatonError } from '../../core/errors.js';
import type { OccurrencesService, OccurrenceView } from '../../occurrences/index.js';
import {
  hmacSecretId,
  HttpProviderAdapter,
  lineageLister,
  Reconciler,
  recordSend,
  sandboxEntryUrl,
  staticKeys,
  StatusSources,
} from '../../providers/index.js';
import { openOccurrencesOnSqlite } from '../../store/index.js';
import { AUTHORITY, AMOUNT, ENV, invoiceRequest, lastReason, LINEAGE, MARKER } from './shared.js';

const env = (name: string): string => process.env[name] ?? '';
const say = (line: string): void => void process.stdout.write(`${line}\n`);

async function reconcile(svc: OccurrencesService, sources: StatusSources): Promise<void> {
  const open = await svc.listUnresolved(LINEAGE);
  say(`sees ${open.length} unresolved occurrence(s)${open.map((o) => ` ${o.id}`).join(',')}`);
  if (open.length === 0) return;
  await new Reconciler({
    service: svc,
    sources,
    list: lineageLister(svc, LINEAGE),
    // The demo asks the profile's signed lookup-by-key source; the tests cover the other sources.
    kinds: ['lookup_by_key'],
    maxPasses: 1,
    onProgress: (p) =>
      say(
        `reconcile: asked ${p.source} about ${p.occurrenceId}: ${p.detail} → ${
          p.missingKnowledge === null
            ? `authentic, bound: ${p.interpretation ?? '?'}`
            : `missing knowledge (${p.missingKnowledge})`
        }; ${p.unresolved ? 'still UNRESOLVED' : 'resolved'}`,
      ),
    onError: (error, id) =>
      say(
        `reconcile: could not ask about ${id} (${isBatonError(error) ? error.code : 'error'}); still UNRESOLVED`,
      ),
  }).run();
}

async function handled(svc: OccurrencesService, invoice: string, o: OccurrenceView): Promise<void> {
  if (o.unresolved) {
    const why = (await lastReason(svc, o.id)) ?? 'no authoritative answer';
    say(`${invoice}: already entered, outcome UNRESOLVED (${why}) — NOT paying again`);
  } else say(`${invoice}: already handled (${o.phase}, ${o.outcome}) — not paying again`);
}

async function main(): Promise<void> {
  const opened = await openOccurrencesOnSqlite(env(ENV.db));
  const svc = opened.service;
  const credential = env(ENV.credential);
  const [profileId = '', profileVersion = ''] = env(ENV.profile).split('@');
  const profile = (await svc.getProfile(profileId, profileVersion)).document;
  const secret = Buffer.from(env(ENV.hmacSecret), 'base64url');
  const keys = staticKeys({ [hmacSecretId(secret)]: secret });
  const adapter = new HttpProviderAdapter(profile, { entryUrl: sandboxEntryUrl(env(ENV.sandbox)), keys });
  await reconcile(svc, new StatusSources({ keys }));
  for (const invoice of env(ENV.invoices).split(',')) {
    const { occurrence, created } = await svc.create({
      credential,
      creationKey: invoice,
      provider: { profileId, profileVersion },
      request: invoiceRequest(invoice),
      authority: { id: AUTHORITY, amount: AMOUNT },
    });
    if (!created) {
      await handled(svc, invoice, occurrence);
      continue;
    }
    const ticket = await svc.enter({ credential, occurrenceId: occurrence.id });
    const sent = await adapter.send(ticket);
    if (invoice === env(ENV.dieAfter)) {
      say(`${invoice}: entered ${occurrence.id} and sent it once; the provider answered ${sent.detail}`);
      say(MARKER);
      setInterval(() => undefined, 60_000); // wait for SIGKILL; the answer is never recorded
      return;
    }
    const ack = await recordSend(svc, sent);
    const outcome = ack.occurrence.unresolved
      ? `UNRESOLVED (${ack.missingKnowledge ?? 'effect open'})`
      : ack.occurrence.outcome;
    say(`${invoice}: entered ${occurrence.id}, sent once, answer ${sent.detail} → ${outcome}`);
  }
  await opened.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`worker failed: ${error instanceof Error ? error.message : 'unknown'}\n`);
  process.exitCode = 1;
});
