/** Authority budgets: reserved and consumed against the total, as bars (meters). */
import { api, ok } from '../api.js';
import { ErrorNote } from '../format.js';
import { useLoad } from '../load.js';

export function AuthoritiesPage() {
  const list = useLoad(
    async () => ok(await api.GET('/v1/authorities', { params: { query: { limit: '100' } } })),
    [],
  );
  return (
    <section aria-labelledby="a-h">
      <h1 id="a-h">Authority budgets</h1>
      <ErrorNote error={list.error} />
      <div class="scroll" tabIndex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
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
      {list.value?.truncated === true && <p class="muted">Only the first 100 are shown.</p>}
    </section>
  );
}
