/**
 * The `workers` family: admins register workers (each gets a key, shown once),
 * list them with their online/offline state, rotate keys and delete them; a worker
 * with an enrollment secret registers itself (`POST /api/workers/enroll`, no token).
 * Each worker gets its own Pub/Sub subscription for control-plane messages.
 */
import { randomBytes } from 'node:crypto';
import type { Transaction } from '@google-cloud/firestore';
import { createRoute, z } from '@hono/zod-openapi';
import { hashKey, kindOfKey, newKey, sameHash } from '../../shared/auth/keys.ts';
import { WorkerId } from '../../shared/auth/name-schemas.ts';
import { parseDuration } from '../../shared/duration.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, noContent } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { clientAddress, FailureLimiter } from '../auth/rate-limit.ts';
import { authServices } from '../auth/services.ts';
import { deliver } from '../contexts/outbox.ts';
import { appendEventIn } from '../events/event-log.ts';
import { newGeneration } from '../identity/credential-refs.ts';
import type {
  EnrollmentSecretRecord,
  IdentityStore,
  KeyIndexEntry,
  WorkerRecord,
} from '../identity/store.ts';
import { jobsCollection } from '../jobs/store.ts';
import { deleteWorkerSubscription, ensureWorkerSubscription } from '../messaging/worker-channel.ts';
import { removeWorkerFromJobs } from './remove-deployments.ts';

/** Built-in workers: `cloud` (the scheduled function) always, `local` in the local stack. */
export const BUILT_IN_WORKERS = ['cloud', 'local'] as const;

/**
 * Nobody creates or enrolls a built-in id through the API: `cloud` is the scheduled
 * function, and `local` exists only in the local stack, which writes it itself
 * (local/local-worker.ts). An enrolled `local` in the cloud would pose as that worker.
 */
function assertNotBuiltIn(id: string): void {
  if ((BUILT_IN_WORKERS as readonly string[]).includes(id))
    throw ApiError.conflict(`worker id ${id} is built in`);
}

const Labels = z.record(z.string().max(63), z.string().max(63)).default({});
const CreateWorker = z.strictObject({ id: WorkerId, labels: Labels }).openapi('CreateWorker');
const EnrollWorker = z
  .strictObject({ secret: z.string().min(1).max(256), id: WorkerId.optional(), labels: Labels })
  .openapi('EnrollWorker');
const WorkerKey = z
  .object({ id: z.string(), key: z.string().openapi({ description: 'Shown once; store it now' }) })
  .openapi('WorkerKey');
const WorkerView = z
  .object({
    id: z.string(),
    labels: z.record(z.string(), z.string()),
    state: z.enum(['online', 'offline']),
    last_seen: z.string().nullable(),
    built_in: z.boolean(),
    jobs: z.array(z.string()),
    created_at: z.string().nullable(),
  })
  .openapi('Worker');
const IdParam = z.object({ id: z.string().max(128) });

