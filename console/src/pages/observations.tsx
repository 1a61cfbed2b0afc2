/**
 * Observations (docs/observations.md): FIC_obs per day over the last week with its worst-case
 * bound, CIF (an incomplete-aware composite that never authorizes anything, OBS), and the
 * continuity coverage report of the handoff records.
 */
import { api, ok } from '../api.js';
import { ErrorNote } from '../format.js';
import { useLoad } from '../load.js';

const DAY = 86_400_000;

/**
 * The last seven UTC days, each labelled with its own UTC date: the windows are UTC midnights,
 * so a local date would name the wrong day west or east of Greenwich.
 */
function days(now = Date.now()): { from: string; to: string; label: string }[] {
  const end = Math.ceil(now / DAY) * DAY;
  return Array.from({ length: 7 }, (_, i) => {
    const from = end - (7 - i) * DAY;
    return {
      from: new Date(from).toISOString(),
      to: new Date(from + DAY).toISOString(),
      label: new Date(from).toISOString().slice(0, 10),
    };
  });
}

/** The metric's reason codes in words (docs/observations.md "Metrics"), the code kept beside. */
const REASONS: Readonly<Record<string, string>> = {
  undefined_n_zero: 'undefined: no occurrence was entered that day (n = 0)',
  universe_unknown:
    'unknown: not every bypass path is disclosed as absent, so the number of all actions (N) is not known',
};

function Reason({ code }: { code: string | null | undefined }) {
  if (code === null || code === undefined) return <>—</>;
  return (
    <>
      {REASONS[code] ?? code} <code>{code}</code>
    </>
  );
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
      <h2>FIC_obs per day (UTC)</h2>
      <p>
        <strong>n</strong> counts the occurrences entered with a provider that UTC day; <strong>v</strong>{' '}
        those of them whose evidence passes every continuity check (chains verify, the entering generation was
        the lineage&rsquo;s current one, what was entered is what was bound, and a Mission-bound one&rsquo;s
        Mission allowed it). FIC_obs is v / n. The coverage report below counts observation records instead
        (one per takeover handoff, one per Mission-stop barrier, and any submitted), so its record count is a
        different number from n and need not match it.
      </p>
      <ErrorNote error={fic.error} />
      <div class="scroll" tabIndex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
        <table>
          <caption class="sr-only">FIC_obs per day over the last seven days</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Entered (n)</th>
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
                <td>{r.value === null ? <Reason code={r.reason} /> : r.value.decimal}</td>
                <td>
                  {r.global_bound === null ? (
                    <Reason code={r.global_reason} />
                  ) : (
                    `${r.global_bound.lower.decimal} … ${r.global_bound.upper.decimal}`
                  )}
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
