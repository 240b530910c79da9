/**
 * One job: its YAML as saved, its output kind and what it delivered lately, its Context tab (job overrides, applied on the next stage
 * or deploy; admins only), stage/deploy/undeploy (operators), and the definition rendered for a chosen worker
 * with the scope each context key came from. A job that does not exist shows only the API's
 * "no job" message.
 */
import { useState } from 'preact/hooks';
import { outputKindOf } from '../../../shared/events/output-metrics.ts';
import { api, type ContextMap, enc } from '../api.ts';
import { ActionsList } from '../components/actions-list.tsx';
import { ContextEditor } from '../components/context-editor.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { formatTime } from '../components/events-table.tsx';
import { NeedsRole } from '../components/needs-role.tsx';
import { OutputMetrics } from '../components/output-metrics.tsx';
import { RenderedView } from '../components/rendered-view.tsx';
import { TableHead } from '../components/table.tsx';
import { Tabs } from '../components/tabs.tsx';
import { useCan } from '../lib/identity.ts';
import type { Deployment, JobSummary, Worker } from '../lib/types.ts';
import { REFRESH_MS, useApi } from '../lib/use-api.ts';
import { Link } from '../router.tsx';
import { StateBadge } from './workers.tsx';

export function JobPage({ name }: { name: string }) {
  const job = useApi<JobSummary & { definition?: unknown }>(`/api/jobs/${enc(name)}`, undefined, {
    refreshMs: REFRESH_MS,
  });
  const j = job.data;
  // Asked once the job is known to exist, so a missing job says "no job" once, not twice.
  const yaml = useApi<string>(j ? `/api/jobs/${enc(name)}` : undefined, (p) =>
    api.text(p, 'application/yaml'),
  );
  const admin = useCan('admin');
  return (
    <>
      <p class="crumbs">
        <Link href="/jobs">Jobs</Link> /
      </p>
      <h1>
        Job <code>{name}</code>
      </h1>
      <ErrorMessage error={job.error} />
      {j && (
        <dl class="facts">
          <dt>State</dt>
          <dd>
            <StateBadge state={j.state} />
          </dd>
          <dt>Version</dt>
          <dd>{j.version}</dd>
          <dt>Staged version</dt>
          <dd>{j.staged_version ?? 'not staged'}</dd>
          <dt>Updated</dt>
          <dd>{formatTime(j.updated_at)}</dd>
        </dl>
      )}
      {j && <ActionsList definition={j.definition} heading="Actions" />}
      {j && <OutputMetrics job={name} kind={outputKindOf(j.definition)} />}
      {j && <DeployPanel job={j} onChange={job.reload} />}
      {j && (
        <Tabs
          label={`Job ${name}`}
          tabs={[
            {
              id: 'definition',
              label: 'Definition',
              panel: () => (
                <>
                  <ErrorMessage error={yaml.error} />
                  <pre class="yaml">{yaml.data ?? ''}</pre>
                </>
              ),
            },
            {
              id: 'context',
              label: 'Context',
              panel: () =>
                admin ? (
                  <>
                    <p class="lead">
                      Job overrides win over worker overrides and global defaults. Workers see a change after
                      the job is staged or redeployed.
                    </p>
                    <ContextEditor
                      label={`Overrides of job ${name}`}
                      path={`/api/contexts/job/${enc(name)}`}
                      merge={(update: ContextMap) =>
                        api.post(`/api/contexts/update-job-map/${enc(name)}`, update)
                      }
                    />
                  </>
                ) : (
                  <NeedsRole needs="admin">Reading and changing a job’s context overrides</NeedsRole>
                ),
            },
            { id: 'rendered', label: 'Rendered for a worker', panel: () => <RenderedView job={name} /> },
          ]}
        />
      )}
    </>
  );
}

