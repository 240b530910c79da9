/** Workers: online/offline state, last heartbeat and deployed jobs, each linking to its page. */
import { ErrorMessage } from '../components/error-message.tsx';
import { formatTime } from '../components/events-table.tsx';
import { TableHead } from '../components/table.tsx';
import type { Worker } from '../lib/types.ts';
import { REFRESH_MS, usePagedApi } from '../lib/use-api.ts';
import { Link } from '../router.tsx';

export function WorkersPage() {
  const workers = usePagedApi<Worker>('/api/workers', { refreshMs: REFRESH_MS });
  return (
    <>
      <h1>Workers</h1>
      <ErrorMessage error={workers.error} />
      <table>
        <caption class="sr-only">Workers</caption>
        <TableHead columns={['Worker', 'State', 'Last heartbeat', 'Deployed jobs', 'Labels']} />
        <tbody>
          {(workers.data ?? []).map((w) => (
            <tr key={w.id} data-worker={w.id}>
              <th scope="row">
                <Link href={`/workers/${encodeURIComponent(w.id)}`}>{w.id}</Link>
                {w.built_in && <span class="badge">built in</span>}
              </th>
              <td>
                <StateBadge state={w.state} />
              </td>
              <td>{w.id === 'cloud' ? 'serverless (always on)' : formatTime(w.last_seen)}</td>
              <td>{w.jobs.length ? w.jobs.join(', ') : '—'}</td>
              <td>
                {Object.entries(w.labels)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(', ') || '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {workers.more && (
        <p>
          <button type="button" class="load-more" onClick={() => void workers.loadMore()}>
            Load more
          </button>
        </p>
      )}
      <p class="hint">
        Add a worker with <code>sluice worker create ID</code>, then run it with{' '}
        <code>sluice worker run</code>.
      </p>
    </>
  );
}

export function StateBadge({ state }: { state: string }) {
  return <span class={`state state-${state}`}>{state}</span>;
}
