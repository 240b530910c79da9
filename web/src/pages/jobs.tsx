/** Jobs: state, versions and deployments per worker, each linking to its page. */
import { ErrorMessage } from '../components/error-message.tsx';
import { formatTime } from '../components/events-table.tsx';
import type { JobSummary } from '../lib/types.ts';
import { REFRESH_MS, useApi } from '../lib/use-api.ts';
import { Link } from '../router.tsx';
import { StateBadge } from './workers.tsx';

export function JobsPage() {
  const jobs = useApi<JobSummary[]>('/api/jobs', undefined, { refreshMs: REFRESH_MS });
  return (
    <>
      <h1>Jobs</h1>
      <ErrorMessage error={jobs.error} />
      <table>
        <caption class="sr-only">Jobs</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">State</th>
            <th scope="col">Version</th>
            <th scope="col">Staged</th>
            <th scope="col">Deployments</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {jobs.data?.length === 0 && (
            <tr>
              <td colSpan={6} class="empty">
                No jobs yet: <code>sluice job apply FILE</code> saves one.
              </td>
            </tr>
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
    </>
  );
}
