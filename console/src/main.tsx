/** The operator console (issue 14, docs/console.md): sign-in, then the pages by hash route. */
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  ApiError,
  ok,
  onCsrfRefused,
  onOtherTab,
  onSessionEnded,
  setCsrf,
  tellOtherTabs,
} from './api.js';
import { useLiveStatus, type LiveStatus } from './events.js';
import { ErrorNote, errorText } from './format.js';
import { href, useRoute, type Route } from './router.js';
import { Overview } from './pages/overview.js';
import { OccurrenceList } from './pages/occurrences.js';
import { OccurrencePage } from './pages/occurrence.js';
import { LineagePage } from './pages/lineage.js';
import { VerifyPage } from './pages/verify.js';
import { AuthoritiesPage } from './pages/authorities.js';
import { TokensPage } from './pages/tokens.js';
import { HarnessPage } from './pages/harness.js';
import { ObservationsPage } from './pages/observations.js';
import './style.css';

export interface SessionView {
  readonly role: 'operator' | 'admin';
  readonly name: string;
  readonly tokenId: string;
  readonly expiresAt: number;
  readonly csrfToken: string;
}

/** Said on the sign-in form when the console came back to it because the session ended. */
const SESSION_ENDED =
  'Your session has ended (it expired, was signed out elsewhere, or its token was revoked). Sign in again to continue.';

function SignIn({ onSignedIn, ended }: { onSignedIn: (s: SessionView) => void; ended: boolean }) {
  useTitle('Sign in');
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    try {
      onSignedIn(ok(await api.POST('/v1/session', { body: { token } })));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <main class="signin">
      <h1>Baton console</h1>
      {ended && error === undefined && (
        <p class="notice" role="status">
          {SESSION_ENDED}
        </p>
      )}
      <form onSubmit={(e) => void submit(e)}>
        <label for="token">Operator or admin token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          required
        />
        <button type="submit">Sign in</button>
      </form>
      <ErrorNote error={error} />
    </main>
  );
}

const PAGES: readonly (readonly [string, string, boolean])[] = [
  ['overview', 'Overview', false],
  ['occurrences', 'Occurrences', false],
  ['lineages', 'Lineages', false],
  ['authorities', 'Authority budgets', false],
  ['harness', 'Missions and harness', false],
  ['observations', 'Observations', false],
  ['verify', 'Evidence verification', false],
  ['tokens', 'Tokens', true],
];

/** The page's name: the document title, so history, tabs and screen readers name where one is. */
function titleOf(route: Route): string {
  if (route.page === 'occurrences' && route.arg !== undefined) return `Occurrence ${route.arg}`;
  if (route.page === 'lineages' && route.arg !== undefined) return `Lineage ${route.arg}`;
  if (route.page === 'harness' && route.arg !== undefined) return `Harness ${route.arg}`;
  return PAGES.find(([page]) => page === route.page)?.[1] ?? 'Page not found';
}

