/**
 * Occurrences: filters (phase, outcome, lineage, profile, creation key, time), search by id or
 * creation key, cursor pages over the list API's index, live updates via GET /v1/events.
 */
import { useState } from 'preact/hooks';
import { api, inputTime, linkTime, localInput, ok } from '../api.js';
import type { paths } from '../generated/api.js';
import { useEvidenceEvents, useLiveStatus, type LiveStatus } from '../events.js';
import { ErrorNote, Loading, Pager, Time, usePages } from '../format.js';
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

type Filter = (typeof FILTERS)[number];
type Draft = Readonly<Record<Filter, string>>;

/** The filters as a link names them, as the form shows them (times in the viewer's zone). */
function draftOf(params: URLSearchParams): Draft {
  const d = {} as Record<Filter, string>;
  for (const k of FILTERS)
    d[k] = k === 'from' || k === 'to' ? localInput(params.get(k)) : (params.get(k) ?? '');
  return d;
}

/**
 * The filters as typed, kept until applied, with the query they were typed under: every live
 * evidence event re-renders the list, and a form whose fields were bound to the URL put the link's
 * values back over what was typed, so Apply sent what was left. A navigation (another query: a
 * link, Back/Forward, Apply itself) shows that query's values again; derived while rendering, as
 * `usePages` derives its cursors.
 */
function useDraft(qs: string, params: URLSearchParams): [Draft, (k: Filter, v: string) => void] {
  const [draft, setDraft] = useState<{ qs: string; values: Draft }>(() => ({ qs, values: draftOf(params) }));
  const values = draft.qs === qs ? draft.values : draftOf(params);
  const set = (k: Filter, v: string): void =>
    setDraft((d) => ({ qs, values: { ...(d.qs === qs ? d.values : draftOf(params)), [k]: v } }));
  return [values, set];
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
  const [draft, setDraft] = useDraft(qs, query);
  const go = (e: Event): void => {
    e.preventDefault();
    const p = new URLSearchParams();
    for (const k of FILTERS) {
      const v = draft[k];
      if (v !== '') p.set(k, k === 'from' || k === 'to' ? linkTime(v) : v);
    }
    setCursors([]);
    location.hash = href('occurrences', undefined, p);
  };
  const find = async (e: Event): Promise<void> => {
    e.preventDefault();
    const s = search.trim();
    if (s === '') return;
    setCursors([]); // the same query again (no hashchange) starts at its first page too
    const byKey = href('occurrences', undefined, new URLSearchParams({ creationKey: s }));
    if (!s.startsWith('occ_')) {
      location.hash = byKey;
      return;
    }
    // Ids start `occ_`, but a creation key may too: the id page when an occurrence has that id,
    // else the key. Any other answer (a refusal, no answer) opens the id page, which shows it.
    const r = await api.GET('/v1/occurrences/{id}', { params: { path: { id: s } } }).catch(() => undefined);
    location.hash = r?.response.status === 404 ? byKey : href('occurrences', s);
  };
  return (
    <section aria-labelledby="occ-h">
      <h1 id="occ-h">Occurrences</h1>
      <form class="search" role="search" onSubmit={(e) => void find(e)}>
        <label for="search">Search by occurrence id or creation key</label>
        <input id="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        <button type="submit">Find</button>
      </form>
      <form class="filters" onSubmit={go}>
        <Select name="phase" label="Phase" values={PHASES} value={draft.phase} set={setDraft} />
        <Select name="outcome" label="Outcome" values={OUTCOMES} value={draft.outcome} set={setDraft} />
        {(['lineage', 'profile', 'creationKey'] as const).map((k) => (
          <span class="field">
            <label for={`f-${k}`}>
              {k === 'creationKey' ? 'Creation key' : k[0]?.toUpperCase() + k.slice(1)}
            </label>
            <input
              id={`f-${k}`}
              name={k}
              value={draft[k]}
              onInput={(e) => setDraft(k, (e.target as HTMLInputElement).value)}
            />
          </span>
        ))}
        <span class="field">
          <label for="f-from">Created from</label>
          <input
            id="f-from"
            name="from"
            type="datetime-local"
            value={draft.from}
            onInput={(e) => setDraft('from', (e.target as HTMLInputElement).value)}
          />
        </span>
        <span class="field">
          <label for="f-to">Created before</label>
          <input
            id="f-to"
            name="to"
            type="datetime-local"
            value={draft.to}
            onInput={(e) => setDraft('to', (e.target as HTMLInputElement).value)}
          />
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

function Select(p: {
  name: 'phase' | 'outcome';
  label: string;
  values: readonly string[];
  value: string;
  set: (k: 'phase' | 'outcome', v: string) => void;
}) {
  return (
    <span class="field">
      <label for={`f-${p.name}`}>{p.label}</label>
      <select
        id={`f-${p.name}`}
        name={p.name}
        value={p.value}
        onChange={(e) => p.set(p.name, (e.target as HTMLSelectElement).value)}
      >
        <option value="">any</option>
        {p.values.map((v) => (
          <option value={v}>{v}</option>
        ))}
      </select>
    </span>
  );
}
