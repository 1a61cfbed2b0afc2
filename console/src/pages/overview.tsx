/** Overview: counts by phase and outcome, unresolved work first (docs/console.md). */
import { api, ok } from '../api.js';
import { useEvidenceEvents } from '../events.js';
import { age, ErrorNote, Time, useServerNow } from '../format.js';
import { useLoad } from '../load.js';
import { href } from '../router.js';
import { StateBadge } from './occurrences.js';
import { EntriesChart, RecentTakeovers } from './charts.js';
import { ReconcilerPanel, RefusalsChart, WebhookPanel } from './health.js';
import { useState } from 'preact/hooks';

function Bars({ title, values }: { title: string; values: Readonly<Record<string, number>> }) {
  const max = Math.max(1, ...Object.values(values));
  return (
    <figure class="bars">
      <figcaption>{title}</figcaption>
      <table>
        <tbody>
          {Object.entries(values).map(([k, v]) => (
            <tr>
              <th scope="row">{k}</th>
              <td>
                <meter min={0} max={max} value={v} aria-label={`${k}: ${v}`} />
              </td>
              <td class="num">{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

export function Overview() {
  // Each event only counts; every panel re-reads on its own throttled reload (load.ts).
  const [tick, setTick] = useState(0);
  const reload = (): void => setTick((n) => n + 1);
  useEvidenceEvents(reload, undefined, reload);
  const counts = useLoad(async () => ok(await api.GET('/v1/counts')), [], tick);
  const open = useLoad(
    async () =>
      ok(
        await api.GET('/v1/occurrences', {
          // Every unresolved one (phase `entered`), whatever its outcome so far: a payment the
          // provider answered `pending` (outcome `accepted`) is as open as one never answered.
          params: { query: { phase: 'entered', limit: '10' } },
        }),
      ),
    [],
    tick,
  );
  // The store-wide oldest unresolved occurrence (one indexed MIN), shared with the reconciler panel.
  const health = useLoad(async () => ok(await api.GET('/v1/health/reconciler')), [], tick);
  const now = useServerNow(health.value?.now);
  const c = counts.value;
  const unresolved = (open.value?.occurrences ?? []).filter((o) => o.unresolved);
  const oldest = health.value?.oldestUnresolvedEnteredAt ?? null;
  return (
    <section aria-labelledby="ov-h">
      <h1 id="ov-h">Overview</h1>
      <ErrorNote error={counts.error ?? open.error} />
      <h2>Unresolved first</h2>
      <p class="big">
        <strong>{c?.unresolved ?? '…'}</strong> unresolved, <strong>{c?.conflicts ?? '…'}</strong> in
        conflict, of {c?.total ?? '…'} occurrences.
        {oldest !== null && health.value !== undefined && (
          <>
            {' '}
            The oldest unresolved was entered <Time ms={oldest} />, {age(oldest, now)} ago.
          </>
        )}
      </p>
      <ul class="plain">
        {unresolved.map((o) => (
          <li>
            <a href={href('occurrences', o.id)}>{o.id}</a> <StateBadge o={o} /> {o.lineage} · created{' '}
            <Time ms={o.createdAt} />
          </li>
        ))}
      </ul>
      {c !== undefined && (
        <div class="grid">
          <Bars title="By phase" values={c.byPhase} />
          <Bars title="By outcome" values={c.byOutcome} />
        </div>
      )}
      <EntriesChart tick={tick} />
      <RefusalsChart tick={tick} />
      <RecentTakeovers tick={tick} />
      <div class="grid">
        <ReconcilerPanel health={health} />
        <WebhookPanel tick={tick} />
      </div>
    </section>
  );
}
