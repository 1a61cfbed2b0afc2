/**
 * The handovers of an occurrence (AOC-REQ-005): the takeovers of its lineage that delivered it to
 * a successor. A lineage's chain gains an event with every takeover, so they are found through
 * `aoc_handovers` (migration 028), which each takeover fills in its own transaction, not by reading
 * the whole chain; and they are checked by `verifyHandovers`, which reads only the handover events,
 * their neighbours and the chain's recorded head (docs/occurrences.md, "Handovers").
 */
import { deliversOccurrence } from '../occurrences/index.js';
import type { SqlExecutor, Transaction } from './engine.js';
import { intactEvent, type BrokenLink } from './evidence-chain.js';
import { EVIDENCE_COLUMNS, eventFromRow, type EvidenceEvent, type EvidenceRow } from './evidence-log.js';
import type { SubjectVerification } from './evidence-verify.js';

/** Rows per INSERT: 3 parameters each, far below either engine's limit. */
const CHUNK = 300;
const COLUMNS = EVIDENCE_COLUMNS.split(', ')
  .map((c) => `e.${c}`)
  .join(', ');

const lineageSubject = (lineage: string): string => `lineage:${lineage}`;

/** In the takeover's transaction: the occurrences it delivered to `generation`. */
export async function insertHandovers(
  tx: Transaction,
  lineage: string,
  generation: number,
  occurrenceIds: readonly string[],
): Promise<void> {
  for (let i = 0; i < occurrenceIds.length; i += CHUNK) {
    const ids = occurrenceIds.slice(i, i + CHUNK);
    const values = ids.map(() => '(?, ?, ?)').join(', ');
    await tx.run(
      `INSERT INTO aoc_handovers (occurrence_id, lineage, generation) VALUES ${values}`,
      ids.flatMap((id) => [id, lineage, generation]),
    );
  }
}

/**
 * The lineage events at the positions `aoc_handovers` names for the occurrence, oldest first,
 * each with its position. Not verified, and not filtered: `verifyHandovers` says which of them do
 * deliver the occurrence.
 */
export async function readHandovers(
  ex: SqlExecutor,
  occurrenceId: string,
  lineage: string,
): Promise<(EvidenceEvent & { idx: number })[]> {
  const rows = await ex.all<EvidenceRow>(
    `SELECT ${COLUMNS} FROM aoc_handovers h JOIN evidence_events e ON e.subject = ? AND e.idx = h.generation
     WHERE h.occurrence_id = ? AND h.lineage = ? ORDER BY h.generation`,
    [lineageSubject(lineage), occurrenceId, lineage],
  );
  return rows.map((r) => ({ ...eventFromRow(r), idx: Number(r.idx) }));
}

interface Head {
  readonly head: string;
  readonly count: number;
  readonly lastSeq: number;
}

/** The chain's rows at these positions (in chunks), by position. */
async function rowsAt(
  ex: SqlExecutor,
  subject: string,
  positions: number[],
): Promise<Map<number, EvidenceRow>> {
  const out = new Map<number, EvidenceRow>();
  for (let i = 0; i < positions.length; i += CHUNK) {
    const part = positions.slice(i, i + CHUNK);
    const rows = await ex.all<EvidenceRow>(
      `SELECT ${EVIDENCE_COLUMNS} FROM evidence_events WHERE subject = ? AND idx IN (${part.map(() => '?').join(', ')})`,
      [subject, ...part],
    );
    for (const r of rows) out.set(Number(r.idx), r);
  }
  return out;
}

/** What `verifyHandovers` read: the chain's rows by position and its recorded head. */
interface Read {
  readonly rows: ReadonlyMap<number, EvidenceRow>;
  readonly head: Head | undefined;
}

/** Why the handover at position `p` is not verified, or undefined when it is. */
function handoverProblem(r: Read, p: number, occurrenceId: string): string | undefined {
  const row = r.rows.get(p);
  if (row === undefined) return `the takeover to generation ${p} that delivered the occurrence is missing`;
  const event = intactEvent(row);
  if (typeof event === 'string') return event;
  const body = event.body as { generation?: unknown } | null;
  if (event.type !== 'generation_advanced' || body?.generation !== p)
    return `event #${p} is not the takeover to generation ${p}`;
  if (!deliversOccurrence(event, occurrenceId))
    return `the takeover to generation ${p} does not list the occurrence as delivered`;
  const before = p === 1 ? null : r.rows.get(p - 1);
  if (before === undefined) return `event #${p - 1}, before it, is missing from the chain`;
  if (row.prev !== (before?.hash ?? null)) return `prev does not link to event #${p - 1}`;
  return linkAfter(r, p, row);
}

