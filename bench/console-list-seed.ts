/**
 * The 1,000,000-occurrence store of bench/console-list.bench.ts (issue 14 item 6), on SQLite or
 * PostgreSQL. Rows are made exactly as Baton stores them: a few template occurrences go through
 * the real OccurrencesService (create → reserved; + enter → entered/unknown; + an authenticated
 * acknowledgement → resolved/succeeded; create + release → released), then each stored row is
 * copied in bulk SQL with only what differs between two occurrences changed: id, lineage and
 * creation key, the native key and provider reference that embed them, and the timestamps
 * (shifted together, so deadlines and entry/resolution times keep their distance). Budgets and
 * open-occurrence stripes are brought to what the copies reserve, consume and hold open.
 * The copies carry no evidence chain (the list reads none; docs/scale.md says so).
 * A store already seeded (its marker lineage present) is reused across runs.
 */
import type { SqlValue, StoreEngine } from '../src/store/engine.js';
import type { OccurrencesService } from '../src/occurrences/index.js';
import { OPEN_STRIPES } from '../src/store/occurrences-limits.js';
import { acknowledgementFree, benchProfile, domain, request } from './occurrences-fixtures.js';

export const LINEAGES = 100;
export const PROFILES = ['bench-payments', 'bench-payments-eu'] as const;
/** One occurrence every 2.5 s: 1,000,000 of them span about 29 days. */
export const STEP_MS = 2_500;
const MARKER = `console-agent-${String(LINEAGES - 1).padStart(3, '0')}`;
const BATCH = 400;

export const lineageName = (l: number): string => `console-agent-${String(l).padStart(3, '0')}`;

type Row = Record<string, SqlValue>;
interface Template {
  readonly row: Row;
  readonly linked: readonly Row[];
  readonly reserved: number;
  readonly consumed: number;
  readonly open: boolean;
}

/** What a bulk writer needs from an engine: one multi-row INSERT at a time. */
export interface BulkWriter {
  insert(table: string, columns: readonly string[], rows: readonly SqlValue[][]): Promise<void>;
  exec(sql: string, params?: SqlValue[]): Promise<void>;
}

/** The state mix: mostly settled, some released, a few in doubt and reserved (per 100). */
export function stateOf(i: number): 'resolved' | 'released' | 'entered' | 'reserved' {
  const k = i % 100;
  return k < 85 ? 'resolved' : k < 93 ? 'released' : k < 97 ? 'entered' : 'reserved';
}

export async function isSeeded(engine: StoreEngine, n: number): Promise<boolean> {
  return engine.read(async (ex) => {
    const marker = await ex.get('SELECT id FROM aoc_lineages WHERE id = ?', [MARKER]);
    const c = await ex.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM aoc_occurrences');
    return marker !== undefined && Number(c?.n ?? 0) >= n;
  });
}

async function authorityCounts(service: OccurrencesService): Promise<[number, number]> {
  const a = await service.getAuthority('console-budget');
  return [a.reserved, a.consumed];
}

/** One template per (profile, state), made by the service in lineage 0. */
async function templates(
  service: OccurrencesService,
  engine: StoreEngine,
  credential: string,
): Promise<Map<string, Template>> {
  const out = new Map<string, Template>();
  let n = 0;
  for (const profileId of PROFILES) {
    for (const state of ['reserved', 'entered', 'resolved', 'released'] as const) {
      const before = await authorityCounts(service);
      const c = await service.create({
        credential,
        creationKey: `template-${profileId}-${state}`,
        provider: { profileId, profileVersion: '1' },
        request: request(n),
        authority: { id: 'console-budget', amount: request(n).amount },
      });
      n += 1;
      const id = c.occurrence.id;
      if (state === 'released') {
        await service.release({
          credential,
          occurrenceId: id,
          requestDigest: c.occurrence.provider.requestDigest,
        });
      } else if (state !== 'reserved') {
        const ticket = await service.enter({ credential, occurrenceId: id });
        if (state === 'resolved') await service.observe(acknowledgementFree(ticket, `pay_TEMPLATE${n}`));
      }
      const after = await authorityCounts(service);
      const [row, linked] = await engine.read(async (ex) => [
        await ex.get<Row>('SELECT * FROM aoc_occurrences WHERE id = ?', [id]),
        await ex.all<Row>('SELECT * FROM aoc_linked_ids WHERE occurrence_id = ?', [id]),
      ]);
      if (row === undefined) throw new Error(`template ${id} was not stored`);
      const open = row['open_stripe'] !== null && row['open_stripe'] !== undefined;
      out.set(`${profileId}/${state}`, {
        row,
        linked,
        reserved: after[0] - before[0],
        consumed: after[1] - before[1],
        open,
      });
    }
  }
  return out;
}

