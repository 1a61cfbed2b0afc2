/**
 * Observations (docs/observations.md): FIC_obs per day over the last week with its worst-case
 * bound, CIF (an incomplete-aware composite that never authorizes anything, OBS), and the
 * continuity coverage report of the handoff records.
 */
import { api, ok } from '../api.js';
import { ErrorNote } from '../format.js';
import { useLoad } from '../load.js';

const DAY = 86_400_000;

function days(): { from: string; to: string; label: string }[] {
  const end = Math.ceil(Date.now() / DAY) * DAY;
  return Array.from({ length: 7 }, (_, i) => {
    const from = end - (7 - i) * DAY;
    return {
      from: new Date(from).toISOString(),
      to: new Date(from + DAY).toISOString(),
      label: new Date(from).toLocaleDateString(),
    };
  });
}

export function ObservationsPage() {
  const fic = useLoad(
    () =>
      Promise.all(
        days().map(async (d) => ({
          ...d,
          r: ok(
            await api.GET('/v1/continuity/metrics/fic', { params: { query: { from: d.from, to: d.to } } }),
          ),
        })),
      ),
    [],
  );
  const cif = useLoad(
    async () => ok(await api.GET('/v1/continuity/metrics/cif', { params: { query: {} } })),
    [],
  );
  const coverage = useLoad(async () => ok(await api.GET('/v1/continuity/coverage')), []);
  return (
    <section aria-labelledby="obs-h">
      <h1 id="obs-h">Observations</h1>
      <h2>FIC_obs per day (handoff records)</h2>
      <ErrorNote error={fic.error} />
      <div class="scroll" tabIndex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
        <table>
          <caption class="sr-only">FIC_obs per day over the last seven days</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Handoffs (n)</th>
              <th scope="col">Verified (v)</th>
              <th scope="col">FIC_obs</th>
              <th scope="col">Worst-case bound</th>
            </tr>
          </thead>
          <tbody>
            {(fic.value ?? []).map(({ label, r }) => (
              <tr>
                <td>{label}</td>
                <td>{r.n}</td>
                <td>{r.v}</td>
                <td>{r.value?.decimal ?? r.reason ?? '—'}</td>
                <td>
                  {r.global_bound === null
                    ? (r.global_reason ?? '—')
                    : `${r.global_bound.lower.decimal} … ${r.global_bound.upper.decimal}`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>CIF</h2>
      <ErrorNote error={cif.error} />
      {cif.value !== undefined && (
        <p>
          {cif.value.complete ? `CIF ${cif.value.value?.decimal ?? '—'}` : 'CIF incomplete'} (weights{' '}
          {cif.value.weights_version}
          {cif.value.unresolved.length > 0 && <>; unresolved: {cif.value.unresolved.join(', ')}</>}). It never
          authorizes anything.
        </p>
      )}
      <h2>Coverage report</h2>
      <ErrorNote error={coverage.error} />
      {coverage.value !== undefined && (
        <details>
          <summary>baton.continuity-report/1</summary>
          <pre>{JSON.stringify(coverage.value, null, 2)}</pre>
        </details>
      )}
    </section>
  );
}
