/** Jobs: state, versions and deployments per worker, each linking to its page. */
import { ErrorMessage } from '../components/error-message.tsx';
import { formatTime } from '../components/events-table.tsx';
import { EmptyRow, TableHead } from '../components/table.tsx';
import type { JobSummary } from '../lib/types.ts';
import { REFRESH_MS, usePagedApi } from '../lib/use-api.ts';
import { Link } from '../router.tsx';
import { StateBadge } from './workers.tsx';

export function JobsPage() {
  const jobs = usePagedApi<JobSummary>('/api/jobs', { refreshMs: REFRESH_MS });
  return (
    <>
      <h1>Jobs</h1>
      <ErrorMessage error={jobs.error} />
      <table>
        <caption class="sr-only">Jobs</caption>
        <TableHead columns={['Job', 'State', 'Version', 'Staged', 'Deployments', 'Updated']} />
        <tbody>
          {jobs.data?.length === 0 && (
            <EmptyRow span={6}>
              No jobs yet: <code>sluice job apply FILE</code> saves one.
            </EmptyRow>
          )}
          {(jobs.data ?? []).map((j) => (
            <tr key={j.name} data-job={j.name}>
              <th scope="row">
                <Link href={`/jobs/${encodeURIComponent(j.name)}`}>{j.name}</Link>
              </th>
              <td>
                <StateBadge state={j.state} />
              </td>
              <td>{j.version}</td>
              <td>{j.staged_version ?? '—'}</td>
              <td>
                {j.deployments.length
                  ? j.deployments.map((d) => (
                      <span key={d.worker} class="deployment">
                        {d.worker}: <StateBadge state={d.state} />
                      </span>
                    ))
                  : '—'}
              </td>
              <td>{formatTime(j.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {jobs.more && (
        <p>
          <button type="button" class="load-more" onClick={() => void jobs.loadMore()}>
            Load more
          </button>
        </p>
      )}
    </>
  );
}