/** The link after position `p`: the next event's `prev`, or the recorded head for the last. */
function linkAfter(r: Read, p: number, row: EvidenceRow): string | undefined {
  const { head } = r;
  if (head === undefined) return 'the chain has no recorded head';
  if (p > head.count) return `event #${p} lies beyond the recorded head (#${head.count})`;
  if (p === head.count)
    return row.hash === head.head && Number(row.seq) === head.lastSeq
      ? undefined
      : 'the chain ends at this event but the recorded head is another: it was replaced';
  const after = r.rows.get(p + 1);
  if (after === undefined) return `event #${p + 1}, after it, is missing from the chain`;
  return after.prev === row.hash ? undefined : `event #${p + 1} does not link to it: it was replaced`;
}

/** The chain's end against its recorded head: what catches removed or added last events. */
function headProblem(r: Read): string | undefined {
  const { head } = r;
  if (head === undefined)
    return r.rows.size === 0 ? undefined : 'the subject has events but no recorded head';
  const last = r.rows.get(head.count);
  if (r.rows.has(head.count + 1)) return `events after #${head.count} were added behind Baton`;
  if (last === undefined) return `event #${head.count}, the recorded head, is missing: the chain was cut`;
  if (last.hash !== head.head || Number(last.seq) !== head.lastSeq)
    return `the chain's last event (#${head.count}) is not the recorded head: it was replaced`;
  return undefined;
}

/**
 * Check the occurrence's handovers without walking its lineage's chain, which grows with every
 * takeover: each takeover `aoc_handovers` names must be intact (its hash recomputes), be the
 * takeover to that generation, list the occurrence as delivered, link to the event before it and
 * be linked to by the event after it (or be the recorded head); and the chain's end must be its
 * recorded head. That reads at most three events per handover and two more, not the chain.
 * Events elsewhere in the chain are not looked at: `baton log verify` (`GET /v1/evidence/verify`)
 * walks every chain. A handover that fails any check is not verified and makes `ok` false.
 */
export async function verifyHandovers(
  ex: SqlExecutor,
  lineage: string,
  occurrenceId: string,
): Promise<SubjectVerification> {
  const subject = lineageSubject(lineage);
  const named = await ex.all<{ generation: number | string }>(
    'SELECT generation FROM aoc_handovers WHERE occurrence_id = ? AND lineage = ? ORDER BY generation',
    [occurrenceId, lineage],
  );
  const positions = named.map((n) => Number(n.generation));
  const h = await ex.get<{ head: string; count: number | string; last_seq: number | string }>(
    'SELECT head, count, last_seq FROM evidence_heads WHERE subject = ?',
    [subject],
  );
  const head = h && { head: h.head, count: Number(h.count), lastSeq: Number(h.last_seq) };
  // Position 1 too: a chain with events and no recorded head is caught with no handover to check.
  const wanted = new Set([1, ...positions.flatMap((p) => [p - 1, p, p + 1]).filter((p) => p >= 1)]);
  if (head !== undefined) for (const p of [head.count, head.count + 1]) wanted.add(p);
  const read: Read = {
    rows: await rowsAt(
      ex,
      subject,
      [...wanted].sort((a, b) => a - b),
    ),
    head,
  };
  const problems: BrokenLink[] = [];
  const verified = new Map<number, string>();
  for (const p of positions) {
    const row = read.rows.get(p);
    const why = handoverProblem(read, p, occurrenceId);
    if (why === undefined && row !== undefined) verified.set(Number(row.seq), row.hash);
    else problems.push({ seq: Number(row?.seq ?? head?.lastSeq ?? 0), subject, reason: why ?? 'missing' });
  }
  const end = headProblem(read);
  if (end !== undefined) problems.push({ seq: head?.lastSeq ?? 0, subject, reason: end });
  const first = [...problems].sort((a, b) => a.seq - b.seq)[0];
  const base = { subjects: 1, events: read.rows.size, problems: problems.length, verified };
  return first === undefined ? { ok: true, ...base } : { ok: false, ...base, firstBroken: first };
}