export function workersFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const auth = authServices(deps);
  const heartbeatMs = parseDuration(deps.config.heartbeatInterval);
  const admin = [authenticate(deps), requireRole('admin')];
  const viewer = [authenticate(deps), requireRole('viewer')];

  /** Worker id → names of the jobs deployed to it, from one read of the tenant's jobs. */
  const deployedJobs = async (tenant: string): Promise<Map<string, string[]>> => {
    const snap = await jobsCollection(await deps.clients.firestore(), tenant)
      .select('deployments')
      .get();
    const byWorker = new Map<string, string[]>();
    for (const doc of snap.docs) {
      for (const worker of Object.keys(
        (doc.get('deployments') as Record<string, unknown> | undefined) ?? {},
      )) {
        byWorker.set(worker, [...(byWorker.get(worker) ?? []), doc.id]);
      }
    }
    return byWorker;
  };

  const view = (record: WorkerRecord | undefined, id: string, jobs: string[] = []) => {
    const lastSeen = record?.last_seen ?? null;
    const online =
      id === 'cloud' || (lastSeen !== null && Date.now() - Date.parse(lastSeen) < 3 * heartbeatMs);
    return {
      id,
      labels: record?.labels ?? {},
      state: online ? ('online' as const) : ('offline' as const),
      last_seen: lastSeen,
      built_in: (BUILT_IN_WORKERS as readonly string[]).includes(id),
      jobs,
      created_at: record?.created_at ?? null,
    };
  };

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/workers',
      tags: ['workers'],
      summary: 'Register a worker and get its key (shown once)',
      security: BEARER,
      middleware: admin,
      request: body(CreateWorker),
      responses: { 201: json(WorkerKey, 'The worker and its key'), ...errors(400, 401, 403, 409) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const tenant = c.get('principal').tenant;
      assertNotBuiltIn(input.id);
      const key = await createWorker(await auth.store(), tenant, input.id, input.labels);
      await ensureWorkerSubscription(await deps.clients.pubsub(), tenant, input.id);
      return c.json({ id: input.id, key }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/workers',
      tags: ['workers'],
      summary: 'Workers of the tenant, with state and last heartbeat',
      security: BEARER,
      middleware: viewer,
      responses: { 200: json(z.array(WorkerView), 'Workers'), ...errors(401, 403) },
    }),
    async (c) => {
      const tenant = c.get('principal').tenant;
      const [records, jobs] = await Promise.all([
        (await auth.store()).list<WorkerRecord>(tenant, 'workers'),
        deployedJobs(tenant),
      ]);
      const listed = records.map((r) => view(r, r.id, jobs.get(r.id)));
      if (!records.some((r) => r.id === 'cloud')) listed.unshift(view(undefined, 'cloud', jobs.get('cloud')));
      return c.json(listed, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/workers/{id}',
      tags: ['workers'],
      summary: 'One worker',
      security: BEARER,
      middleware: viewer,
      request: { params: IdParam },
      responses: { 200: json(WorkerView, 'The worker'), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const record = (await (await auth.store()).worker(c.get('principal').tenant, id).get()).data() as
        | WorkerRecord
        | undefined;
      if (!record && id !== 'cloud') throw ApiError.notFound(`no worker ${id}`);
      return c.json(view(record, id, (await deployedJobs(c.get('principal').tenant)).get(id)), 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'delete',
      path: '/workers/{id}',
      tags: ['workers'],
      summary: 'Delete a worker; its tokens stop working within 5 seconds',
      security: BEARER,
      middleware: admin,
      request: { params: IdParam },
      responses: { 204: noContent('Deleted'), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const tenant = c.get('principal').tenant;
      if (id === 'cloud') throw ApiError.conflict('the built-in cloud worker cannot be deleted');
      const store = await auth.store();
      const outbox = await store.db.runTransaction(async (tx) => {
        const ref = store.worker(tenant, id);
        const record = (await tx.get(ref)).data() as WorkerRecord | undefined;
        if (!record) throw ApiError.notFound(`no worker ${id}`);
        const queued = await removeWorkerFromJobs(tx, store.db, tenant, id);
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
      return c.body(null, 204);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/workers/{id}/rotate-key',
      tags: ['workers'],
      summary: 'Give a worker a new key; the old key and its tokens stop working',
      security: BEARER,
      middleware: admin,
      request: { params: IdParam },
      responses: { 201: json(WorkerKey, 'The new key'), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const tenant = c.get('principal').tenant;
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
      return c.json({ id, key }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/workers/enroll',
      tags: ['workers'],
      summary:
        'A worker registers itself with an enrollment secret (no bearer token: the secret is the credential)',
      request: body(EnrollWorker),
      responses: { 201: json(WorkerKey, 'The worker and its key'), ...errors(400, 401, 409, 429) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const store = await auth.store();
      const limiter = new FailureLimiter(store.db);
      const hash = hashKey(input.secret);
      const scopes = [`key:${hash.slice(0, 16)}`, `ip:${clientAddress(c, deps.config.trustedProxyHops)}`];
      await limiter.assertAllowed(scopes);
      const entry = kindOfKey(input.secret) === 'enrollment' ? await store.lookupKey(hash) : undefined;
      const id = input.id ?? `w-${randomBytes(5).toString('hex')}`;
      assertNotBuiltIn(id);
      const secretRef =
        entry?.kind === 'enrollment' ? store.enrollmentSecret(entry.tenant, entry.id) : undefined;
      const { key, hash: keyHash } = newKey('worker');
      const enrolled = secretRef
        ? await store.db.runTransaction(async (tx) => {
            const secret = (await tx.get(secretRef)).data() as EnrollmentSecretRecord | undefined;
            const usable =
              secret &&
              sameHash(secret.secret_hash, hash) &&
              (!secret.expires_at || Date.parse(secret.expires_at) > Date.now()) &&
              (secret.max_uses === undefined || secret.uses < secret.max_uses);
            if (!usable) return false;
            const workerRef = store.worker(entry!.tenant, id);
            if ((await tx.get(workerRef)).exists) throw ApiError.conflict(`worker ${id} already exists`);
            tx.update(secretRef, { uses: secret.uses + 1 });
            writeWorker(tx, store, entry!.tenant, id, input.labels, keyHash, 'enrolled');
            return true;
          })
        : false;
      if (!enrolled) {
        await limiter.recordFailure(scopes);
        throw ApiError.unauthenticated('the enrollment secret is not valid, expired or used up');
      }
      await ensureWorkerSubscription(await deps.clients.pubsub(), entry!.tenant, id);
      return c.json({ id, key }, 201);
    },
  );

  return { name: 'workers', routes };
}

/** Creates a worker record, its key index entry and a `worker-created` event; returns the key. */
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
