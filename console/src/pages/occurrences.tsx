/**
 * Occurrences: filters (phase, outcome, lineage, profile, creation key, time), search by id or
 * creation key, cursor pages over the list API's index, live updates via GET /v1/events.
 */
import { useState } from 'preact/hooks';
import { api, inputTime, linkTime, localInput, ok } from '../api.js';
import type { paths } from '../generated/api.js';
import { useEvidenceEvents, useLiveStatus, type LiveStatus } from '../events.js';
import { ErrorNote, Loading, Pager, Time } from '../format.js';
import { useLoad } from '../load.js';
import { href } from '../router.js';

type Query = NonNullable<paths['/v1/occurrences']['get']['parameters']['query']>;
type OccurrencePage = Awaited<ReturnType<typeof listPage>>;
export type Occurrence = OccurrencePage['occurrences'][number];

const PHASES = ['reserved', 'entered', 'resolved', 'released'];
const OUTCOMES = ['unknown', 'accepted', 'success', 'not_accepted', 'final_failure'];
const FILTERS = ['phase', 'outcome', 'lineage', 'profile', 'creationKey', 'from', 'to'] as const;

async function listPage(query: Query) {
  return ok(await api.GET('/v1/occurrences', { params: { query } }));
}

function queryOf(params: URLSearchParams, cursor: string | undefined): Query {
  const q: Record<string, string> = {};
  for (const k of FILTERS) {
    const v = params.get(k);
    if (v !== null && v !== '') q[k] = k === 'from' || k === 'to' ? inputTime(k, v) : v;
  }
  if (cursor !== undefined) q['cursor'] = cursor;
  q['limit'] = '25';
  return q;
}

export function StateBadge({
  o,
}: {
  o: { phase: string; outcome: string; unresolved: boolean; conflict: boolean };
}) {
  const label = o.conflict
    ? 'conflict'
    : o.unresolved
      ? 'unresolved'
      : o.phase === 'resolved'
        ? o.outcome
        : o.phase;
  const cls = o.unresolved || o.conflict ? 'bad' : o.outcome === 'success' ? 'good' : 'plain';
  return <span class={`badge ${cls}`}>{label === 'success' ? 'succeeded' : label}</span>;
}

/**
 * The stack of cursors passed, kept with the query it was issued under: a cursor names a position
 * in one filter's order, so under any other query (a search, Back/Forward, a link, the nav link)
 * the list starts again at its first page. Derived while rendering, so no request ever pairs the
 * new query with the old query's cursor (that answered an empty page for a key that exists).
 */
function usePages(qs: string): [string[], (c: string[]) => void] {
  const [pages, setPages] = useState<{ qs: string; cursors: string[] }>({ qs, cursors: [] });
  return [pages.qs === qs ? pages.cursors : [], (cursors) => setPages({ qs, cursors })];
}

/** The count is honest only while the stream is live: once it stopped, say so, not "Live: N". */
function liveLine(status: LiveStatus | undefined, n: number): string {
  const events = `${n} new evidence event${n === 1 ? '' : 's'}`;
  if (status === 'live') return `Live: ${events} since this page opened.`;
  if (status === 'connecting' || status === undefined) return 'Connecting to live updates…';
  return `Live updates stopped (${status}): ${events} counted before; reload the page to see newer ones.`;
}

export function OccurrenceList({ query }: { query: URLSearchParams }) {
  const qs = query.toString();
  const [cursors, setCursors] = usePages(qs);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => listPage(queryOf(query, cursor)), [qs, cursor]);
  const [live, setLive] = useState(0);
  const status = useLiveStatus();
  useEvidenceEvents(
    (subject) => {
      if (subject.startsWith('occurrence:')) {
        setLive((n) => n + 1);
        if (cursor === undefined) page.reload();
      }
    },
    undefined,
    // Re-read once live (events.ts): only the first page follows the log.
    () => cursor === undefined && page.reload(),
  );
  const [search, setSearch] = useState('');
  const go = (e: Event): void => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const p = new URLSearchParams();
    for (const k of FILTERS) {
      const v = form.get(k);
      if (typeof v === 'string' && v !== '') p.set(k, k === 'from' || k === 'to' ? linkTime(v) : v);
    }
    setCursors([]);
    location.hash = href('occurrences', undefined, p);
  };
  const find = (e: Event): void => {
    e.preventDefault();
    const s = search.trim();
    if (s === '') return;
    setCursors([]); // the same query again (no hashchange) starts at its first page too
    if (s.startsWith('occ_')) location.hash = href('occurrences', s);
    else location.hash = href('occurrences', undefined, new URLSearchParams({ creationKey: s }));
  };
  return (
    <section aria-labelledby="occ-h">
      <h1 id="occ-h">Occurrences</h1>
      <form class="search" role="search" onSubmit={find}>
        <label for="search">Search by occurrence id or creation key</label>
        <input id="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        <button type="submit">Find</button>
      </form>
      <form class="filters" onSubmit={go}>
        <Select name="phase" label="Phase" values={PHASES} value={query.get('phase')} />
        <Select name="outcome" label="Outcome" values={OUTCOMES} value={query.get('outcome')} />
        {(['lineage', 'profile', 'creationKey'] as const).map((k) => (
          <span class="field">
            <label for={`f-${k}`}>
              {k === 'creationKey' ? 'Creation key' : k[0]?.toUpperCase() + k.slice(1)}
            </label>
            <input id={`f-${k}`} name={k} value={query.get(k) ?? ''} />
          </span>
        ))}
        <span class="field">
          <label for="f-from">Created from</label>
          <input id="f-from" name="from" type="datetime-local" value={localInput(query.get('from'))} />
        </span>
        <span class="field">
          <label for="f-to">Created before</label>
          <input id="f-to" name="to" type="datetime-local" value={localInput(query.get('to'))} />
        </span>
        <button type="submit">Apply filters</button>
      </form>
      {/* No aria-live: a busy system would announce every event (docs/console.md "Accessibility"). */}
      <p class="muted">{liveLine(status, live)}</p>
      <ErrorNote error={page.error} />
      {page.loading && <Loading />}
      <div
        class="scroll"
        tabIndex={0}
        role="region"
        aria-label="Table (scrolls sideways on narrow screens)"
        aria-busy={page.loading}
      >
        <table>
          <caption class="sr-only">Occurrences, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Occurrence</th>
              <th scope="col">State</th>
              <th scope="col">Lineage</th>
              <th scope="col">Profile</th>
              <th scope="col">Creation key</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {(page.value?.occurrences ?? []).map((o) => (
              <tr>
                <td>
                  <a href={href('occurrences', o.id)}>{o.id}</a>
                </td>
                <td>
                  <StateBadge o={o} />
                </td>
                <td>
                  <a href={href('lineages', o.lineage)}>{o.lineage}</a>
                </td>
                <td>{o.provider.profileId}</td>
                <td>{o.creationBinding.key}</td>
                <td>
                  <Time ms={o.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page.value?.occurrences.length === 0 && <p class="muted">No occurrences match these filters.</p>}
      <Pager
        label="Pages of occurrences"
        cursors={cursors}
        next={page.value?.nextCursor}
        setCursors={setCursors}
        busy={page.loading}
      />
    </section>
  );
}

function Select(p: { name: string; label: string; values: readonly string[]; value: string | null }) {
  return (
    <span class="field">
      <label for={`f-${p.name}`}>{p.label}</label>
      <select id={`f-${p.name}`} name={p.name} value={p.value ?? ''}>
        <option value="">any</option>
        {p.values.map((v) => (
          <option value={v}>{v}</option>
        ))}
      </select>
    </span>
  );
}
