/**
 * When the background reconciler asks about an unresolved occurrence again (issue 13 §4): pure
 * functions, time and randomness passed in (DESIGN.md §1). Exponential backoff per occurrence with
 * "equal jitter" — half the delay fixed, half random — so servers that started together spread
 * out while the delay still grows; a provider's `Retry-After` is honoured as a floor, never
 * shortened, and capped so a hostile or broken header cannot park an occurrence forever.
 */

export interface BackoffPolicy {
  /** The delay after the first unanswered ask. */
  readonly initialMs: number;
  /** The delay never grows past this. */
  readonly maxMs: number;
}

/** The longest Retry-After honoured (a day); anything longer is read as a day. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/** The delay after `attempts` unanswered asks (attempts >= 1): in [base/2, base], base = min(initial·2^(n-1), max). */
export function backoffDelayMs(attempts: number, policy: BackoffPolicy, random: () => number): number {
  const base = Math.min(policy.initialMs * 2 ** Math.max(0, attempts - 1), policy.maxMs);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(base / 2 + (base / 2) * r);
}

/**
 * RFC 9110 §10.2.3 `Retry-After`: delay-seconds or an HTTP-date, as milliseconds from `nowMs`
 * (0 for a date in the past); undefined when absent or unreadable (then only the backoff applies).
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^[0-9]{1,10}$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  if (!/^[A-Za-z]{3}, [0-9]{2} [A-Za-z]{3} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/.test(text))
    return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

/** The earliest time of the next ask after `attempts` unanswered ones. */
export function nextAskAt(
  nowMs: number,
  attempts: number,
  policy: BackoffPolicy,
  random: () => number,
  retryAfterMs?: number,
): number {
  return nowMs + Math.max(backoffDelayMs(attempts, policy, random), retryAfterMs ?? 0);
}

/** A seeded generator in [0, 1) (mulberry32), for reproducible jitter in tests and benches. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
