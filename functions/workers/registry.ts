/**
 * The worker registry: which workers a tenant has, whether each is online, and the
 * lifecycle of one (create, enroll, rotate its key, delete). The built-in workers are
 * declared here: `cloud` (the scheduled function, always there and always online) and
 * `local` (the local stack's worker, which the stack creates itself). Route handlers,
 * the local stack and the job lifecycle all come here; none reaches into a routes file.
 */

import { randomBytes } from 'node:crypto';
import type { Transaction } from '@google-cloud/firestore';
import { encodePageToken, type PageRequest } from '../../shared/api/paging.ts';
import type { WorkerView } from '../../shared/api/workers.ts';
import { hashKey, kindOfKey, newKey, sameHash } from '../../shared/auth/keys.ts';
import { parseDuration } from '../../shared/duration.ts';
import { ApiError } from '../../shared/errors.ts';
import { tenantCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { FailureLimiter } from '../auth/rate-limit.ts';
import { authServices } from '../auth/services.ts';
import { ContextStore } from '../contexts/store.ts';
import { appendEventIn } from '../events/event-log.ts';
import { newGeneration } from '../identity/credential-refs.ts';
import type {
  EnrollmentSecretRecord,
  IdentityStore,
  KeyIndexEntry,
  WorkerRecord,
} from '../identity/store.ts';
import { jobsCollection } from '../jobs/store.ts';
import { deliver } from '../messaging/outbox.ts';
import { deleteWorkerSubscription, ensureWorkerSubscription } from '../messaging/worker-channel.ts';
import { indexDeployedJobs, jobsDeployedTo } from './deployed-jobs.ts';
import { removeWorkerFromJobs } from './remove-deployments.ts';

/** Built-in workers: `cloud` (the scheduled function) always, `local` in the local stack. */
export const BUILT_IN_WORKERS = ['cloud', 'local'] as const;
export const CLOUD_WORKER = 'cloud';

export function isBuiltInWorker(id: string): boolean {
  return (BUILT_IN_WORKERS as readonly string[]).includes(id);
}

/**
 * Nobody creates or enrolls a built-in id through the API: `cloud` is the scheduled
 * function, and `local` exists only in the local stack, which writes it itself
 * (local/local-worker.ts). An enrolled `local` in the cloud would pose as that worker.
 */
function assertNotBuiltIn(id: string): void {
  if (isBuiltInWorker(id)) throw ApiError.conflict(`worker id ${id} is built in`);
}

/** Online: `cloud` always; any other worker while it heartbeats (three missed beats make it offline). */
function viewOf(
  deps: AppDeps,
  record: WorkerRecord | undefined,
  id: string,
  jobs: string[] = [],
): WorkerView {
  const lastSeen = record?.last_seen ?? null;
  const heartbeatMs = parseDuration(deps.config.heartbeatInterval);
  const online =
    id === CLOUD_WORKER || (lastSeen !== null && Date.now() - Date.parse(lastSeen) < 3 * heartbeatMs);
  return {
    id,
    labels: record?.labels ?? {},
    state: online ? 'online' : 'offline',
    last_seen: lastSeen,
    built_in: isBuiltInWorker(id),
    jobs,
    created_at: record?.created_at ?? null,
  };
}

/** Worker id → names of the jobs deployed to it, from one read of the tenant's jobs (records without the index). */
async function deployedJobs(deps: AppDeps, tenant: string): Promise<Map<string, string[]>> {
  const snap = await jobsCollection(await deps.clients.firestore(), tenant)
    .select('deployments')
    .get();
  const byWorker = new Map<string, string[]>();
  for (const doc of snap.docs) {
    for (const worker of Object.keys((doc.get('deployments') as Record<string, unknown> | undefined) ?? {})) {
      byWorker.set(worker, [...(byWorker.get(worker) ?? []), doc.id]);
    }
  }
  return byWorker;
}

/**
 * The jobs of each worker of a page: from their records' index, or (a record from before
 * it) from the jobs, while the index is built for the tenant in the background.
 */
async function jobsOfWorkers(
  deps: AppDeps,
  tenant: string,
  records: WorkerRecord[],
  withCloud: boolean,
): Promise<Map<string, string[]>> {
  const db = await deps.clients.firestore();
  if (records.some((r) => !Array.isArray(r.deployed_jobs))) {
    void indexDeployedJobs(db, tenant).catch((err) =>
      deps.logger.warn({ err, tenant }, "could not index the workers' deployed jobs"),
    );
    return deployedJobs(deps, tenant);
  }
  const jobs = new Map(records.map((r) => [r.id, [...r.deployed_jobs!].sort()]));
  // `cloud` has no record of its own: its jobs come from one indexed query.
  if (withCloud) jobs.set(CLOUD_WORKER, await jobsDeployedTo(db, tenant, CLOUD_WORKER));
  return jobs;
}

/**
 * A page of the tenant's workers, oldest first; the first page starts with `cloud` when it
 * has no record of its own (it counts towards the page's limit).
 */
export async function listWorkers(
  deps: AppDeps,
  tenant: string,
  request: PageRequest,
): Promise<{ items: WorkerView[]; next?: string }> {
  const store = await authServices(deps).store();
  const virtualCloud =
    request.after === undefined && !(await store.worker(tenant, CLOUD_WORKER).get()).exists;
  const limit = virtualCloud ? request.limit - 1 : request.limit;
  // A page of `cloud` alone still says whether records follow (they start after the key ['', '']).
  const records = await store.list<WorkerRecord>(tenant, 'workers', {
    ...request,
    limit: Math.max(1, limit),
  });
  const listed = limit > 0 ? records.items : [];
  const jobs = await jobsOfWorkers(deps, tenant, listed, virtualCloud);
  const next = limit > 0 ? records.next : records.items.length ? encodePageToken(['', '']) : undefined;
  const items = listed.map((r) => viewOf(deps, r, r.id, jobs.get(r.id)));
  if (virtualCloud) items.unshift(viewOf(deps, undefined, CLOUD_WORKER, jobs.get(CLOUD_WORKER)));
  return { items, ...(next ? { next } : {}) };
}

export async function getWorker(deps: AppDeps, tenant: string, id: string): Promise<WorkerView> {
  const store = await authServices(deps).store();
  const record = (await store.worker(tenant, id).get()).data() as WorkerRecord | undefined;
  if (!record && id !== CLOUD_WORKER) throw ApiError.notFound(`no worker ${id}`);
  const jobs = await jobsOfWorkers(deps, tenant, record ? [record] : [], !record);
  return viewOf(deps, record, id, jobs.get(id));
}

/** An admin registers a worker: its record, key and message subscription. Returns the key (shown once). */
export async function registerWorker(
  deps: AppDeps,
  tenant: string,
  id: string,
  labels: Record<string, string>,
): Promise<string> {
  assertNotBuiltIn(id);
  // Its subscription first: created after the record, a failure to create it lost the key
  // (shown once) and a retry found the id taken. One left by a failed create is the same
  // worker's again on the next try.
  await ensureWorkerSubscription(await deps.clients.pubsub(), tenant, id);
  return await createWorker(await authServices(deps).store(), tenant, id, labels);
}

/**
 * Creates a worker record, its key index entry and a `worker-created` event; returns the
 * key. The local stack calls it directly for its built-in `local` worker.
 */
export async function createWorker(
  store: IdentityStore,
  tenant: string,
  id: string,
  labels: Record<string, string>,
): Promise<string> {
  const { key, hash } = newKey('worker');
  await store.db.runTransaction(async (tx) => {
    if ((await tx.get(store.worker(tenant, id))).exists)
      throw ApiError.conflict(`worker ${id} already exists`);
    writeWorker(tx, store, tenant, id, labels, hash, 'created');
  });
  return key;
}

/**
 * A worker registers itself with an enrollment secret. Every way the secret can be wrong
 * (unknown, expired, used up, not an enrollment secret) is one failed attempt for the
 * limiter, and answers the same.
 */
export async function enrollWorker(
  deps: AppDeps,
  input: { secret: string; id?: string; labels: Record<string, string>; scopes: (hash: string) => string[] },
): Promise<{ id: string; key: string }> {
  const store = await authServices(deps).store();
  const limiter = new FailureLimiter(store.db);
  const hash = hashKey(input.secret);
  const scopes = input.scopes(hash);
  const attempt = await limiter.begin(scopes);
  const entry = kindOfKey(input.secret) === 'enrollment' ? await store.lookupKey(hash) : undefined;
  const id = input.id ?? `w-${randomBytes(5).toString('hex')}`;
  assertNotBuiltIn(id);
  const secretRef = entry?.kind === 'enrollment' ? store.enrollmentSecret(entry.tenant, entry.id) : undefined;
  const { key, hash: keyHash } = newKey('worker');
  /** Whether the secret proved good: then the attempt is no failure, whatever happens next. */
  let proved = false;
  const enrolled = secretRef
    ? await store.db
        .runTransaction(async (tx) => {
          proved = false;
          const secret = (await tx.get(secretRef)).data() as EnrollmentSecretRecord | undefined;
          const usable =
            secret &&
            sameHash(secret.secret_hash, hash) &&
            (!secret.expires_at || Date.parse(secret.expires_at) > Date.now()) &&
            (secret.max_uses === undefined || secret.uses < secret.max_uses);
          if (!usable) return false;
          proved = true;
          const workerRef = store.worker(entry!.tenant, id);
          if ((await tx.get(workerRef)).exists) throw ApiError.conflict(`worker ${id} already exists`);
          tx.update(secretRef, { uses: secret.uses + 1 });
          writeWorker(tx, store, entry!.tenant, id, input.labels, keyHash, 'enrolled');
          return true;
        })
        .finally(async () => {
          if (proved) await attempt.succeeded();
        })
    : false;
  if (!enrolled) {
    throw ApiError.unauthenticated('the enrollment secret is not valid, expired or used up');
  }
  // Only once the secret proved good (no subscriptions for strangers), so a failure here takes
  // the worker back: its key would be lost, and a retry would find the id taken.
  try {
    await ensureWorkerSubscription(await deps.clients.pubsub(), entry!.tenant, id);
  } catch (err) {
    // The worker never came to be: a context map set ahead of it for this id stays.
    await deleteWorker(deps, entry!.tenant, id, { keepContext: true }).catch(() => {});
    throw err;
  }
  return { id, key };
}

/**
 * Deletes a worker, takes it off every job and deletes its context map, all in the same
 * transaction (a worker enrolled later under the same id inherits nothing); its tokens stop
 * working within seconds. `keepContext`: an enrollment taking itself back keeps the map.
 */
export async function deleteWorker(
  deps: AppDeps,
  tenant: string,
  id: string,
  options: { keepContext?: boolean } = {},
): Promise<void> {
  // Always there: `local` too, whose runtime the local stack runs with the key it wrote.
  if (isBuiltInWorker(id)) throw ApiError.conflict(`the built-in ${id} worker cannot be deleted`);
  const auth = authServices(deps);
  const store = await auth.store();
  const outbox = await store.db.runTransaction(async (tx) => {
    const ref = store.worker(tenant, id);
    const record = (await tx.get(ref)).data() as WorkerRecord | undefined;
    if (!record) throw ApiError.notFound(`no worker ${id}`);
    // Reads before writes: removeWorkerFromJobs reads, then writes.
    const removeContext = options.keepContext
      ? () => {}
      : await new ContextStore(store.db).readForRemoval(tx, tenant, { kind: 'worker', id });
    const queued = await removeWorkerFromJobs(tx, store.db, tenant, id);
    removeContext();
    store.deleteKeyed(tx, ref, record.key_hash);
    appendEventIn(tx, store.db, tenant, {
      type: 'worker-removed',
      source: 'server',
      worker: id,
      payload: {},
    });
    return queued;
  });
  auth.forget(`worker:${tenant}:${id}`);
  await Promise.all(outbox.map((o) => deliver(deps, o.id, o.entry)));
  await deleteWorkerSubscription(await deps.clients.pubsub(), tenant, id);
}

/** Gives a worker a new key; the old key and the tokens made with it stop working. */
export async function rotateWorkerKey(deps: AppDeps, tenant: string, id: string): Promise<string> {
  if (isBuiltInWorker(id))
    throw ApiError.conflict(
      id === CLOUD_WORKER
        ? `the built-in ${id} worker's key does not exist: it runs inside the control plane`
        : `the built-in ${id} worker's key is the local stack's (.sluice/local-worker-key): delete that file and restart the stack for a new one`,
    );
  const auth = authServices(deps);
  const store = await auth.store();
  const { key, hash } = newKey('worker');
  await store.db.runTransaction(async (tx) => {
    const ref = store.worker(tenant, id);
    const record = (await tx.get(ref)).data() as WorkerRecord | undefined;
    if (!record) throw ApiError.notFound(`no worker ${id}`);
    tx.delete(store.keyIndex(record.key_hash));
    tx.create(store.keyIndex(hash), { kind: 'worker', tenant, id } satisfies KeyIndexEntry);
    tx.update(ref, { key_hash: hash, key_version: record.key_version + 1 });
  });
  auth.forget(`worker:${tenant}:${id}`);
  return key;
}

/**
 * Workers that have no record, but `cloud`: a deploy or message to them is refused. `local`
 * has a record where the local stack made it (tenant `default`), and is unknown elsewhere:
 * accepted there, a deploy stayed `pending` for ever.
 */
export async function unknownWorkers(
  db: FirebaseFirestore.Firestore,
  tenant: string,
  workers: string[],
  tx?: Transaction,
): Promise<string[]> {
  const candidates = workers.filter((w) => w !== CLOUD_WORKER);
  if (!candidates.length) return [];
  const refs = candidates.map((w) => tenantCollection(db, tenant, 'workers').doc(w));
  const snaps = tx ? await tx.getAll(...refs) : await db.getAll(...refs);
  return candidates.filter((_, i) => !snaps[i]!.exists);
}

function writeWorker(
  tx: Transaction,
  store: IdentityStore,
  tenant: string,
  id: string,
  labels: Record<string, string>,
  keyHash: string,
  how: 'created' | 'enrolled',
): void {
  const record: WorkerRecord = {
    id,
    labels,
    key_hash: keyHash,
    generation: newGeneration(),
    key_version: 1,
    created_at: new Date().toISOString(),
    deployed_jobs: [],
  };
  tx.create(store.worker(tenant, id), record);
  tx.create(store.keyIndex(keyHash), { kind: 'worker', tenant, id } satisfies KeyIndexEntry);
  appendEventIn(tx, store.db, tenant, {
    type: 'worker-created',
    source: 'server',
    worker: id,
    payload: { how, labels },
  });
}
