/**
 * `baton reconcile`: the reconciler (src/providers, DESIGN.md §4) from the command line, over the
 * unresolved occurrences of every lineage or of one. It asks each occurrence's pinned status
 * sources and records what they authenticate (AOC-REQ-009); it holds no executor credential and
 * never enters a provider (AOC-REQ-010). For an operator after an outage, or from a scheduler.
 */
import { existsSync } from 'node:fs';
import { BatonError, isBatonError } from '../../core/errors.js';
import {
  lineageLister,
  Reconciler,
  StatusSources,
  type KeyResolver,
  type ReconcileProgress,
  type ReconcileReport,
} from '../../providers/index.js';
import { openBaton, type OpenedBaton } from '../../server/open.js';
import { reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { allUnresolvedLister } from '../reconcile-wiring.js';
import { serveKeys } from './serve-credentials.js';
import { parse } from './store-args.js';
import { STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

const USAGE = `usage: baton reconcile [--db FILE | --postgres URL [--domain-key FILE]] [--lineage L]
                       [--passes N] [--limit N] [--credentials FILE] [--json]

Ask the pinned status sources about every unresolved (entered, outcome unknown) occurrence — or
only lineage L's — and record what they say; only authenticated answers move an occurrence. It
never calls a provider's entry and never retries one. Passes repeat while something stays
unresolved, at most --passes (1..20, default 3), waiting 250 ms, then 500 ms, … (at most 8 s)
between them; each pass visits at most --limit occurrences (1..100000, default 1000).
Prints one line per status answer on stderr, and one per occurrence whose visit failed (counted
as "error"; the others are still visited), then a summary on stdout (--json: the report as one
JSON object). Exit 0 when nothing visited stays unresolved, 1 when some do (they are listed) or the
lineage is unknown, 2 on bad arguments. The database and its domain key must exist (the SQLite
file's FILE.domain-key.pem, or --domain-key); reconcile creates neither.
--credentials FILE (or BATON_CREDENTIALS): the baton.credentials/1 document whose references hold
the secrets the status sources need (a Stripe profile's secret key and webhook secret), as for
\`baton serve\` (each credential sent only to the origins its entry lists); a source whose
credential is not held, or not for that source's origin, is not asked (missing knowledge:
credential_not_held, credential_origin_refused), so without it a format-2 profile's occurrences
stay unresolved.
${STORE_USAGE}
Environment: BATON_HMAC_SECRETS as for \`baton serve\` (the HMAC secrets profiles pin by id).
`;

function bounded(text: string | undefined, name: string, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,6}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw new BatonError('usage', `--${name} must be a whole number from 1 to ${max}`);
  }
  return Number(text);
}

function progressLine(p: ReconcileProgress): string {
  const verdict = p.effective
    ? `effective (${p.interpretation ?? 'no interpretation'})`
    : `not effective (${p.missingKnowledge ?? 'unknown'})`;
  const state = p.unresolved ? 'still unresolved' : 'resolved';
  return `pass ${p.pass}: ${p.occurrenceId} via ${p.source}: ${verdict}; ${state}\n`;
}

/** A BatonError's code and message (which never carry secrets); otherwise only the error's name. */
function failureText(error: unknown): string {
  if (isBatonError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.name : 'unknown error';
}

function summary(r: ReconcileReport): string {
  const reasons = Object.entries(r.byReason)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const lines = [
    `reconciled: ${r.visited} visited in ${r.passes} pass(es), ${r.observations} observation(s), ${r.effective} effective; ${r.resolved.length} resolved, ${r.unresolved.length} still unresolved`,
    ...(reasons === '' ? [] : [`answers: ${reasons}`]),
    ...r.unresolved.map((id) => `unresolved: ${id}`),
  ];
  return `${lines.join('\n')}\n`;
}

interface Plan {
  readonly lineage: string | undefined;
  readonly passes: number;
  readonly limit: number;
  readonly json: boolean;
  readonly keys: KeyResolver;
}

async function reconcile(opened: OpenedBaton, plan: Plan, io: CliIo): Promise<number> {
  const { lineage, limit } = plan;
  // An unknown lineage is an error (lineage_not_found), not "nothing to do".
  if (lineage !== undefined) await opened.service.currentGeneration(lineage);
  const reconciler = new Reconciler({
    service: opened.service,
    sources: new StatusSources({ keys: plan.keys }),
    list:
      lineage === undefined
        ? allUnresolvedLister(opened.engine, limit)
        : async () => (await lineageLister(opened.service, lineage)()).slice(0, limit),
    maxPasses: plan.passes,
    onProgress: (p) => io.stderr(progressLine(p)),
    // One occurrence's failure is reported here and counted (`error`); the others are still visited.
    onError: (error, occurrenceId) => io.stderr(`${occurrenceId}: not reconciled: ${failureText(error)}\n`),
  });
  const report = await reconciler.run();
  io.stdout(plan.json ? `${JSON.stringify(report)}\n` : summary(report));
  return report.unresolved.length === 0 ? EXIT.ok : EXIT.negative;
}

export async function runReconcile(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  let opened: OpenedBaton | undefined;
  try {
    const { values } = parse({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ...STORE_OPTIONS,
        lineage: { type: 'string' },
        passes: { type: 'string' },
        limit: { type: 'string' },
        credentials: { type: 'string', env: 'BATON_CREDENTIALS' },
        json: { type: 'boolean' },
      },
    });
    const plan: Plan = {
      lineage: values.lineage,
      passes: bounded(values.passes, 'passes', 3, 20),
      limit: bounded(values.limit, 'limit', 1000, 100_000),
      json: values.json === true,
      // The same secrets serve holds (BATON_HMAC_SECRETS and --credentials), resolved before the
      // store is opened: a bad reference changes nothing.
      keys: await serveKeys(values.credentials, io),
    };
    const choice = storeChoice(values);
    if (choice.kind === 'sqlite' && !existsSync(choice.path)) {
      throw new BatonError('usage', `no database at ${choice.path}`);
    }
    // The store must be set up already: reconcile never creates a domain key (serve does).
    opened = await openBaton(choice, { createDomainKey: false });
    return await reconcile(opened, plan, io);
  } catch (error) {
    return reportError(error, io);
  } finally {
    await opened?.close();
  }
}

export const reconcileCommand: Command = {
  name: 'reconcile',
  summary: 'Ask the pinned status sources about unresolved occurrences (never re-sends).',
  usage: USAGE,
  run: runReconcile,
};
