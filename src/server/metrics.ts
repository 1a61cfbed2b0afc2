/**
 * Prometheus metrics in the text exposition format 0.0.4, written by hand (a few counters, one
 * gauge family and one histogram do not need a library). Counters are per process; gauges read the
 * database at scrape time, so several servers sharing PostgreSQL report the same unresolved count.
 */
import type { OccurrenceCounts } from '../occurrences/index.js';
import type { CommitStats } from '../store/engine.js';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Seconds; one command is one transaction, typically well under 10 ms on SQLite. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

interface Histogram {
  readonly counts: number[];
  sum: number;
  count: number;
}

function escapeLabel(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

function labels(pairs: Readonly<Record<string, string>>): string {
  const parts = Object.entries(pairs).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function family(name: string, type: string, help: string, lines: readonly string[]): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${lines.join('')}`;
}

function num(n: number): string {
  return Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
}

export class Metrics {
  #entries = 0;
  readonly #refusals = new Map<string, number>();
  readonly #requests = new Map<string, number>();
  readonly #transactions = new Map<string, Histogram>();

  countEntry(): void {
    this.#entries += 1;
  }

  countRefusal(code: string): void {
    this.#refusals.set(code, (this.#refusals.get(code) ?? 0) + 1);
  }

  countRequest(method: string, route: string, status: number): void {
    const key = JSON.stringify([method, route, String(status)]);
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  observeTransaction(operation: string, seconds: number): void {
    let h = this.#transactions.get(operation);
    if (h === undefined) {
      h = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.#transactions.set(operation, h);
    }
    BUCKETS.forEach((le, i) => {
      if (seconds <= le) h.counts[i] = (h.counts[i] ?? 0) + 1;
    });
    h.sum += seconds;
    h.count += 1;
  }

  /**
   * The exposition; `counts` is undefined when the store could not be read (then store_up is 0),
   * `commits` when the engine does not batch COMMITs itself.
   */
  render(counts: OccurrenceCounts | undefined, commits?: CommitStats): string {
    const out: string[] = [
      family('baton_provider_entries_total', 'counter', 'Provider entries recorded by this process.', [
        `baton_provider_entries_total ${this.#entries}\n`,
      ]),
      family(
        'baton_refusals_total',
        'counter',
        'Requests refused by this process, by BatonError code.',
        [...this.#refusals].sort().map(([code, n]) => `baton_refusals_total${labels({ code })} ${n}\n`),
      ),
      family(
        'baton_http_requests_total',
        'counter',
        'HTTP requests answered by this process.',
        [...this.#requests].sort().map(([key, n]) => {
          const [method = '', route = '', status = ''] = JSON.parse(key) as string[];
          return `baton_http_requests_total${labels({ method, route, status })} ${n}\n`;
        }),
      ),
      this.#histogram(),
      family('baton_store_up', 'gauge', 'Whether the last scrape could read the store.', [
        `baton_store_up ${counts === undefined ? 0 : 1}\n`,
      ]),
    ];
    if (counts !== undefined) out.push(...gauges(counts));
    if (commits !== undefined) out.push(...commitFamilies(commits));
    return out.join('');
  }

  #histogram(): string {
    const name = 'baton_transaction_duration_seconds';
    const lines: string[] = [];
    for (const [operation, h] of [...this.#transactions].sort(([a], [b]) => (a < b ? -1 : 1))) {
      BUCKETS.forEach((le, i) => {
        lines.push(`${name}_bucket${labels({ operation, le: num(le) })} ${h.counts[i] ?? 0}\n`);
      });
      lines.push(`${name}_bucket${labels({ operation, le: '+Inf' })} ${h.count}\n`);
      lines.push(`${name}_sum${labels({ operation })} ${num(h.sum)}\n`);
      lines.push(`${name}_count${labels({ operation })} ${h.count}\n`);
    }
    return family(name, 'histogram', 'Duration of one service command (one store transaction).', lines);
  }
}

/** SQLite group commit: how many transactions each COMMIT (each fsync) carried. */
function commitFamilies(c: CommitStats): string[] {
  return [
    family('baton_store_commits_total', 'counter', 'Physical COMMITs (one fsync each) of this process.', [
      `baton_store_commits_total ${c.commits}\n`,
    ]),
    family(
      'baton_store_committed_transactions_total',
      'counter',
      'Transactions committed by them (group commit: several per COMMIT).',
      [`baton_store_committed_transactions_total ${c.transactions}\n`],
    ),
    family('baton_store_largest_commit_batch', 'gauge', 'The most transactions one COMMIT carried.', [
      `baton_store_largest_commit_batch ${c.largestBatch}\n`,
    ]),
  ];
}

function gauges(c: OccurrenceCounts): string[] {
  return [
    family('baton_unresolved_occurrences', 'gauge', 'Occurrences entered with an open effect.', [
      `baton_unresolved_occurrences ${c.unresolved}\n`,
    ]),
    family('baton_conflicting_occurrences', 'gauge', 'Occurrences with conflicting evidence.', [
      `baton_conflicting_occurrences ${c.conflicts}\n`,
    ]),
    family(
      'baton_occurrences',
      'gauge',
      'Occurrences by phase.',
      Object.entries(c.byPhase).map(([phase, n]) => `baton_occurrences${labels({ phase })} ${n}\n`),
    ),
  ];
}
