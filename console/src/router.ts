/** Hash routes (`#/occurrences/occ_…`): the server serves one page, so no fallback is needed. */
import { useEffect, useMemo, useState } from 'preact/hooks';

export interface Route {
  readonly page: string;
  readonly arg: string | undefined;
  readonly query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const [path = '', q = ''] = hash.replace(/^#\/?/, '').split('?');
  const [page = 'overview', ...rest] = path.split('/').filter((p) => p !== '');
  const query = new URLSearchParams(q);
  if (rest.length === 0) return { page, arg: undefined, query };
  try {
    return { page, arg: decodeURIComponent(rest.join('/')), query };
  } catch {
    // A malformed escape (`%E0%A4%A`) names nothing the console has: the not-found page.
    return { page: 'not-found', arg: undefined, query };
  }
}

export function href(page: string, arg?: string, query?: URLSearchParams): string {
  const q = query !== undefined && [...query.keys()].length > 0 ? `?${query.toString()}` : '';
  return `#/${page}${arg === undefined ? '' : `/${encodeURIComponent(arg)}`}${q}`;
}

export function useRoute(): Route {
  const [hash, setHash] = useState(() => location.hash);
  useEffect(() => {
    const on = (): void => setHash(location.hash);
    addEventListener('hashchange', on);
    // Effects run after paint: a hash changed since the first render (a navigation right after
    // sign-in) fired its event before anyone listened, so read it once more now.
    on();
    return () => removeEventListener('hashchange', on);
  }, []);
  return useMemo(() => parseRoute(hash), [hash]);
}
