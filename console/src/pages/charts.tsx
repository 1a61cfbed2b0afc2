/** The overview's time chart and recent takeovers (GET /v1/evidence/histogram and /recent). */
import { api, ok } from '../api.js';
import { ErrorNote, Time } from '../format.js';
import { useLoad } from '../load.js';
import { href } from '../router.js';

const HOUR = 3600_000;

/** Bars drawn as SVG attributes (no inline style: the CSP forbids it). */
export function EntriesChart({ tick }: { tick: number }) {
  const to = Math.ceil(Date.now() / HOUR) * HOUR;
  const from = to - 24 * HOUR;
  const hist = useLoad(
    async () =>
      ok(
        await api.GET('/v1/evidence/histogram', {
          params: {
            query: {
              type: 'provider_entered',
              from: new Date(from).toISOString(),
              to: new Date(to).toISOString(),
              buckets: '24',
            },
          },
        }),
      ),
    [],
    tick,
  );
  const buckets = hist.value?.buckets ?? [];
  const max = Math.max(1, ...buckets.map((b) => b.count));
  // Unloaded or failed: no total, since "0 in all" would be a claim the server never made.
  const total = hist.value === undefined ? '…' : buckets.reduce((n, b) => n + b.count, 0);
  return (
    <figure class="chart">
      <figcaption>Provider entries per hour, last 24 hours ({total} in all)</figcaption>
      <ErrorNote error={hist.error} />
      <svg
        viewBox="0 0 240 80"
        role="img"
        aria-label={`Provider entries per hour over the last 24 hours: ${total}`}
      >
        {buckets.map((b, i) => {
          const h = Math.round((b.count / max) * 70);
          return (
            <rect class="bar" x={i * 10 + 1} y={75 - h} width={8} height={Math.max(h, 0.5)}>
              <title>{`${new Date(b.from).toLocaleString()}: ${b.count}`}</title>
            </rect>
          );
        })}
        <line class="axis" x1={0} y1={75.5} x2={240} y2={75.5} />
      </svg>
    </figure>
  );
}

export function RecentTakeovers({ tick }: { tick: number }) {
  const recent = useLoad(
    async () =>
      ok(
        await api.GET('/v1/evidence/recent', {
          params: { query: { type: 'generation_advanced', limit: '5' } },
        }),
      ),
    [],
    tick,
  );
  const events = recent.value?.events ?? [];
  return (
    <section aria-labelledby="takeovers-h">
      <h2 id="takeovers-h">Recent takeovers</h2>
      <ErrorNote error={recent.error} />
      {recent.value !== undefined && events.length === 0 && <p class="muted">None yet.</p>}
      <ul class="plain">
        {events.map((e) => {
          const lineage = e.subject.replace(/^lineage:/, '');
          const body = e.body as {
            generation?: number;
            retiredGeneration?: number | null;
            delivered?: { unresolved?: string[] };
          } | null;
          return (
            <li>
              <a href={href('lineages', lineage)}>{lineage}</a>: generation{' '}
              {body?.retiredGeneration ?? 'none'} → {body?.generation ?? '?'},{' '}
              {body?.delivered?.unresolved?.length ?? 0} unresolved handed over, by {e.actor},{' '}
              <Time ms={e.at} />
            </li>
          );
        })}
      </ul>
    </section>
  );
}
