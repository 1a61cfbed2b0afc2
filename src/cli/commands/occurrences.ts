/**
 * `baton occurrences list|show` (docs/occurrences.md "Seeing what happened"): what happened, over
 * the HTTP API of a running `baton serve`. `show` prints the timeline — every evidence event with
 * its time, actor, generation and whether the server's chain walk (the one `baton log verify`
 * runs) verified it — and the takeovers that delivered the occurrence (AOC-REQ-005).
 */
import { BatonError } from '../../core/errors.js';
import { formatRfc3339 } from '../../core/time.js';
import type { EvidenceEvent, OccurrencePage, OccurrenceView } from '../../occurrences/index.js';
import {
  OccurrencesQuery,
  type ChainCheck,
  type OccurrenceTimeline,
} from '../../client/occurrences-query.js';
import { reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { parse } from './store-args.js';

export const DEFAULT_URL = 'http://127.0.0.1:4000';

const USAGE = `usage: baton occurrences list [--phase P] [--outcome O] [--lineage L] [--profile ID]
                              [--creation-key K] [--from T] [--to T] [--limit N] [--cursor C]
                              [--url URL] [--token TOKEN] [--json]
       baton occurrences show ID [--url URL] [--token TOKEN] [--json]

list  A page of occurrences, newest first. Filters combine; --from and --to are RFC 3339 times
      (created at or after --from, before --to); --limit 1..500 (default 50). When more remain it
      prints the --cursor for the next page, to pass with the same filters: the server refuses a
      cursor used with other filters.
show  One occurrence and its timeline: each evidence event with its time (RFC 3339), actor,
      executor generation and a mark — "ok" when the server's chain walk verified the event,
      "BROKEN" when it did not — then the takeovers that delivered it to a successor (from the
      lineage's chain, marked the same way: each checked with its links to the events on either
      side and the chain's end against its recorded head; \`baton log verify\` walks the whole
      lineage chain). Exit 1 when either check fails.
--url defaults to $BATON_URL, else ${DEFAULT_URL}; --token to $BATON_TOKEN (an operator or admin
token; an executor credential sees only its own lineage). --json prints the server's answer.
Exit 0 on success, 1 on a broken chain or a refused or unanswered request (not found, forbidden,
unavailable), 2 on bad arguments.
`;

const LIST_FLAGS = ['phase', 'outcome', 'lineage', 'profile', 'from', 'to', 'cursor'] as const;

interface Connection {
  readonly url: string;
  readonly token: string;
  readonly json: boolean;
}

/** --url/--token with the BATON_URL/BATON_TOKEN fallbacks (the same flags as the admin verbs). */
export function connection(values: { url?: string; token?: string; json?: boolean }): Connection {
  const url = values.url ?? process.env['BATON_URL'] ?? DEFAULT_URL;
  const token = values.token ?? process.env['BATON_TOKEN'];
  if (token === undefined || token === '') {
    throw new BatonError('usage', 'a token is required: --token TOKEN or BATON_TOKEN');
  }
  try {
    new URL(url);
  } catch {
    throw new BatonError('usage', '--url must be an absolute http(s) URL');
  }
  return { url, token, json: values.json === true };
}

function limitOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 500) {
    throw new BatonError('usage', '--limit must be a whole number from 1 to 500');
  }
  return Number(text);
}

function listLine(o: OccurrenceView): string {
  const flags = `${o.unresolved ? ' unresolved' : ''}${o.conflict ? ' conflict' : ''}`;
  return `${formatRfc3339(o.createdAt)}  ${o.id}  ${o.lineage}  ${o.phase}/${o.outcome}/${o.effect}${flags}  key ${o.creationBinding.key}\n`;
}

function printList(page: OccurrencePage, io: CliIo): void {
  if (page.occurrences.length === 0) io.stdout('no occurrences\n');
  for (const o of page.occurrences) io.stdout(listLine(o));
  if (page.nextCursor !== null) io.stdout(`more: --cursor ${page.nextCursor}\n`);
}

/** The executor generation behind an event: its executor actor's, or the one a takeover names. */
export function eventGeneration(e: EvidenceEvent): string {
  const m = /^executor:.+#([0-9]+)$/.exec(e.actor);
  if (m?.[1] !== undefined) return m[1];
  const g = (e.body as { generation?: unknown } | null)?.generation;
  return typeof g === 'number' ? String(g) : '-';
}

