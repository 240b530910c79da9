/**
 * The app shell: checks the session (`GET /api/auth/me`), shows the sign-in page when
 * there is none, and otherwise the navigation and the page the address names. The API
 * reference needs no session. Focus moves to the page heading after navigation.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, api, mayHaveSession, SIGNED_OUT_EVENT } from './api.ts';
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
  { href: '/context', label: 'Context', pages: ['context'] },
  { href: '/workers', label: 'Workers', pages: ['workers', 'worker'] },
  { href: '/jobs', label: 'Jobs', pages: ['jobs', 'job'] },
  { href: '/events', label: 'Events', pages: ['events'] },
  { href: '/api/docs', label: 'API docs', pages: ['docs'] },
];

export function App() {
  const url = useLocation();
  const match = matchPage(url.pathname);
  // undefined: still asking; null: signed out.
  const [me, setMe] = useState<Identity | null | undefined>(undefined);
  const [sessionError, setSessionError] = useState<string | undefined>();

  const check = async () => {
    if (!mayHaveSession()) {
      setMe(null);
      return;
    }
    try {
      setMe(await api.get<Identity>('/api/auth/me'));
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) setMe(null);
      else setSessionError((err as Error).message);
    }
  };
  useEffect(() => {
    void check();
    const signedOut = () => setMe(null);
    window.addEventListener(SIGNED_OUT_EVENT, signedOut);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, signedOut);
  }, []);
  useEffect(() => {
    if (match?.page === 'login' && me) navigate('/context', { replace: true });
  }, [match?.page, me]);

  if (sessionError) return <p role="alert">Cannot reach the Sluice API: {sessionError}</p>;
  if (match?.page !== 'docs') {
    if (me === undefined) return <p class="boot">Loading Sluice…</p>;
    if (me === null)
      return (
        <LoginPage
          onSignedIn={() => {
            if (match?.page === 'login') navigate('/context', { replace: true });
            void check();
          }}
        />
      );
  }
  return (
    <Layout me={me ?? null} match={match} onSignedOut={() => setMe(null)}>
      <PageView match={match} query={url.searchParams} />
    </Layout>
  );
}

function PageView({ match, query }: { match: PageMatch | undefined; query: URLSearchParams }) {
  switch (match?.page) {
    case 'context':
    case 'login':
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
            There is no page here. <Link href="/context">Go to the Context workspace</Link>.
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
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/context" class="brand">
          Sluice
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
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
