/**
 * Marks workers `offline` that missed three heartbeats, once, with a `worker-offline`
 * event; a heartbeat marks them online again. Runs with the scheduled tasks. Their
 * `running` deployments go back to `pending` (assigned, not reported): nothing says they
 * still run, and `sluice job ls` must not show a job running on a worker that is gone. The
 * worker's next heartbeat reports them again.
 */
import { parseDuration } from '../../shared/duration.ts';
import { collectionGroup } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { appendEventIn } from '../events/event-log.ts';
import { readDeploymentStates } from '../jobs/deployments.ts';

export async function sweepOfflineWorkers(deps: AppDeps): Promise<string[]> {
  const db = await deps.clients.firestore();
  const cutoff = Date.now() - 3 * parseDuration(deps.config.heartbeatInterval);
  const snap = await collectionGroup(db, 'workers').where('online', '==', true).get();
  const stale = snap.docs.filter(
    (d) => Date.parse((d.get('last_seen') as string | undefined) ?? '') < cutoff,
  );
  for (const doc of stale) {
    const tenant = doc.ref.parent.parent!.id;
    await db.runTransaction(async (tx) => {
      const fresh = await tx.get(doc.ref);
      if (fresh.get('online') !== true || Date.parse(fresh.get('last_seen') as string) >= cutoff) return;
      const deployed = (fresh.get('deployed_jobs') as string[] | undefined) ?? [];
      const writeStates = await readDeploymentStates(
        db,
        tenant,
        doc.id,
        deployed.map((job) => ({ job, state: 'pending', source: 'server', onlyFrom: 'running' })),
        tx,
      );
      tx.update(doc.ref, { online: false });
      writeStates();
      appendEventIn(tx, db, tenant, {
        type: 'worker-offline',
        source: 'server',
        worker: doc.id,
        payload: { last_seen: fresh.get('last_seen') as string },
      });
    });
  }
  return stale.map((d) => d.id);
}
