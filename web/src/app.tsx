/**
 * The app shell: checks the session (`GET /api/auth/me`), shows the sign-in page when
 * there is none (saying so when a session ended), and otherwise the navigation and the
 * page the address names, for the signed-in user's roles. The API reference needs no
 * session. Focus moves to the page heading after navigation.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, api, mayHaveSession, SIGNED_OUT_EVENT } from './api.ts';
import { IdentityContext } from './lib/identity.ts';
import { can, homePath } from './lib/roles.ts';
import type { Identity } from './lib/types.ts';
import { ApiDocsPage } from './pages/api-docs.tsx';
import { ContextPage } from './pages/context.tsx';
import { EventsPage } from './pages/events.tsx';
import { JobPage } from './pages/job.tsx';
import { JobsPage } from './pages/jobs.tsx';
import { LoginPage } from './pages/login.tsx';
import { WorkerPage } from './pages/worker.tsx';
import { WorkersPage } from './pages/workers.tsx';
import { Link, navigate, useLocation } from './router.tsx';
import { matchPage, type PageMatch } from './routes.ts';

const NAV = [
  { href: '/context', label: 'Context', pages: ['context'], admin: true },
  { href: '/workers', label: 'Workers', pages: ['workers', 'worker'] },
  { href: '/jobs', label: 'Jobs', pages: ['jobs', 'job'] },
  { href: '/events', label: 'Events', pages: ['events'] },
  { href: '/api/docs', label: 'API docs', pages: ['docs'] },
];

export const SESSION_ENDED = 'Your session ended; sign in again.';

export function App() {
  const url = useLocation();
  const match = matchPage(url.pathname);
  // undefined: still asking; null: signed out.
  const [me, setMe] = useState<Identity | null | undefined>(undefined);
  const [sessionError, setSessionError] = useState<string | undefined>();
  // The API stopped accepting a session this browser had (not a first visit, not a sign-out).
  const [ended, setEnded] = useState(false);
  // `me` as of now, for the sign-out listener (state would be as of its render).
  const current = useRef<Identity | null | undefined>(undefined);
  const setIdentity = (value: Identity | null) => {
    current.current = value;
    setMe(value);
  };

  const check = async () => {
    if (!mayHaveSession()) {
      setIdentity(null);
      return;
    }
    try {
      setIdentity(await api.get<Identity>('/api/auth/me'));
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) setIdentity(null);
      else setSessionError((err as Error).message);
    }
  };
  useEffect(() => {
    void check();
    // A 401: the session cookie expired or the session was ended on the server. Only a
    // session we had (or were checking, with its CSRF cookie present) "ended"; answers
    // that arrive after a sign-out do not count.
    const signedOut = () => {
      if (current.current !== null) setEnded(true);
      setIdentity(null);
    };
    window.addEventListener(SIGNED_OUT_EVENT, signedOut);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, signedOut);
  }, []);
  const home = homePath(me);
  // Signed in on /login, or on `/` (the Context workspace, which needs admin) without admin:
  // off to the user's home page.
  const redirect =
    me &&
    (match?.page === 'login' || (match?.page === 'context' && isRoot(url.pathname) && !can(me, 'admin')))
      ? home
      : undefined;
  useEffect(() => {
    if (redirect) navigate(redirect, { replace: true });
  }, [redirect]);

  if (sessionError) return <p role="alert">Cannot reach the Sluice API: {sessionError}</p>;
  if (match?.page !== 'docs') {
    if (me === undefined) return <p class="boot">Loading Sluice…</p>;
    if (me === null)
      return (
        <LoginPage
          notice={ended ? SESSION_ENDED : undefined}
          onSignedIn={() => {
            setEnded(false);
            void check();
          }}
        />
      );
  }
  return (
    <IdentityContext.Provider value={me ?? null}>
      <Layout
        me={me ?? null}
        match={match}
        onSignedOut={() => {
          setEnded(false);
          setIdentity(null);
        }}
      >
        {redirect ? null : <PageView match={match} query={url.searchParams} home={home} />}
      </Layout>
    </IdentityContext.Provider>
  );
}

function isRoot(pathname: string): boolean {
  return pathname.replace(/\/+$/, '') === '';
}

function PageView({
  match,
  query,
  home,
}: {
  match: PageMatch | undefined;
  query: URLSearchParams;
  home: string;
}) {
  switch (match?.page) {
    case 'context':
      return <ContextPage />;
    case 'workers':
      return <WorkersPage />;
    case 'worker':
      return <WorkerPage key={match.param} id={match.param!} />;
    case 'jobs':
      return <JobsPage />;
    case 'job':
      return <JobPage key={match.param} name={match.param!} />;
    case 'events':
      return <EventsPage query={query} />;
    case 'docs':
      return <ApiDocsPage />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            There is no page here.{' '}
            <Link href={home}>{home === '/context' ? 'Go to the Context workspace' : 'Go to Jobs'}</Link>.
          </p>
        </>
      );
  }
}

function Layout({
  me,
  match,
  onSignedOut,
  children,
}: {
  me: Identity | null;
  match: PageMatch | undefined;
  onSignedOut: () => void;
  children: preact.ComponentChildren;
}) {
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const where = `${match?.page}:${match?.param ?? ''}`;
  useEffect(() => {
    const label = NAV.find((n) => match && n.pages.includes(match.page))?.label;
    document.title = [match?.param, label, 'Sluice'].filter(Boolean).join(' · ');
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, [where]);

  const signOut = async () => {
    try {
      await api.post('/api/auth/logout');
    } finally {
      onSignedOut();
    }
  };
  const nav = NAV.filter((n) => !n.admin || can(me, 'admin') || !me);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href={homePath(me)} class="brand">
          Sluice
        </Link>
        <nav aria-label="Main">
          <ul>
            {nav.map((n) => (
              <li key={n.href}>
                <Link href={n.href} aria-current={match && n.pages.includes(match.page) ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {me ? (
            <>
              <span>
                {me.subject}{' '}
                <span class="hint">
                  ({me.roles.join(', ')} in {me.tenant})
                </span>
              </span>
              <button type="button" onClick={signOut}>
                Sign out
              </button>
            </>
          ) : (
            <Link href="/login">Sign in</Link>
          )}
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