/** Configure the store (domain, two profiles, one budget, the lineages) and make the templates. */
export async function configure(
  service: OccurrencesService,
  engine: StoreEngine,
): Promise<Map<string, Template>> {
  const d = domain();
  await service.configureDomain({
    ...d,
    limits: { ...d.limits, maxPendingPerDomain: 100_000, maxInFlightPerDomain: 100_000 },
  } as never);
  for (const id of PROFILES) await service.registerProfile({ ...benchProfile(), id });
  await service.createAuthority({ id: 'console-budget', unit: 'EUR-cents', total: 1e15 });
  let first = '';
  for (let l = 0; l < LINEAGES; l++) {
    const { credential } = await service.takeover({ lineage: lineageName(l) });
    if (l === 0) first = credential;
  }
  return templates(service, engine, first);
}

const TIME_COLUMNS = [
  'created_at',
  'updated_at',
  'entry_deadline',
  'entered_at',
  'released_at',
  'resolved_at',
];

/** Copy number `i` of template `t`: only what differs between two occurrences is changed. */
function copy(t: Template, i: number, createdAt: number, stripe: number | null): [Row, Row[]] {
  const oldId = String(t.row['id']);
  const id = `occ_${i.toString(16).padStart(32, '0')}`;
  const lineage = lineageName(i % LINEAGES);
  const ref = `pay_C${i.toString(36).padStart(8, '0')}`;
  const sub = (v: SqlValue): SqlValue =>
    typeof v === 'string' ? v.replaceAll(oldId, id).replace(/pay_TEMPLATE[0-9]+/g, ref) : v;
  const shift = createdAt - Number(t.row['created_at']);
  const row: Row = {};
  for (const [k, v] of Object.entries(t.row)) row[k] = sub(v);
  for (const k of TIME_COLUMNS) if (row[k] !== null) row[k] = Number(row[k]) + shift;
  Object.assign(row, { lineage, creation_scope: lineage, creation_key: `order-${i}` });
  if (t.open) row['open_stripe'] = stripe;
  const linked = t.linked.map((l) => Object.fromEntries(Object.entries(l).map(([k, v]) => [k, sub(v)])));
  return [row, linked];
}

/** Insert `n` copies (fewer the templates already there), printing progress; returns the ms taken. */
export async function seed(
  label: string,
  w: BulkWriter,
  tpl: Map<string, Template>,
  n: number,
  now: number,
): Promise<number> {
  const start = performance.now();
  const columns = Object.keys([...tpl.values()][0]?.row ?? {});
  const linkedColumns = ['occurrence_id', 'type', 'value', 'exclusive_key'];
  const copies = n - tpl.size;
  const stripes = Array.from({ length: OPEN_STRIPES }, () => ({ pending: 0, inFlight: 0 }));
  let reserved = 0;
  let consumed = 0;
  let open = 0;
  for (let from = 0; from < copies; from += BATCH) {
    const rows: SqlValue[][] = [];
    const links: SqlValue[][] = [];
    for (let i = from; i < Math.min(copies, from + BATCH); i++) {
      const state = stateOf(i);
      const t = tpl.get(`${PROFILES[i % 7 === 0 ? 1 : 0]}/${state}`);
      if (t === undefined) throw new Error(`no template for ${state}`);
      const stripe = t.open ? open++ % OPEN_STRIPES : null;
      const [row, linked] = copy(t, i, now - (copies - i) * STEP_MS, stripe);
      rows.push(columns.map((c) => row[c] ?? null));
      for (const l of linked) links.push(linkedColumns.map((c) => l[c] ?? null));
      reserved += t.reserved;
      consumed += t.consumed;
      const s = stripe === null ? undefined : stripes[stripe];
      if (s !== undefined && state === 'reserved') s.pending += 1;
      if (s !== undefined && state === 'entered') s.inFlight += 1;
    }
    await w.insert('aoc_occurrences', columns, rows);
    if (links.length > 0) await w.insert('aoc_linked_ids', linkedColumns, links);
    const done = Math.min(copies, from + BATCH);
    if (done % 50_000 < BATCH || done === copies) {
      const s = (performance.now() - start) / 1000;
      console.log(`  seeding ${label}: ${done + tpl.size}/${n} occurrences, ${s.toFixed(1)} s`);
    }
  }
  await w.exec('UPDATE aoc_authorities SET reserved = reserved + ?, consumed = consumed + ? WHERE id = ?', [
    reserved,
    consumed,
    'console-budget',
  ]);
  for (const [i, s] of stripes.entries()) {
    await w.exec(
      'UPDATE aoc_open_stripes SET pending = pending + ?, in_flight = in_flight + ? WHERE stripe = ?',
      [s.pending, s.inFlight, i],
    );
  }
  return performance.now() - start;
}
