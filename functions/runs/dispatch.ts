/**
 * The `cloud` worker's tick: it only decides which jobs to look at and asks the runners to
 * (functions/runs/runner.ts), one run request per job on `sluice-runs`. It reads one field
 * of each job deployed to `cloud`, `next_due_ms` beside the deployment, and requests the
 * jobs whose time has come or that have none yet (just deployed or staged, or refused last
 * time). It renders nothing and runs nothing, so it takes about as long for 1,000 jobs as
 * for one.
 *
 * Requesting a run moves the job's `next_due_ms` to the request horizon first, so the next
 * ticks do not request it again while it waits in the queue or runs; the run then records
 * when the job is really due next. A request that is lost (a publish that failed, a runner
 * that gave it up) is therefore made again at the horizon, never forgotten.
 *
 * @example
 *   const requests = await dispatchDueRuns(deps);
 */
import type { DocumentReference, Timestamp } from '@google-cloud/firestore';
import { parseDuration } from '../../shared/duration.ts';
import type { RunRequest } from '../../shared/runs/run-request.ts';
import { collectionGroup } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { type Deployment, jobsCollection } from '../jobs/store.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';
import { publishRunRequests } from './run-channel.ts';

/** How long a requested run may wait and run before the tick requests it again. */
export function requestHorizonMs(deps: AppDeps): number {
  return 2 * parseDuration(deps.config.cloudRunBudget) + 60_000;
}

export async function dispatchDueRuns(deps: AppDeps, nowMs = Date.now()): Promise<RunRequest[]> {
  const db = await deps.clients.firestore();
  const snap = await collectionGroup(db, 'jobs')
    .where(`deployments.${CLOUD_WORKER}.version`, '>=', 0)
    .select(`deployments.${CLOUD_WORKER}`)
    .get();
  const due = snap.docs.flatMap((doc) => {
    const deployment = doc.get(`deployments.${CLOUD_WORKER}`) as Deployment | undefined;
    const next = deployment?.next_due_ms;
    if (!deployment || next === null || (next !== undefined && next > nowMs)) return [];
    const tenant = doc.ref.parent.parent!.id;
    return [{ tenant, job: doc.id, version: deployment.version, ref: doc.ref, updateTime: doc.updateTime }];
  });
  return requestRuns(deps, due, 'due', nowMs);
}

interface Requested {
  tenant: string;
  job: string;
  version: number;
  ref?: DocumentReference;
  /** The job as the tick read it: the request is made only if it has not changed since. */
  updateTime?: Timestamp;
  /** A run's rest: its attempts in a row stopped at the budget without progress (runs/stalls.ts). */
  stalls?: number;
}

/**
 * Moves each job's next due time to the horizon (only onto the version asked about), then
 * publishes a request for each job that was moved.
 */
export async function requestRuns(
  deps: AppDeps,
  jobs: Requested[],
  reason: RunRequest['reason'],
  nowMs = Date.now(),
): Promise<RunRequest[]> {
  if (jobs.length === 0) return [];
  const db = await deps.clients.firestore();
  const { FieldPath } = await import('@google-cloud/firestore');
  const field = new FieldPath('deployments', CLOUD_WORKER, 'next_due_ms');
  const horizon = nowMs + requestHorizonMs(deps);
  // A run's continuation and a deploy read the job here; the tick passes what it read.
  const read = await Promise.all(
    jobs.map(async (job) => {
      if (job.updateTime) return job.updateTime;
      const snap = await jobsCollection(db, job.tenant).doc(job.job).get();
      const deployment = snap.get(`deployments.${CLOUD_WORKER}`) as Deployment | undefined;
      return deployment?.version === job.version ? snap.updateTime : undefined;
    }),
  );
  // Without throttling: a tick writes each job once, and its jobs are spread over many documents.
  const writer = db.bulkWriter({ throttling: false });
  // A precondition that fails means the job changed: the next tick looks at it as it is now.
  writer.onWriteError(() => false);
  const writes = jobs.map((job, i) => {
    const updateTime = read[i];
    if (!updateTime) return Promise.resolve(undefined);
    const ref = job.ref ?? jobsCollection(db, job.tenant).doc(job.job);
    return writer.update(ref, field, horizon, { lastUpdateTime: updateTime }).then(
      (): RunRequest => ({
        tenant: job.tenant,
        job: job.job,
        version: job.version,
        requested_ms: nowMs,
        reason,
        ...(job.stalls ? { stalls: job.stalls } : {}),
      }),
      () => undefined,
    );
  });
  await writer.close();
  const requests = (await Promise.all(writes)).filter((r): r is RunRequest => r !== undefined);
  await publishRunRequests(await deps.clients.pubsub(), requests);
  return requests;
}
