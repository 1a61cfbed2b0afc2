/**
 * Missions and harness items (docs/harness.md): every governed work item with its state, source
 * (kind, action class, Mission binding) and last change; one item's evidence chain, where
 * suppressed and paused work says why; a Mission's stored view and what a check concludes now.
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.js';
import { age, ErrorNote, Loading, Pager, Time, usePages } from '../format.js';
import { useLoad } from '../load.js';
import { href } from '../router.js';

const ITEM_PAGE = '50';

const STATES = ['queued', 'running', 'paused', 'suppressed', 'handed_off', 'terminated', 'done'];

function bindingOf(item: Record<string, unknown>): { origin: string; id: string } | undefined {
  const b = item['binding'] as Record<string, unknown> | null | undefined;
  const origin = b?.['mission_origin'];
  const id = b?.['mission_id'];
  return typeof origin === 'string' && typeof id === 'string' ? { origin, id } : undefined;
}

/** One item and its chain, a page at a time (the route answers pages: `evidenceNextCursor`). */
function ItemDetail({ id }: { id: string }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const item = useLoad(async () => {
    const query = { limit: ITEM_PAGE, ...(cursor === undefined ? {} : { cursor }) };
    return ok(await api.GET('/v1/harness/items/{id}', { params: { path: { id }, query } }));
  }, [id, cursor]);
  const v = item.value;
  // The pager stays where it is while the next page loads, so the button pressed keeps focus.
  return (
    <>
      {item.loading && <Loading />}
      <ErrorNote error={item.error} />
      {v !== undefined && (
        <>
          <h2>
            Item {v.item.id}: {v.item.state}
          </h2>
          <ol class="timeline">
            {v.evidence.map((e) => (
              <li>
                <strong>{String(e.type)}</strong> <Time ms={typeof e.at === 'number' ? e.at : undefined} /> ·{' '}
                {String(e.actor)}
                <details>
                  <summary>Body (seq {String(e.seq)})</summary>
                  <pre>{JSON.stringify(e.body, null, 2)}</pre>
                </details>
              </li>
            ))}
          </ol>
        </>
      )}
      <Pager
        label="Pages of the item's evidence"
        cursors={cursors}
        next={v?.evidenceNextCursor}
        setCursors={setCursors}
        busy={item.loading}
      />
    </>
  );
}

function MissionView({ origin, id }: { origin: string; id: string }) {
  const view = useLoad(
    async () =>
      ok(await api.GET('/v1/missions/{origin}/{missionId}', { params: { path: { origin, missionId: id } } })),
    [origin, id],
  );
  if (view.value === undefined) return <ErrorNote error={view.error} />;
  return (
    <>
      <h2>
        Mission {id} at {origin}
      </h2>
      <details open>
        <summary>What a check concludes now</summary>
        <pre>{JSON.stringify(view.value.assessment, null, 2)}</pre>
      </details>
      <details>
        <summary>Stored view (freshness, source)</summary>
        <pre>{JSON.stringify(view.value.view, null, 2)}</pre>
      </details>
    </>
  );
}

export function HarnessPage({ arg, query }: { arg: string | undefined; query: URLSearchParams }) {
  // The filter is the link's, as on the occurrences list: a later link, Back/Forward or the nav
  // link (no query) changes it, and choosing a state writes it into the link.
  const state = query.get('state') ?? '';
  const [cursors, setCursors] = usePages(state);
  const cursor = cursors[cursors.length - 1];
  const setState = (next: string): void => {
    const q = new URLSearchParams(query);
    if (next === '') q.delete('state');
    else q.set('state', next);
    setCursors([]); // the same state again (no hashchange) starts at its first page too
    location.hash = href('harness', arg, q);
  };
  const list = useLoad(async () => {
    const q = {
      limit: ITEM_PAGE,
      ...(state === '' ? {} : { state }),
      ...(cursor === undefined ? {} : { cursor }),
    };
    return ok(await api.GET('/v1/harness/items', { params: { query: q } }));
  }, [state, cursor]);
  const mission =
    query.get('origin') !== null && arg !== undefined
      ? { origin: query.get('origin') ?? '', id: arg }
      : undefined;
  return (
    <section aria-labelledby="h-h">
      <h1 id="h-h">Missions and harness items</h1>
      <span class="field">
        <label for="h-state">State</label>
        <select id="h-state" value={state} onChange={(e) => setState((e.target as HTMLSelectElement).value)}>
          <option value="">any</option>
          {STATES.map((s) => (
            <option value={s}>{s}</option>
          ))}
        </select>
      </span>
      <ErrorNote error={list.error} />
      {list.loading && <Loading />}
      <div
        class="scroll"
        tabIndex={0}
        role="region"
        aria-label="Table (scrolls sideways on narrow screens)"
        aria-busy={list.loading}
      >
        <table>
          <caption class="sr-only">Harness work items</caption>
          <thead>
            <tr>
              <th scope="col">Item</th>
              <th scope="col">State</th>
              <th scope="col">Source</th>
              <th scope="col">Mission</th>
              <th scope="col">Last change</th>
            </tr>
          </thead>
          <tbody>
            {(list.value?.items ?? []).map((i) => {
              const m = bindingOf(i);
              return (
                <tr>
                  <td>
                    <a href={href('harness', i.id)}>{i.id}</a>
                  </td>
                  <td>
                    <span
                      class={i.state === 'suppressed' || i.state === 'paused' ? 'badge bad' : 'badge plain'}
                    >
                      {i.state}
                    </span>
                  </td>
                  <td>
                    {i.kind} · {i.actionClass}
                  </td>
                  <td>
                    {m === undefined ? (
                      '—'
                    ) : (
                      <a href={href('harness', m.id, new URLSearchParams({ origin: m.origin }))}>{m.id}</a>
                    )}
                  </td>
                  <td>
                    {i.updatedAt === undefined ? '—' : <Time ms={i.updatedAt} />}{' '}
                    {i.updatedAt !== undefined && <span class="muted">({age(i.updatedAt)} ago)</span>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {list.value?.items.length === 0 && <p class="muted">No work items.</p>}
      <Pager
        label="Pages of work items"
        cursors={cursors}
        next={list.value?.nextCursor}
        setCursors={setCursors}
        busy={list.loading}
      />
      {mission !== undefined && <MissionView origin={mission.origin} id={mission.id} />}
      {arg !== undefined && mission === undefined && <ItemDetail key={arg} id={arg} />}
    </section>
  );
}
