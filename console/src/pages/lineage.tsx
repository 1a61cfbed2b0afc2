/** A lineage: its generations over time, who took over when, and what each takeover handed over. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.js';
import { ErrorNote, Time } from '../format.js';
import { useLoad } from '../load.js';
import { href } from '../router.js';

function LineageView({ lineage }: { lineage: string }) {
  const view = useLoad(
    async () => ok(await api.GET('/v1/lineages/{lineage}', { params: { path: { lineage } } })),
    [lineage],
  );
  const v = view.value;
  if (v === undefined) return <ErrorNote error={view.error} />;
  return (
    <>
      <h2>
        {v.id}: generation {v.generation}
      </h2>
      <p>
        Retired generations: {v.retiredGenerations.length === 0 ? 'none' : v.retiredGenerations.join(', ')}
      </p>
      <div class="scroll" tabIndex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
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
                  {c.retiredAt === null ? <span class="badge good">current</span> : <Time ms={c.retiredAt} />}
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
      <p>
        <a href={href('occurrences', undefined, new URLSearchParams({ lineage: v.id }))}>
          Occurrences of {v.id}
        </a>
      </p>
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
      {lineage !== undefined && <LineageView lineage={lineage} />}
    </section>
  );
}