function eventLine(e: EvidenceEvent, check: ChainCheck): string {
  const mark = check.verified.includes(e.seq) ? 'ok    ' : 'BROKEN';
  const requested = (e.body as { requestedBy?: unknown } | null)?.requestedBy;
  const by = typeof requested === 'string' ? `  requested by ${requested}` : '';
  return `  ${formatRfc3339(e.at)}  ${mark}  #${e.seq}  ${e.type}  actor ${e.actor}  generation ${eventGeneration(e)}${by}\n`;
}

function chainLine(name: string, c: ChainCheck): string {
  // A lineage is checked at its handovers only (their links and the chain's head), and says so.
  const what =
    c.scope === 'handovers' ? `${name} chain at the handovers (their links, the head)` : `${name} chain`;
  if (c.ok) return `${what}: verified\n`;
  const first =
    c.firstBroken === undefined ? '' : ` (first at seq ${c.firstBroken.seq}: ${c.firstBroken.reason})`;
  return `${what}: BROKEN, ${c.problems} problem(s)${first}\n`;
}

function printTimeline(t: OccurrenceTimeline, io: CliIo): void {
  const o = t.occurrence;
  const p = o.provider;
  io.stdout(
    [
      `occurrence ${o.id}  lineage ${o.lineage}  captured generation ${o.capturedGeneration}`,
      `state: ${o.phase}, outcome ${o.outcome}, effect ${o.effect}${o.unresolved ? ', UNRESOLVED' : ''}${o.conflict ? ', CONFLICT' : ''}`,
      `provider: ${p.profileId}@${p.profileVersion} account ${p.account} environment ${p.environment} reference ${p.providerReference ?? '-'}`,
      `authority: ${o.authority.amount} ${o.authority.unit} of ${o.authority.id}; creation key ${o.creationBinding.key}`,
      '',
    ].join('\n'),
  );
  io.stdout(`timeline (${t.evidence.length} event(s)):\n`);
  for (const e of t.evidence) io.stdout(eventLine(e, t.chains.occurrence));
  io.stdout(chainLine('occurrence', t.chains.occurrence));
  io.stdout(`handovers (${t.handovers.length}):\n`);
  for (const e of t.handovers) io.stdout(eventLine(e, t.chains.lineage));
  io.stdout(chainLine('lineage', t.chains.lineage));
}

async function runList(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      ...Object.fromEntries(LIST_FLAGS.map((f) => [f, { type: 'string' as const }])),
      'creation-key': { type: 'string' },
      limit: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const c = connection(values);
  const v = values as Record<string, string | undefined>;
  const filter: Record<string, unknown> = { creationKey: v['creation-key'], limit: limitOf(v['limit']) };
  for (const f of LIST_FLAGS) filter[f] = v[f];
  for (const k of Object.keys(filter)) if (filter[k] === undefined) delete filter[k];
  const page = await new OccurrencesQuery({ baseUrl: c.url, token: c.token }).list(filter);
  if (c.json) io.stdout(`${JSON.stringify(page)}\n`);
  else printList(page, io);
  return EXIT.ok;
}

async function runShow(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { url: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' } },
  });
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new BatonError('usage', 'show takes exactly one ID');
  const c = connection(values);
  const t = await new OccurrencesQuery({ baseUrl: c.url, token: c.token }).show(id);
  if (c.json) io.stdout(`${JSON.stringify(t)}\n`);
  else printTimeline(t, io);
  return t.chains.occurrence.ok && t.chains.lineage.ok ? EXIT.ok : EXIT.negative;
}

/** The verbs, by name: the one list `runOccurrences` dispatches on and `verbs` declares. */
const VERBS: Readonly<Record<string, (argv: string[], io: CliIo) => Promise<number>>> = {
  list: runList,
  show: runShow,
};

export async function runOccurrences(argv: string[], io: CliIo): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || wantsHelp(argv)) {
    io.stdout(USAGE);
    return verb === undefined ? EXIT.usage : EXIT.ok;
  }
  try {
    const run = VERBS[verb];
    if (run === undefined)
      throw new BatonError('usage', `unknown verb ${verb}: ${Object.keys(VERBS).join(' or ')}`);
    return await run(rest, io);
  } catch (error) {
    return reportError(error, io);
  }
}

export const occurrencesCommand: Command = {
  name: 'occurrences',
  verbs: Object.keys(VERBS),
  summary: 'List occurrences and show one occurrence’s verified timeline (over HTTP).',
  usage: USAGE,
  run: runOccurrences,
};
