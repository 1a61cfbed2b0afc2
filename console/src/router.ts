/** Hash routes (`#/occurrences/occ_…`): the server serves one page, so no fallback is needed. */
import { useEffect, useState } from 'preact/hooks';

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
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = (): void => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
