/**
 * Which jobs are deployed to each worker, kept on the worker's record (`deployed_jobs`)
 * by the transactions that deploy and undeploy, so that a page of `GET /api/workers`
 * reads its workers and nothing else (it used to read every job's deployments: 10,000
 * jobs made each page of workers cost over 200 ms). The jobs' `deployments` stay the truth;
 * this is their index by worker.
 *
 * Records from before the index have no `deployed_jobs`: a page with one of them answers
 * from the jobs, as before, and has the index built for the tenant's workers, each in a
 * transaction that reads that worker's jobs (so a deploy meanwhile is not lost). Deploys
 * and undeploys leave a record without the index alone, for that to happen.
 *
 * @example
 *   const workers = await readWorkerRecords(tx, db, tenant, ['w1']);  // reads first
 *   noteDeployed(tx, workers, 'orders');                            // then writes
 */
import type { DocumentSnapshot, Firestore, Transaction } from '@google-cloud/firestore';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import { jobsCollection } from '../jobs/store.ts';

/** The records of these workers (those that exist), read in the transaction. */
export async function readWorkerRecords(
  tx: Transaction,
  db: Firestore,
  tenant: string,
  workers: string[],
): Promise<DocumentSnapshot[]> {
  if (workers.length === 0) return [];
  const snaps = await tx.getAll(...workers.map((w) => tenantCollection(db, tenant, 'workers').doc(w)));
  return snaps.filter((snap) => snap.exists);
}

export async function noteDeployed(tx: Transaction, workers: DocumentSnapshot[], job: string): Promise<void> {
  const { FieldValue } = await import('@google-cloud/firestore');
  for (const snap of workers)
    if (Array.isArray(snap.get('deployed_jobs')))
      tx.update(snap.ref, { deployed_jobs: FieldValue.arrayUnion(job) });
}

export async function noteUndeployed(
  tx: Transaction,
  workers: DocumentSnapshot[],
  job: string,
): Promise<void> {
  const { FieldValue } = await import('@google-cloud/firestore');
  for (const snap of workers)
    if (Array.isArray(snap.get('deployed_jobs')))
      tx.update(snap.ref, { deployed_jobs: FieldValue.arrayRemove(job) });
}

/** The jobs deployed to `worker`, from the jobs themselves (one indexed query). */
export async function jobsDeployedTo(
  db: Firestore,
  tenant: string,
  worker: string,
  tx?: Transaction,
): Promise<string[]> {
  const { FieldPath } = await import('@google-cloud/firestore');
  // One path segment per name: a worker id may hold dots.
  const query = jobsCollection(db, tenant)
    .where(new FieldPath('deployments', worker, 'version'), '>=', 0)
    .select();
  const snap = tx ? await tx.get(query) : await query.get();
  return snap.docs.map((doc) => doc.id).sort();
}

/** Builds the index on the tenant's worker records that lack it (see above). */
export async function indexDeployedJobs(db: Firestore, tenant: string): Promise<void> {
  const lacking = (await tenantCollection(db, tenant, 'workers').get()).docs.filter(
    (doc) => !Array.isArray(doc.get('deployed_jobs')),
  );
  for (const doc of lacking) {
    await db.runTransaction(async (tx) => {
      const snap = await tx.get(doc.ref);
      if (!snap.exists || Array.isArray(snap.get('deployed_jobs'))) return;
      tx.update(doc.ref, { deployed_jobs: await jobsDeployedTo(db, tenant, doc.id, tx) });
    });
  }
}
