/**
 * The `workers` family: admins register workers (each gets a key, shown once),
 * list them with their online/offline state, rotate keys and delete them; a worker
 * with an enrollment secret registers itself (`POST /api/workers/enroll`, no token).
 * The lifecycle itself is in registry.ts.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { PageQuery } from '../../shared/api/page-query.ts';
import { WorkerKey as WorkerKeySchema, WorkerView as WorkerViewSchema } from '../../shared/api/workers.ts';
import { WorkerId } from '../../shared/auth/name-schemas.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, jsonPage, noContent } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { clientAddress } from '../auth/rate-limit.ts';
import {
  deleteWorker,
  enrollWorker,
  getWorker,
  listWorkers,
  registerWorker,
  rotateWorkerKey,
} from './registry.ts';

const Labels = z.record(z.string().max(63), z.string().max(63)).default({});
const CreateWorker = z.strictObject({ id: WorkerId, labels: Labels }).openapi('CreateWorker');
const EnrollWorker = z
  .strictObject({ secret: z.string().min(1).max(256), id: WorkerId.optional(), labels: Labels })
  .openapi('EnrollWorker');
const WorkerKey = WorkerKeySchema.extend({
  key: z.string().openapi({ description: 'Shown once; store it now' }),
}).openapi('WorkerKey');
const WorkerView = WorkerViewSchema.openapi('Worker');
const IdParam = z.object({ id: z.string().max(128) });

export function workersFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const admin = [authenticate(deps), requireRole('admin')];
  const viewer = [authenticate(deps), requireRole('viewer')];

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
      const key = await registerWorker(deps, c.get('principal').tenant, input.id, input.labels);
      return c.json({ id: input.id, key }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/workers',
      tags: ['workers'],
      summary: 'Workers of the tenant, with state and last heartbeat, oldest first, a page at a time',
      security: BEARER,
      middleware: viewer,
      request: { query: PageQuery },
      responses: { 200: jsonPage(z.array(WorkerView), 'Workers'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const page = await listWorkers(deps, c.get('principal').tenant, pageRequest(c.req.valid('query')));
      setNextPage(c, page.next);
      return c.json(page.items, 200);
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
      return c.json(await getWorker(deps, c.get('principal').tenant, c.req.valid('param').id), 200);
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
      await deleteWorker(deps, c.get('principal').tenant, c.req.valid('param').id);
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
      responses: { 201: json(WorkerKey, 'The new key'), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const key = await rotateWorkerKey(deps, c.get('principal').tenant, id);
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
      const address = clientAddress(c, deps.config.trustedProxyHops);
      const enrolled = await enrollWorker(deps, {
        ...input,
        scopes: (hash) => [`key:${hash.slice(0, 16)}`, `ip:${address}`],
      });
      return c.json(enrolled, 201);
    },
  );

  return { name: 'workers', routes };
}
