import { useEffect, useRef, useState } from 'preact/hooks';

/** Times in the viewer's zone, named (a screenshot or a pasted line says which), RFC 3339 on hover. */
export const TIME_FORMAT: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
};

export function localTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, TIME_FORMAT);
}

export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

export function Time({ ms }: { ms: number | null | undefined }) {
  if (ms === null || ms === undefined) return <span class="muted">—</span>;
  const iso = rfc3339(ms);
  return (
    <time dateTime={iso} title={iso}>
      {localTime(ms)}
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

/** How often a page showing ages ("N min ago") re-renders them on a quiet system. */
export const AGE_TICK_MS = 30_000;

/**
 * The server's clock now: the browser's clock, corrected by the offset seen when the server last
 * answered with its `now`, re-rendered every AGE_TICK_MS. Ages follow time on a quiet system where
 * no event brings a new answer, instead of freezing at the last reload (docs/console.md).
 */
export function useServerNow(serverNow: number | undefined): number {
  // The offset is taken when a new answer is first rendered, so the first age shown is right too.
  const seen = useRef<{ server: number | undefined; offset: number }>({ server: undefined, offset: 0 });
  if (serverNow !== seen.current.server) {
    seen.current = { server: serverNow, offset: serverNow === undefined ? 0 : serverNow - Date.now() };
  }
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), AGE_TICK_MS);
    return () => clearInterval(timer);
  }, []);
  return Date.now() + seen.current.offset;
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
      {errorText(error)}
    </p>
  );
}

export const UNREACHABLE = 'the server could not be reached (network error or server down)';

/**
 * An error in words. fetch() rejects with a bare TypeError ("Failed to fetch") when no answer
 * came at all: say that, not the browser's wording.
 */
export function errorText(error: unknown): string {
  if (error instanceof TypeError) return UNREACHABLE;
  return error instanceof Error ? error.message : 'the request failed';
}

/** Said where rows will be, while the page reads the answer to its current query. */
export function Loading() {
  return (
    <p class="muted" role="status" aria-busy="true">
      Loading…
    </p>
  );
}

/**
 * The stack of cursors passed, kept with the query it was issued under: a cursor names a position
 * in one filter's order, so under any other query (a search, Back/Forward, a link, the nav link)
 * the list starts again at its first page. Derived while rendering, so no request ever pairs the
 * new query with the old query's cursor (that answered an empty page for a key that exists).
 */
export function usePages(qs: string): [string[], (c: string[]) => void] {
  const [pages, setPages] = useState<{ qs: string; cursors: string[] }>({ qs, cursors: [] });
  return [pages.qs === qs ? pages.cursors : [], (cursors) => setPages({ qs, cursors })];
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
  /** The page is being read: its cursors may belong to the query shown before. */
  busy?: boolean;
}) {
  const next = p.next ?? null;
  const busy = p.busy === true;
  // While busy: aria-disabled, not disabled, so the button just pressed keeps keyboard focus.
  return (
    <nav class="pager" aria-label={p.label}>
      <button
        type="button"
        disabled={!busy && p.cursors.length === 0}
        aria-disabled={busy || undefined}
        onClick={() => !busy && p.cursors.length > 0 && p.setCursors(p.cursors.slice(0, -1))}
      >
        Previous page
      </button>
      <button
        type="button"
        disabled={!busy && next === null}
        aria-disabled={busy || undefined}
        onClick={() => !busy && next !== null && p.setCursors([...p.cursors, next])}
      >
        Next page
      </button>
    </nav>
  );
}
