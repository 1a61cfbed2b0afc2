/**
 * Lineages: every lineage a page at a time (GET /v1/lineages, keyset pages over the primary key),
 * and one lineage: its generations over time, who took over when, and what each takeover handed
 * over — a page of its history at a time (the route answers pages: `evidenceNextCursor`).
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.js';
import { ErrorNote, Loading, Pager, Time } from '../format.js';
import { useLoad } from '../load.js';
import { href } from '../router.js';

/** Positions of a lineage's history per page: generations and their takeover events alike. */
const HISTORY_PAGE = '50';

function LineageView({ lineage }: { lineage: string }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const view = useLoad(async () => {
    const query = { limit: HISTORY_PAGE, ...(cursor === undefined ? {} : { cursor }) };
    return ok(await api.GET('/v1/lineages/{lineage}', { params: { path: { lineage }, query } }));
  }, [lineage, cursor]);
  const v = view.value;
  // The pager stays where it is while the next page loads, so the button pressed keeps focus.
  return (
    <>
      {view.loading && <Loading />}
      <ErrorNote error={view.error} />
      {v !== undefined && (
        <>
          <h2>
            {v.id}: generation {v.generation}
          </h2>
          <p>
            {/* The lineage's, on every page of its history (not the page's generations alone). */}
            Retired generations:{' '}
            {v.retiredGenerations.length === 0 ? 'none' : v.retiredGenerations.join(', ')}
          </p>
          <div
            class="scroll"
            tabIndex={0}
            role="region"
            aria-label="Table (scrolls sideways on narrow screens)"
          >
            <table>
              <caption>Generations</caption>
              <thead>
                <tr>
                  <th scope="col">Generation</th>
                  <th scope="col">Issued</th>
                  <th scope="col">Retired</th>
                </tr>
              </thead>
              <tbody>
                {v.credentials.map((c) => (
                  <tr>
                    <td>{c.generation}</td>
                    <td>
                      <Time ms={c.issuedAt} />
                    </td>
                    <td>
                      {c.retiredAt === null ? (
                        <span class="badge good">current</span>
                      ) : (
                        <Time ms={c.retiredAt} />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2>Takeovers and handovers</h2>
          <ol class="timeline">
            {v.evidence.map((e) => (
              <li>
                <strong>{e.type}</strong> <Time ms={e.at} /> · {e.actor}
                <details>
                  <summary>What was handed over (seq {e.seq})</summary>
                  <pre>{JSON.stringify(e.body, null, 2)}</pre>
                </details>
              </li>
            ))}
          </ol>
        </>
      )}
      <Pager
        label="Pages of the lineage's history"
        cursors={cursors}
        next={v?.evidenceNextCursor}
        setCursors={setCursors}
        busy={view.loading}
      />
      {v !== undefined && (
        <p>
          <a href={href('occurrences', undefined, new URLSearchParams({ lineage: v.id }))}>
            Occurrences of {v.id}
          </a>
        </p>
      )}
    </>
  );
}

const PAGE = '25';

function LineageList() {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(
    async () =>
      ok(
        await api.GET('/v1/lineages', {
          params: { query: cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor } },
        }),
      ),
    [cursor],
  );
  const next = page.value?.nextCursor ?? null;
  return (
    <>
      <h2>Every lineage</h2>
      <ErrorNote error={page.error} />
      {page.loading && <Loading />}
      <div
        class="scroll"
        tabIndex={0}
        role="region"
        aria-label="Lineages (scrolls sideways on narrow screens)"
        aria-busy={page.loading}
      >
        <table>
          <caption class="sr-only">Lineages in name order</caption>
          <thead>
            <tr>
              <th scope="col">Lineage</th>
              <th scope="col">Generation</th>
              <th scope="col">Retired generations</th>
              <th scope="col">Created</th>
              <th scope="col">Last takeover</th>
            </tr>
          </thead>
          <tbody>
            {(page.value?.lineages ?? []).map((l) => (
              <tr>
                <td>
                  <a href={href('lineages', l.id)}>{l.id}</a>
                </td>
                <td class="num">{l.generation}</td>
                <td class="num">{l.generation - 1}</td>
                <td>
                  <Time ms={l.createdAt} />
                </td>
                <td>
                  <Time ms={l.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager
        label="Pages of lineages"
        cursors={cursors}
        next={next}
        setCursors={setCursors}
        busy={page.loading}
      />
    </>
  );
}

export function LineagePage({ lineage }: { lineage: string | undefined }) {
  const [name, setName] = useState(lineage ?? '');
  return (
    <section aria-labelledby="l-h">
      <h1 id="l-h">Lineages</h1>
      <form
        class="search"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim() !== '') location.hash = href('lineages', name.trim());
        }}
      >
        <label for="lineage">Lineage</label>
        <input id="lineage" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit">Show</button>
      </form>
      {lineage !== undefined ? <LineageView key={lineage} lineage={lineage} /> : <LineageList />}
    </section>
  );
}
