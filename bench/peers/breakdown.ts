/**
 * Where a Baton HTTP call's time goes (issue 16, "p99 per Baton call"), from two scrapes of the
 * server's /metrics around the measured rounds, beside what the client saw:
 * - the server's own time per request (Fastify: from the request's arrival to the response sent)
 *   and the service command inside it (for acknowledge-and-settle that includes the status query);
 *   what the client saw beyond the server's time is the two event loops and the sockets;
 * - the store: transactions per COMMIT, queueing before the batch, time in COMMIT (with the
 *   inline writer the server's event loop is blocked for it), the checkpoint thread's passes and
 *   the batches held for them;
 * - the server's event-loop lag (prom-client's, since the previous scrape) and this process's.
 * Percentiles from histograms are bucket upper bounds (`≤`).
 */
type Scrape = Map<string, number>;

export async function scrape(url: string): Promise<Scrape> {
  const text = await (await fetch(url)).text();
  const out: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

const delta = (a: Scrape, b: Scrape, key: string): number => (b.get(key) ?? 0) - (a.get(key) ?? 0);

/** Count, mean (ms) and p99 bound (ms) of a histogram's series whose labels contain `match`. */
function histogram(a: Scrape, b: Scrape, name: string, match: string) {
  const buckets: [number, number][] = [];
  let count = 0;
  let sum = 0;
  for (const key of b.keys()) {
    if (!key.startsWith(name) || !key.includes(match)) continue;
    const d = delta(a, b, key);
    if (key.startsWith(`${name}_count`)) count += d;
    else if (key.startsWith(`${name}_sum`)) sum += d;
    else if (key.startsWith(`${name}_bucket`)) {
      const le = /le="([^"]+)"/.exec(key)?.[1] ?? '+Inf';
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      const i = buckets.findIndex(([x]) => x === bound);
      if (i >= 0) (buckets[i] as [number, number])[1] += d;
      else buckets.push([bound, d]);
    }
  }
  buckets.sort((x, y) => x[0] - y[0]);
  const p99 = buckets.find(([, n]) => n >= 0.99 * count)?.[0] ?? Number.NaN;
  return { count, meanMs: count > 0 ? (sum * 1000) / count : Number.NaN, p99Ms: p99 * 1000 };
}

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : String(x));

/** The breakdown's lines for one Baton HTTP system over the measured window of `seconds`. */
export function breakdown(a: Scrape, b: Scrape, seconds: number, benchLagP99Ms: number): string[] {
  const lines: string[] = [];
  const routes = [
    ['create-and-enter', 'route="/v1/occurrences/create-and-enter"', 'operation="create_and_enter"'],
    [
      'acknowledge-and-settle',
      'route="/v1/occurrences/:id/acknowledge-and-settle"',
      'operation="acknowledge_and_settle"',
    ],
  ] as const;
  for (const [call, route, op] of routes) {
    const r = histogram(a, b, 'baton_http_request_duration_seconds', route);
    const t = histogram(a, b, 'baton_transaction_duration_seconds', op);
    lines.push(
      `    ${call}: in the server mean ${ms(r.meanMs)} ms, p99 ≤ ${ms(r.p99Ms)} ms; its command mean ${ms(t.meanMs)} ms, p99 ≤ ${ms(t.p99Ms)} ms`,
    );
  }
  const d = (k: string) => delta(a, b, k);
  const txs = d('baton_store_committed_transactions_total');
  const commits = d('baton_store_commits_total');
  const commitS = d('baton_store_commit_seconds_total');
  const holds = d('baton_store_checkpoint_holds_total');
  lines.push(
    `    store: ${(txs / Math.max(1, commits)).toFixed(1)} transactions per COMMIT; queued before the batch ${ms((d('baton_store_wait_seconds_total') * 1000) / Math.max(1, txs))} ms per transaction; COMMIT ${ms((commitS * 1000) / Math.max(1, commits))} ms each, ${((100 * commitS) / seconds).toFixed(1)}% of the time`,
    `    checkpoints: ${d('baton_store_checkpoint_passes_total')} passes on the thread (${ms((d('baton_store_checkpoint_pass_seconds_total') * 1000) / Math.max(1, d('baton_store_checkpoint_passes_total')))} ms each), ${holds} batches held for a WAL restart (${ms((d('baton_store_checkpoint_hold_seconds_total') * 1000) / Math.max(1, holds))} ms and ${(d('baton_store_checkpoint_held_frames_total') / Math.max(1, holds)).toFixed(0)} frames copied each, the event loop free; SQLite alone copies ≈ 1000 inside a COMMIT), ${d('baton_store_wal_restarts_total')} restarts`,
    `    event-loop lag p99: server ${ms((b.get('nodejs_eventloop_lag_p99_seconds') ?? Number.NaN) * 1000)} ms (10 ms resolution), bench process ${ms(benchLagP99Ms)} ms`,
  );
  return lines;
}
