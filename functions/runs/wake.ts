/**
 * Object notifications waking a job on the `cloud` worker (the rules: shared/runs/wake.ts).
 * Reads the job's deployment and lease, decides, and requests a run through the run queue
 * like the tick does (dispatch.ts `requestRuns`, reason `notified`), so the run waits for
 * its tenant's slot and takes the job's lease as any other.
 *
 * The job's lease and its next due time are read together, and a run's runner changes them
 * together (`releaseJob`): a free job showing a run requested has a run still to start.
 *
 * @example
 *   const { ack } = await handleNotificationWake(deps, { tenant: 'acme', job: 'orders' });
 */
import type { Firestore } from '@google-cloud/firestore';
import { wokenByNotifications } from '../../shared/job/cloud-worker-rules.ts';
import { decideWake, type WakeDecision, type WakeTarget, wakeAcknowledged } from '../../shared/runs/wake.ts';
import { changeDocument } from '../adapters/conditional-write.ts';
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
  let decision: WakeDecision = 'request';
  for (let attempt = 0; attempt < WAKE_ATTEMPTS; attempt++) {
    const { snapshot, record, lease } = await readJobAndLease(db, tenant, job);
    const deployment = record?.deployments?.[CLOUD_WORKER] as Deployment | undefined;
    decision = decideWake(
      {
        deployed: deployment !== undefined,
        woken: isWoken(record),
        ...(deployment?.next_due_ms !== undefined ? { nextDueMs: deployment.next_due_ms } : {}),
        ...(lease.exists ? { leaseExpiresMs: lease.get('expires_at_ms') as number } : {}),
      },
      nowMs,
    );
    if (decision !== 'request' || !deployment) return { ack: wakeAcknowledged(decision), decision };
    // Requested only if the job is still as decided on: pushes of one batch come at once,
    // and one that read the job just before another's request would request a second run.
    const requested = await requestRuns(
      deps,
      [{ tenant, job, version: deployment.version, ref: snapshot.ref, updateTime: snapshot.updateTime! }],
      'notified',
      nowMs,
    );
    if (requested.length) return { ack: true, decision };
    // The job changed since it was read (another push requested its run, a deploy): look again.
  }
  // Still changing under us: Pub/Sub brings the push back.
  return { ack: false, decision };
}

/** Reads of a job that keeps changing before a wake gives up and has the push come back. */
const WAKE_ATTEMPTS = 5;

/**
 * What a run's runner does last with the job's lease (`owner`'s): gives it back and records
 * when the job is due next (recordNextDue's rules: only onto `version` when given; undefined
 * removes it) in one write. Two writes would leave a moment when a wake finds the job free
 * and still showing the request of the run that has just ended, acknowledges, and nothing
 * reads the notification. A lease that lapsed before this left that moment open: a job
 * woken by notifications then has a run requested.
 */
export async function releaseJob(
  deps: AppDeps,
  { tenant, job }: WakeTarget,
  owner: string,
  next: { version?: number | undefined; nextDueMs: number | null | undefined },
): Promise<void> {
  const db = await deps.clients.firestore();
  const { FieldPath, FieldValue } = await import('@google-cloud/firestore');
  const ref = jobsCollection(db, tenant).doc(job);
  const leaseRef = db.doc(leasePath(tenant, job));
  // Not a transaction: a runner killed inside one would lock the job (conditional-write.ts).
  const rerun = await changeDocument(ref, async (snapshot) => {
    const lease = await leaseRef.get();
    const ours = lease.exists && lease.get('owner') === owner;
    const record = snapshot.data() as JobRecord | undefined;
    const deployment = record?.deployments?.[CLOUD_WORKER];
    const batch = db.batch();
    if (ours) batch.delete(leaseRef, { lastUpdateTime: lease.updateTime! });
    if (
      deployment &&
      (next.version === undefined || deployment.version === next.version) &&
      deployment.next_due_ms !== next.nextDueMs
    )
      batch.update(
        ref,
        new FieldPath('deployments', CLOUD_WORKER, 'next_due_ms'),
        next.nextDueMs === undefined ? FieldValue.delete() : next.nextDueMs,
        { lastUpdateTime: snapshot.updateTime! },
      );
    await batch.commit();
    const lapsed = ours && (lease.get('expires_at_ms') as number) <= Date.now();
    return lapsed && deployment && isWoken(record) ? { version: deployment.version } : undefined;
  });
  if (rerun) await requestRuns(deps, [{ tenant, job, ...rerun }], 'notified');
}

/**
 * After a run request found the job leased by another run: has the tick look at the job
 * again when that lease ends (its next due time becomes the lease's expiry), only while
 * the lease is held as read. Once its holder has freed the job (`releaseJob`), what that
 * run recorded stands: an expiry written over it would show a run still requested, and a
 * notification waking the job would wait for that time with nothing to read it.
 */
export async function recordNextDueAtLeaseEnd(
  deps: AppDeps,
  { tenant, job }: WakeTarget,
  version: number,
): Promise<void> {
  const db = await deps.clients.firestore();
  const { FieldPath } = await import('@google-cloud/firestore');
  const ref = jobsCollection(db, tenant).doc(job);
  const leaseRef = db.doc(leasePath(tenant, job));
  await changeDocument(ref, async (snapshot) => {
    const lease = await leaseRef.get();
    const expiresMs = lease.get('expires_at_ms') as number | undefined;
    if (!lease.exists || expiresMs === undefined || expiresMs <= Date.now()) return;
    const deployment = (snapshot.data() as JobRecord | undefined)?.deployments?.[CLOUD_WORKER];
    if (!deployment || deployment.version !== version || deployment.next_due_ms === expiresMs) return;
    const batch = db.batch();
    batch.update(ref, new FieldPath('deployments', CLOUD_WORKER, 'next_due_ms'), expiresMs, {
      lastUpdateTime: snapshot.updateTime!,
    });
    // The lease written back as read: the batch fails if its holder freed or renewed it meanwhile.
    batch.update(leaseRef, { expires_at_ms: expiresMs }, { lastUpdateTime: lease.updateTime! });
    await batch.commit();
  });
}

/**
 * The job and its lease as they stood at one moment. Two plain reads could see the job
 * before its run's end and the lease after it. A read-only transaction takes no locks.
 */
async function readJobAndLease(db: Firestore, tenant: string, job: string) {
  const [doc, lease] = await db.runTransaction(
    (tx) => tx.getAll(jobsCollection(db, tenant).doc(job), db.doc(leasePath(tenant, job))),
    { readOnly: true },
  );
  return { snapshot: doc!, record: doc!.data() as JobRecord | undefined, lease: lease! };
}

/** Deployed from a staged definition whose `gcs` input notifications wake (cloud-worker-rules.ts). */
function isWoken(record: JobRecord | undefined): boolean {
  const staged = record?.staged?.definition_json;
  return staged !== undefined && wokenByNotifications(JSON.parse(staged) as { input?: unknown });
}
