/**
 * Authority budgets: reserved and consumed against the total, as bars (meters), in id order, a
 * page at a time by the API's cursor (`GET /v1/authorities`), so every budget can be reached.
 */
import { api, ok } from '../api.js';
import { ErrorNote, Loading, Pager, usePages } from '../format.js';
import { useLoad } from '../load.js';

const PAGE = '50';

export function AuthoritiesPage() {
  const [cursors, setCursors] = usePages('');
  const cursor = cursors[cursors.length - 1];
  const list = useLoad(async () => {
    const query = { limit: PAGE, ...(cursor === undefined ? {} : { cursor }) };
    return ok(await api.GET('/v1/authorities', { params: { query } }));
  }, [cursor]);
  return (
    <section aria-labelledby="a-h">
      <h1 id="a-h">Authority budgets</h1>
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
          <caption class="sr-only">Authority budgets</caption>
          <thead>
            <tr>
              <th scope="col">Authority</th>
              <th scope="col">Reserved</th>
              <th scope="col">Consumed</th>
              <th scope="col">Total</th>
            </tr>
          </thead>
          <tbody>
            {(list.value?.authorities ?? []).map((a) => (
              <tr>
                <th scope="row">{a.id}</th>
                <td>
                  <meter min={0} max={a.total} value={a.reserved} aria-label={`${a.id} reserved`} />{' '}
                  {a.reserved}
                </td>
                <td>
                  <meter min={0} max={a.total} value={a.consumed} aria-label={`${a.id} consumed`} />{' '}
                  {a.consumed}
                </td>
                <td>
                  {a.total} {a.unit}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.value?.authorities.length === 0 && cursor === undefined && (
        <p class="muted">No authority budgets.</p>
      )}
      <Pager
        label="Pages of authority budgets"
        cursors={cursors}
        next={list.value?.nextCursor}
        setCursors={setCursors}
        busy={list.loading}
      />
    </section>
  );
}
