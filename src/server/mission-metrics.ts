/**
 * The Mission consumer's and the harness's counters (issue 11 §5; build spec A6 "Metrics"), on the
 * server's per-process registry (src/server/metrics.ts). Label values are closed sets: a check's
 * result, an RFC 8935 answer code, a Harness Evidence decision and reason (A2.6) — never an id.
 */
import { Counter, type Registry } from 'prom-client';

/** `backed_off`: no request was sent, an earlier 429's or 503's Retry-After had not passed (A7#13). */
export type MissionCheckResult =
  | 'active'
  | 'not_active'
  | 'refused'
  | 'not_found'
  | 'unauthorized'
  | 'rate_limited'
  | 'backed_off'
  | 'unavailable'
  | 'client_key_unusable';

export class MissionMetrics {
  readonly #checks: Counter<'result'>;
  readonly #stops: Counter<'decision' | 'reason'>;
  readonly #sets: Counter<'result'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#checks = new Counter({
      name: 'baton_mission_checks_total',
      help: 'Mission Status checks by this process, by outcome (active, not_active, refused, not_found, unauthorized, rate_limited, unavailable; backed_off: not sent, inside an issuer 429 or 503 Retry-After; client_key_unusable: not sent, the pinned client key cannot be used).',
      labelNames: ['result'],
      registers,
    });
    this.#stops = new Counter({
      name: 'baton_harness_stops_total',
      help: 'Harness Evidence written by this process for a stop (decision other than continue), by decision and reason.',
      labelNames: ['decision', 'reason'],
      registers,
    });
    this.#sets = new Counter({
      name: 'baton_sets_received_total',
      help: 'SETs received by push or poll, by result (applied, ignored, duplicate, stream, or the RFC 8935 error code).',
      labelNames: ['result'],
      registers,
    });
  }

  countCheck(result: MissionCheckResult): void {
    this.#checks.inc({ result });
  }

  countStop(decision: string, reason: string): void {
    this.#stops.inc({ decision, reason });
  }

  countSet(result: string): void {
    this.#sets.inc({ result });
  }
}
