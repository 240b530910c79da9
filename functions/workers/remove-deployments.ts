/**
 * Takes a worker off every job it is deployed to, inside the transaction that deletes it:
 * a worker enrolled later under the same id must inherit no jobs (and so no secrets).
 * Each removal records what an undeploy records (`job-removed`, and a
 * `deployed-job-removed` message through the outbox, delivered after the commit).
 *
 * Reads first and then writes, as a Firestore transaction requires: call it after the
 * caller's own reads and before its own writes.
 */
import type { Firestore, Transaction } from '@google-cloud/firestore';
import { appendEventIn, buildEvent } from '../events/event-log.ts';
import { definitionOf, type JobRecord, jobsCollection } from '../jobs/store.ts';
import { writeTriggerRoutes } from '../messaging/event-relay.ts';
import { enqueueMessage, type OutboxEntry } from '../messaging/outbox.ts';

export async function removeWorkerFromJobs(
  tx: Transaction,
  db: Firestore,
  tenant: string,
  worker: string,
): Promise<{ id: string; entry: OutboxEntry }[]> {
  const { FieldPath, FieldValue } = await import('@google-cloud/firestore');
  // One path segment per name: a worker id may hold dots.
  const deployed = await tx.get(
    jobsCollection(db, tenant).where(new FieldPath('deployments', worker, 'version'), '>=', 0),
  );
  return deployed.docs.map((doc) => {
    tx.update(doc.ref, new FieldPath('deployments', worker), FieldValue.delete());
    // Its message triggers stop listening on that worker too.
    const record = doc.data() as JobRecord;
    const remaining = Object.keys(record.deployments ?? {}).filter((w) => w !== worker);
    writeTriggerRoutes(
      tx,
      db,
      tenant,
      doc.id,
      record.staged ? definitionOf(record.staged) : undefined,
      remaining,
    );
    appendEventIn(tx, db, tenant, {
      type: 'job-removed',
      source: 'server',
      job: doc.id,
      worker,
      payload: {},
    });
    return enqueueMessage(
      tx,
      db,
      { tenant, worker },
      buildEvent({ type: 'deployed-job-removed', source: 'server', job: doc.id, worker, payload: {} }),
    );
  });
}
