/**
 * The overview's health panels and refusals chart (issue 14 §3): the background reconciler and
 * the webhook receiver as this server saw them since it started (GET /v1/health/reconciler,
 * /v1/health/webhooks), and refusals over time from the server's in-memory history
 * (GET /v1/refusals/histogram) — labelled "since this server started", because that is all it is.
 */
import { api, ok } from '../api.js';
import { age, ErrorNote, Time, useServerNow } from '../format.js';
import type { operations } from '../generated/api.js';
import { useLoad, type Loaded } from '../load.js';

/** Delivery results that are refusals (routes/webhooks.ts answers them with a problem). */
const REFUSED = new Set(['unknown_occurrence', 'unauthenticated', 'stale', 'invalid', 'no_source']);

function CountList(p: {
  counts: Readonly<Record<string, number>>;
  empty: string;
  mark?: ReadonlySet<string>;
}) {
  const { counts, empty, mark } = p;
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return <p class="muted">{empty}</p>;
  return (
    <ul class="plain">
      {entries.map(([k, n]) => (
        <li>
          <code>{k}</code>: {n}
          {mark?.has(k) === true && <span class="badge bad">refused</span>}
        </li>
      ))}
    </ul>
  );
}

type ReconcilerHealth = operations['reconcilerHealth']['responses'][200]['content']['application/json'];

/** Loaded by the overview, which also shows the store-wide oldest unresolved occurrence from it. */
export function ReconcilerPanel({ health: h }: { health: Loaded<ReconcilerHealth> }) {
  const v = h.value;
  const now = useServerNow(v?.now);
  return (
    <section class="panel" aria-labelledby="rec-h">
      <h2 id="rec-h">Reconciler</h2>
      <ErrorNote error={h.error} />
      {v !== undefined && (
        <>
          <p>
            {v.background === null ? (
              <>
                No background reconciler runs in this server (<code>baton serve --reconcile-every</code>{' '}
                starts one); &ldquo;Reconcile now&rdquo; and <code>baton reconcile</code> still work.
              </>
            ) : (
              <>
                Background reconciler every {v.background.everyMs} ms, {v.background.concurrency} at once;{' '}
                {v.ticks} passes, the last <Time ms={v.lastTickAt} /> asked about {v.lastTickAsked}.
              </>
            )}
          </p>
          <p>
            Oldest unresolved occurrence:{' '}
            {v.oldestUnresolvedEnteredAt === null ? (
              'none'
            ) : (
              <>
                entered <Time ms={v.oldestUnresolvedEnteredAt} />, {age(v.oldestUnresolvedEnteredAt, now)} ago
              </>
            )}
            .
          </p>
          <p>
            {v.lookups} status lookups since this server started <Time ms={v.since} />
            {v.lastLookupAt !== null && (
              <>
                , the last <Time ms={v.lastLookupAt} />
              </>
            )}
            . Answers by verdict:
          </p>
          <CountList counts={v.answersByVerdict} empty="No answers yet." />
        </>
      )}
    </section>
  );
}

export function WebhookPanel({ tick }: { tick: number }) {
  const h = useLoad(async () => ok(await api.GET('/v1/health/webhooks')), [], tick);
  const v = h.value;
  const now = useServerNow(v?.now);
  return (
    <section class="panel" aria-labelledby="wh-h">
      <h2 id="wh-h">Webhook receiver</h2>
      <ErrorNote error={h.error} />
      {v !== undefined && (
        <>
          <p>
            {v.deliveries} {v.deliveries === 1 ? 'delivery' : 'deliveries'} since this server started{' '}
            <Time ms={v.since} />.{' '}
            {v.lastDelivery === null ? (
              'None yet.'
            ) : (
              <>
                The last <Time ms={v.lastDelivery.at} /> ({age(v.lastDelivery.at, now)} ago):{' '}
                <code>{v.lastDelivery.result}</code>.
              </>
            )}{' '}
            {v.lastRecordedAt !== null && (
              <>
                Last recorded as evidence <Time ms={v.lastRecordedAt} />.
              </>
            )}
          </p>
          <CountList counts={v.deliveriesByResult} empty="No deliveries yet." mark={REFUSED} />
        </>
      )}
    </section>
  );
}

/** Bars drawn as SVG attributes (no inline style: the CSP forbids it), one per 5-minute bucket. */
export function RefusalsChart({ tick }: { tick: number }) {
  const h = useLoad(async () => ok(await api.GET('/v1/refusals/histogram')), [], tick);
  const v = h.value;
  const width = 288;
  const buckets = v?.buckets ?? [];
  const max = Math.max(1, ...buckets.map((b) => b.total));
  // Unloaded or failed: no total and no "no refusals", claims the server never made.
  const total = v === undefined ? '…' : buckets.reduce((n, b) => n + b.total, 0);
  const first = v === undefined ? 0 : v.now - (v.now % v.bucketMs) - (width - 1) * v.bucketMs;
  const byCode: Record<string, number> = {};
  for (const b of buckets) for (const [k, n] of Object.entries(b.byCode)) byCode[k] = (byCode[k] ?? 0) + n;
  return (
    <figure class="chart">
      <figcaption>
        Refusals per 5 minutes, last 24 hours, since this server started{' '}
        {v === undefined ? '…' : <Time ms={v.since} />} ({total} in all; kept in the server&rsquo;s memory,
        not in the evidence log)
      </figcaption>
      <ErrorNote error={h.error} />
      <svg viewBox={`0 0 ${width} 80`} role="img" aria-label={`Refusals over the last 24 hours: ${total}`}>
        {v !== undefined &&
          buckets.map((b) => {
            const x = Math.round((b.from - first) / v.bucketMs);
            const hgt = Math.round((b.total / max) * 70);
            const codes = Object.entries(b.byCode)
              .map(([k, n]) => `${k} ${n}`)
              .join(', ');
            return (
              <rect class="bar refusal" x={x} y={75 - hgt} width={1} height={Math.max(hgt, 0.5)}>
                <title>{`${new Date(b.from).toLocaleString()}: ${b.total} (${codes})`}</title>
              </rect>
            );
          })}
        <line class="axis" x1={0} y1={75.5} x2={width} y2={75.5} />
      </svg>
      {v !== undefined && <CountList counts={byCode} empty="No refusals since this server started." />}
    </figure>
  );
}
