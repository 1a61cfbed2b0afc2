/** Times in the viewer's zone, the RFC 3339 value on hover (docs/console.md). */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

export function Time({ ms }: { ms: number | null | undefined }) {
  if (ms === null || ms === undefined) return <span class="muted">—</span>;
  const iso = rfc3339(ms);
  return (
    <time dateTime={iso} title={iso}>
      {new Date(ms).toLocaleString()}
    </time>
  );
}

export function age(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}

/** Missing-knowledge reasons in plain words (docs/occurrences.md). */
export const MISSING_KNOWLEDGE: Readonly<Record<string, string>> = {
  unavailable: 'the status source could not be reached',
  unauthenticated: 'the answer was not authenticated by a pinned key, so it cannot settle anything',
  binding_mismatch: 'the answer is about another account, environment, request or key',
  no_attempt: 'the provider has no record of this attempt',
  stale: 'the answer is older than the profile allows',
  not_found: 'the provider does not know this key (yet)',
  not_found_beyond_retention: 'not found, but the attempt is older than the provider keeps records',
  incomplete_listing: 'the provider listing was incomplete, so absence proves nothing',
  unmapped_status: 'the provider answered with a status the profile does not map',
  conflict: 'authenticated answers disagree; an operator must review',
};

export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {error instanceof Error ? error.message : 'the request failed'}
    </p>
  );
}

/**
 * Previous / next over an API's opaque cursors: `cursors` is the stack of pages already passed
 * (the first page has none), `next` the cursor the current page's answer named (null: last page).
 */
export function Pager(p: {
  label: string;
  cursors: readonly string[];
  next: string | null | undefined;
  setCursors: (c: string[]) => void;
}) {
  const next = p.next ?? null;
  return (
    <nav class="pager" aria-label={p.label}>
      <button
        type="button"
        disabled={p.cursors.length === 0}
        onClick={() => p.setCursors(p.cursors.slice(0, -1))}
      >
        Previous page
      </button>
      <button
        type="button"
        disabled={next === null}
        onClick={() => next !== null && p.setCursors([...p.cursors, next])}
      >
        Next page
      </button>
    </nav>
  );
}