function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Baton console`;
  }, [title]);
}

/**
 * A route change is announced (WCAG 2.4.3): focus moves to the new page's heading (or, while it
 * loads, to the main region), as a page load would. Not on the first render: focus starts at the top.
 */
function useFocusOnRouteChange(route: Route): void {
  const where = `${route.page}/${route.arg ?? ''}`;
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const h1 = document.querySelector<HTMLElement>('#main h1');
    if (h1 !== null) {
      h1.tabIndex = -1;
      h1.focus();
    } else document.getElementById('main')?.focus();
  }, [where]);
}

function Shell(p: { session: SessionView; onSignedOut: () => void; notice: string | undefined }) {
  const { session, onSignedOut } = p;
  const route = useRoute();
  useTitle(titleOf(route));
  useFocusOnRouteChange(route);
  const [error, setError] = useState<unknown>();
  // Signed out only once the session has ended: the server ended it, or it had already ended
  // (401: expired, signed out elsewhere, its token revoked). On any other refusal or a failure
  // the session still lives (until it expires), so the console stays signed in and says why.
  const signOut = async (): Promise<void> => {
    setError(undefined);
    try {
      ok(await api.DELETE('/v1/session'));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) {
        setError(err);
        return;
      }
    }
    setCsrf(undefined);
    tellOtherTabs('signed-out');
    onSignedOut();
  };
  const admin = session.role === 'admin';
  const live = useLiveStatus();
  return (
    <>
      {/* Focus moves to the page itself: following "#main" would change the hash route. */}
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Baton</span>
        <nav aria-label="Pages">
          {PAGES.filter(([, , adminOnly]) => admin || !adminOnly).map(([page, label]) => (
            <a href={href(page)} aria-current={route.page === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        {live !== undefined && (
          <span class={`live ${live === 'live' ? 'good' : 'bad'}`} role="status">
            {LIVE[live]}
          </span>
        )}
        <span class="who">
          {session.name} ({session.role})
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {p.notice !== undefined && (
          <p class="notice" role="status">
            {p.notice}
          </p>
        )}
        {error !== undefined && (
          <p class="error" role="alert">
            Sign-out failed, you are still signed in: {errorText(error)}
          </p>
        )}
        <Page page={route.page} arg={route.arg} query={route.query} session={session} />
      </main>
    </>
  );
}

function skipToMain(e: Event): void {
  e.preventDefault();
  document.getElementById('main')?.focus();
}

const LIVE: Readonly<Record<LiveStatus, string>> = {
  connecting: 'Live updates: connecting…',
  live: 'Live updates: on',
  reconnecting: 'Live updates: disconnected, reconnecting…',
  disconnected: 'Live updates: disconnected (reload the page to reconnect)',
};

function NotFound() {
  return (
    <section aria-labelledby="nf-h">
      <h1 id="nf-h">Page not found</h1>
      <p>
        The console has no page at this address. <a href={href('overview')}>Go to the overview</a>.
      </p>
    </section>
  );
}

function Page(p: { page: string; arg: string | undefined; query: URLSearchParams; session: SessionView }) {
  switch (p.page) {
    case 'occurrences':
      return p.arg === undefined ? (
        <OccurrenceList query={p.query} />
      ) : (
        <OccurrencePage key={p.arg} id={p.arg} />
      );
    case 'lineages':
      return <LineagePage lineage={p.arg} />;
    case 'authorities':
      return <AuthoritiesPage />;
    case 'verify':
      return <VerifyPage />;
    case 'observations':
      return <ObservationsPage />;
    case 'harness':
      return <HarnessPage arg={p.arg} query={p.query} />;
    case 'tokens':
      return p.session.role === 'admin' ? <TokensPage /> : <p>This page is for admins.</p>;
    case 'overview':
      return <Overview />;
    default:
      return <NotFound />;
  }
}

/** The first question (is there a session?) failed: say so, and offer to ask again. */
function Unreachable({ error, retry }: { error: unknown; retry: () => void }) {
  return (
    <main class="signin">
      <h1>Baton console</h1>
      <p>The console could not ask the server whether you are signed in.</p>
      <ErrorNote error={error} />
      <button type="button" onClick={retry}>
        Try again
      </button>
    </main>
  );
}

/** Said when the console re-read its session and found another identity behind the cookie. */
function switchedNotice(s: SessionView, refused: boolean): string {
  const what = `You are now signed in as ${s.name} (${s.role}): this browser was signed in again in another tab, which replaced the session shown here.`;
  return refused ? `${what} Your last action was refused (csrf_invalid) and not carried out.` : what;
}

function App() {
  const [session, setSession] = useState<SessionView | null | undefined>(undefined);
  const [loadError, setLoadError] = useState<unknown>();
  const [attempt, setAttempt] = useState(0);
  const [ended, setEnded] = useState(false);
  const [notice, setNotice] = useState<string>();
  const shown = useRef(session);
  shown.current = session;
  /**
   * Re-read who the cookie signs in (another tab signed in or out, or a call was refused
   * `csrf_invalid`): the identity and CSRF token follow it; a 401 ends the session (api.ts).
   */
  const resync = useCallback(async (refused: boolean): Promise<void> => {
    try {
      const r = await api.GET('/v1/session');
      if (r.response.status === 401) return;
      const s = ok(r);
      const before = shown.current;
      setCsrf(s.csrfToken);
      if (before !== undefined && before !== null && before.tokenId !== s.tokenId)
        setNotice(switchedNotice(s, refused));
      if (before === null) setEnded(false);
      setSession(s);
    } catch (e) {
      console.warn('session re-read failed', e);
    }
  }, []);
  useEffect(() => {
    onOtherTab(() => void resync(false));
    onCsrfRefused(() => void resync(true));
    return () => {
      onOtherTab(undefined);
      onCsrfRefused(undefined);
    };
  }, [resync]);
  useEffect(() => {
    setLoadError(undefined);
    api
      .GET('/v1/session')
      // 401: no session (none, or it ended); any other failure is no answer to the question.
      .then((r) => setSession(r.response.status === 401 ? null : ok(r)))
      .catch(setLoadError);
  }, [attempt]);
  useEffect(() => setCsrf(session?.csrfToken), [session]);
  // While signed in, any 401 means the session ended: back to sign-in, saying why.
  useEffect(() => {
    if (session === undefined || session === null) return undefined;
    onSessionEnded(() => {
      setCsrf(undefined);
      setNotice(undefined);
      setEnded(true);
      setSession(null);
    });
    return () => onSessionEnded(undefined);
  }, [session]);
  if (session === undefined && loadError !== undefined)
    return <Unreachable error={loadError} retry={() => setAttempt((n) => n + 1)} />;
  if (session === undefined) return <p aria-busy="true">Loading…</p>;
  if (session === null)
    return (
      <SignIn
        ended={ended}
        onSignedIn={(s) => {
          setCsrf(s.csrfToken);
          setEnded(false);
          setNotice(undefined);
          setSession(s);
          tellOtherTabs('signed-in');
        }}
      />
    );
  return (
    <Shell
      session={session}
      notice={notice}
      onSignedOut={() => {
        setNotice(undefined);
        setSession(null);
      }}
    />
  );
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
