/**
 * One worker: its state, its context overrides (merge key by key, or replace the whole
 * map; admins only), the jobs deployed to it, and its recent events, live. Until the worker
 * is loaded, and for one that does not exist, only the API's answer shows ("no worker nope").
 */
import { api, type ContextMap, enc } from '../api.ts';
import { ContextEditor } from '../components/context-editor.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { EventsTable, formatTime } from '../components/events-table.tsx';
import { NeedsRole } from '../components/needs-role.tsx';
import { useCan } from '../lib/identity.ts';
import type { Worker } from '../lib/types.ts';
import { REFRESH_MS, useApi } from '../lib/use-api.ts';
import { useEventFeed } from '../lib/use-event-feed.ts';
import { Link } from '../router.tsx';
import { StateBadge } from './workers.tsx';

export function WorkerPage({ id }: { id: string }) {
  const worker = useApi<Worker>(`/api/workers/${enc(id)}`, undefined, { refreshMs: REFRESH_MS });
  const admin = useCan('admin');
  const w = worker.data;
  return (
    <>
      <p class="crumbs">
        <Link href="/workers">Workers</Link> /
      </p>
      <h1>
        Worker <code>{id}</code>
      </h1>
      <ErrorMessage error={worker.error} />
      {w && (
        <dl class="facts">
          <dt>State</dt>
          <dd>
            <StateBadge state={w.state} />
          </dd>
          <dt>Last heartbeat</dt>
          <dd>{w.id === 'cloud' ? 'serverless (always on)' : formatTime(w.last_seen)}</dd>
          <dt>Created</dt>
          <dd>{formatTime(w.created_at)}</dd>
        </dl>
      )}
      {/* Only a worker that exists (a missing one shows the API's "no worker" alone). */}
      {w && (
        <>
          <section aria-labelledby="overrides">
            <h2 id="overrides">Context overrides</h2>
            {admin ? (
              <>
                <p class="lead">
                  Overrides win over global defaults on this worker; job overrides win over them. Saving sends
                  the map to the worker at once.
                </p>
                <ContextEditor
                  label={`Overrides of worker ${id}`}
                  path={`/api/contexts/worker/${enc(id)}`}
                  merge={(update: ContextMap) =>
                    api.post(`/api/contexts/update-worker-map/${enc(id)}`, update)
                  }
                  replace={(map: ContextMap) =>
                    api.post(`/api/contexts/update-worker-nomerge/${enc(id)}`, map)
                  }
                />
              </>
            ) : (
              <NeedsRole needs="admin">Reading and changing a worker’s context overrides</NeedsRole>
            )}
          </section>
          <section aria-labelledby="deployed">
            <h2 id="deployed">Deployed jobs</h2>
            {w.jobs.length === 0 && <p>No jobs are deployed to this worker.</p>}
            {w.jobs.length > 0 && (
              <ul>
                {w.jobs.map((j) => (
                  <li key={j}>
                    <Link href={`/jobs/${enc(j)}`}>{j}</Link>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <RecentEvents id={id} />
        </>
      )}
    </>
  );
}

function RecentEvents({ id }: { id: string }) {
  const feed = useEventFeed({ worker: id }, { live: true, keep: 50 });
  return (
    <section aria-labelledby="recent">
      <h2 id="recent">Recent events</h2>
      <ErrorMessage error={feed.error} />
      <EventsTable events={feed.events} caption={`Latest events of worker ${id}`} />
    </section>
  );
}
