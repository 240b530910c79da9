/**
 * Object notifications waking a job on the `cloud` worker (the rules: shared/runs/wake.ts).
 * Reads the job's deployment and lease, decides, and requests a run through the run queue
 * like the tick does (dispatch.ts `requestRuns`, reason `notified`), so the run waits for
 * its tenant's slot and takes the job's lease as any other.
 *
 * @example
 *   const { ack } = await handleNotificationWake(deps, { tenant: 'acme', job: 'orders' });
 */
import { wokenByNotifications } from '../../shared/job/cloud-worker-rules.ts';
import { decideWake, type WakeDecision, type WakeTarget, wakeAcknowledged } from '../../shared/runs/wake.ts';
import { leasePath } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { type Deployment, type JobRecord, jobsCollection } from '../jobs/store.ts';
import { CLOUD_WORKER } from '../workers/registry.ts';
import { requestRuns } from './dispatch.ts';

export async function handleNotificationWake(
  deps: AppDeps,
  { tenant, job }: WakeTarget,
  nowMs = Date.now(),
): Promise<{ ack: boolean; decision: WakeDecision }> {
  const db = await deps.clients.firestore();
  const [doc, lease] = await Promise.all([
    jobsCollection(db, tenant).doc(job).get(),
    db.doc(leasePath(tenant, job)).get(),
  ]);
  const record = doc.data() as JobRecord | undefined;
  const deployment = record?.deployments?.[CLOUD_WORKER] as Deployment | undefined;
  const staged = record?.staged?.definition_json;
  const decision = decideWake(
    {
      deployed: deployment !== undefined,
      woken: staged !== undefined && wokenByNotifications(JSON.parse(staged) as { input?: unknown }),
      ...(deployment?.next_due_ms !== undefined ? { nextDueMs: deployment.next_due_ms } : {}),
      ...(lease.exists ? { leaseExpiresMs: lease.get('expires_at_ms') as number } : {}),
    },
    nowMs,
  );
  if (decision === 'request' && deployment)
    await requestRuns(deps, [{ tenant, job, version: deployment.version }], 'notified', nowMs);
  return { ack: wakeAcknowledged(decision), decision };
}