function DeployPanel({ job, onChange }: { job: JobSummary; onChange: () => Promise<void> }) {
  // Viewers see the deployments; deploying, staging and undeploying need operator.
  const operator = useCan('operator');
  const workers = useApi<Worker[]>(operator ? '/api/workers' : undefined);
  const [chosen, setChosen] = useState<string[]>([]);
  const [error, setError] = useState<Error | undefined>();
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);

  const act = async (what: string, call: () => Promise<unknown>) => {
    setError(undefined);
    setStatus('');
    setBusy(true);
    try {
      await call();
      setChosen([]);
      await onChange();
      setStatus(what);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (id: string, on: boolean) => setChosen((c) => (on ? [...c, id] : c.filter((x) => x !== id)));
  const deployed = new Set(job.deployments.map((d) => d.worker));

  return (
    <section class="deploy" aria-labelledby="deploy-heading">
      <h2 id="deploy-heading">Deployments</h2>
      {job.deployments.length > 0 ? (
        <table>
          <caption class="sr-only">Deployments of {job.name}</caption>
          <TableHead columns={['Worker', 'State', 'Version', 'Since']} actions={operator} />
          <tbody>
            {job.deployments.map((d) => (
              <tr key={d.worker} data-worker={d.worker}>
                <th scope="row">
                  <Link href={`/workers/${enc(d.worker)}`}>{d.worker}</Link>
                </th>
                <td>
                  <StateBadge state={d.state} />
                  <DeploymentReason deployment={d} />
                </td>
                <td>{d.version}</td>
                <td>{formatTime(d.updated_at)}</td>
                {operator && (
                  <td>
                    <button
                      type="button"
                      disabled={busy}
                      aria-label={`Undeploy from ${d.worker}`}
                      onClick={() =>
                        act(`Undeployed from ${d.worker}.`, () =>
                          api.post(`/api/jobs/${enc(job.name)}/undeploy`, { workers: [d.worker] }),
                        )
                      }
                    >
                      Undeploy
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>Not deployed.</p>
      )}
      {operator ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void act(`Deployed to ${chosen.join(', ')}.`, () =>
              api.post(`/api/jobs/${enc(job.name)}/deploy`, { workers: chosen }),
            );
          }}
        >
          <fieldset>
            <legend>Deploy to workers</legend>
            {(workers.data ?? []).map((w) => (
              <label key={w.id} class="check">
                <input
                  type="checkbox"
                  name="worker"
                  value={w.id}
                  checked={chosen.includes(w.id)}
                  onChange={(e) => toggle(w.id, e.currentTarget.checked)}
                />
                {w.id} <StateBadge state={w.state} />
                {deployed.has(w.id) && <span class="badge">deployed</span>}
              </label>
            ))}
          </fieldset>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || chosen.length === 0}>
              Deploy
            </button>
            <button
              type="button"
              disabled={busy}
              onClick={() => act('Staged.', () => api.post(`/api/jobs/${enc(job.name)}/stage`))}
            >
              Stage current version
            </button>
            {job.deployments.length > 0 && (
              <button
                type="button"
                class="danger"
                disabled={busy}
                onClick={() =>
                  act('Undeployed from every worker.', () =>
                    api.post(`/api/jobs/${enc(job.name)}/undeploy`, {}),
                  )
                }
              >
                Undeploy everywhere
              </button>
            )}
          </div>
        </form>
      ) : (
        <NeedsRole needs="operator">Deploying, staging and undeploying</NeedsRole>
      )}
      <ErrorMessage error={error} />
      <p class="status" role="status" aria-live="polite">
        {status}
      </p>
    </section>
  );
}

/**
 * Why a deployment failed, as its worker said; for a viewer the API withholds that reason
 * (it quotes what the job read or was answered) and names `error` under `withheld` instead.
 */
function DeploymentReason({ deployment }: { deployment: Deployment }) {
  if (deployment.error) return <p class="deployment-reason">{deployment.error}</p>;
  if (deployment.withheld?.includes('error'))
    return <p class="deployment-reason withheld">reason withheld: operators see it</p>;
  return null;
}
