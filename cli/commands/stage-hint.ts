/**
 * What a change to a deployed job leaves undone. Its deployments run the version and job
 * context that were staged (CONTRACT: a saved version or a job-context change reaches
 * workers when the job is staged or redeployed), so after `sluice job apply` or `sluice
 * context set job J` on a deployed job the CLI says so on stderr, with the command that
 * rolls the change out, as `kubectl apply` users expect a change to take effect.
 *
 * @example
 *   const hint = await stageHint(api, 'orders', { savedVersion: 4 });
 *   if (hint) io.stderr(hint);
 */
import type { JobSummary } from '../../shared/api/jobs.ts';
import type { ApiClient } from '../api-client.ts';

export async function stageHint(
  api: ApiClient,
  name: string,
  change: { savedVersion: number } | { jobContext: true },
): Promise<string | undefined> {
  let job: JobSummary;
  try {
    job = await api.get<JobSummary>(`/api/jobs/${encodeURIComponent(name)}`);
  } catch {
    // Not saved yet (a job's context may be set first), or unreadable: nothing to say.
    return undefined;
  }
  const workers = job.deployments.length;
  if (workers === 0) return undefined;
  const where = `${workers} worker${workers === 1 ? '' : 's'}`;
  if ('savedVersion' in change) {
    if (job.staged_version === change.savedVersion) return undefined;
    return `job ${name} is deployed to ${where}, which run version ${job.staged_version ?? '-'}; version ${change.savedVersion} reaches them when staged: sluice job stage ${name}\n`;
  }
  return `job ${name} is deployed to ${where}, which keep the job context they were given; the change reaches them when staged: sluice job stage ${name}\n`;
}
