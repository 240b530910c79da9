/**
 * What a run leaves beside its `cloud` deployment: the state a worker's heartbeat would
 * report (`running`, `idle`, `stopped`, `failed` with the reason) and when the job is due
 * next (`next_due_ms`), which the tick reads instead of the job. Both are written only
 * onto the deployed version the run looked at: a job staged or undeployed meanwhile keeps
 * what the lifecycle wrote.
 */
import type { Firestore } from '@google-cloud/firestore';
import { changeDocument } from '../adapters/conditional-write.ts';
import { type DeploymentStateChange, recordDeploymentStateUnlocked } from '../jobs/deployments.ts';
import { type JobRecord, jobsCollection } from '../jobs/store.ts';
import type { JobTickResult } from '../scheduled/tick.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';

/**
 * The state a deployment on `cloud` shows after a run: `idle` between runs (also when not
 * due yet, or stopped at its budget and carrying on), `stopped` once a job without a
 * trigger has had its one run, `failed` with the reason. A run leased by another runner is
 * that runner's to record.
 */
export function stateAfter(result: JobTickResult, runsOnce: boolean): DeploymentStateChange | undefined {
  switch (result.outcome) {
    case 'completed':
    case 'not-due':
      return { job: result.job, state: runsOnce ? 'stopped' : 'idle' };
    case 'stopped-at-deadline':
    case 'stopped-at-budget':
      return { job: result.job, state: 'idle' };
    case 'failed':
      return { job: result.job, state: 'failed', error: result.error ?? 'the run failed' };
    case 'skipped':
      return { job: result.job, state: 'failed', error: 'not runnable on the cloud worker' };
    case 'leased-elsewhere':
      return undefined;
  }
}

/**
 * Changes the job's deployment state on `cloud` (only when it differs, see
 * recordDeploymentStateUnlocked), without a transaction: a runner can be killed at any moment.
 */
export async function recordCloudState(
  db: Firestore,
  tenant: string,
  change: DeploymentStateChange,
): Promise<void> {
  await recordDeploymentStateUnlocked(db, tenant, CLOUD_WORKER, change);
}

/**
 * Keeps the job's next due time (epoch ms; null: not until it is deployed again; undefined:
 * removes it, so the next tick looks at the job) on its `cloud` deployment, if the deployed
 * version is still `version`. Written on condition the job is as read, not in a
 * transaction (adapters/conditional-write.ts: a killed runner must not lock the job).
 */
export async function recordNextDue(
  db: Firestore,
  tenant: string,
  job: string,
  version: number | undefined,
  nextDueMs: number | null | undefined,
): Promise<void> {
  const { FieldPath, FieldValue } = await import('@google-cloud/firestore');
  const ref = jobsCollection(db, tenant).doc(job);
  await changeDocument(ref, async (snapshot) => {
    const deployment = (snapshot.data() as JobRecord | undefined)?.deployments?.[CLOUD_WORKER];
    if (!deployment || (version !== undefined && deployment.version !== version)) return;
    if (deployment.next_due_ms === nextDueMs) return;
    await ref.update(
      new FieldPath('deployments', CLOUD_WORKER, 'next_due_ms'),
      nextDueMs === undefined ? FieldValue.delete() : nextDueMs,
      { lastUpdateTime: snapshot.updateTime! },
    );
  });
}
