/**
 * The `contexts` family (admin only), CONTRACT section 2: merge updates for the global,
 * job and worker maps, wholesale replacement of a worker map, reads, export/import of
 * the global map, and resolution with per-key provenance. Saving the global map reaches
 * every worker at once, a worker map that worker; a job map waits for stage/redeploy.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { WorkerId } from '../../shared/auth/name-schemas.ts';
import { CONTEXT_FILE_FORMAT } from '../../shared/context/context-file.ts';
import {
  applyUpdate,
  ContextMapSchema,
  RawContextMapSchema,
  validateContextMap,
} from '../../shared/context/map.ts';
import { JobName } from '../../shared/job/schema.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, errors, json } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { deliver } from '../messaging/outbox.ts';
import { resolveContextFor } from './resolve.ts';
import { type ContextScope, ContextStore } from './store.ts';

const EXPORT_FORMAT = CONTEXT_FILE_FORMAT;

const ContextAnswer = z.object({ context: ContextMapSchema }).openapi('ContextAnswer');
const ExportDocument = z
  .object({ format: z.literal(EXPORT_FORMAT), exported_at: z.string().optional(), global: ContextMapSchema })
  .openapi('ContextExport');
const Resolved = z
  .object({
    context: ContextMapSchema,
    sources: z.record(z.string(), z.enum(['job', 'worker', 'global', 'definition', 'builtin'])),
  })
  .openapi('ResolvedContext');

// Taken as parsed, unchanged (see RawContextMapSchema); declared for the OpenAPI document only.
const RawMap = z
  .unknown()
  .openapi({ type: 'object', additionalProperties: {}, description: RawContextMapSchema.description });
// The imported map is checked by validateContextMap like any update: a record schema would
// silently drop a `__proto__` key and store the rest.
const ImportDocument = z
  .object({ format: z.literal(EXPORT_FORMAT), exported_at: z.string().optional(), global: RawMap })
  .openapi('ContextImport');
const mapBody = (description: string) => ({
  body: { required: true, description, content: { 'application/json': { schema: RawMap } } },
});

export function contextsFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use('/contexts/*', authenticate(deps), requireRole('admin'));
  const store = async () => new ContextStore(await deps.clients.firestore());

  /** Validates, stores atomically, then announces; answers with the stored map. */
  async function save(c: Context<AppEnv>, scope: ContextScope, body: unknown, mode: 'merge' | 'replace') {
    const update = validateContextMap(body, { allowNull: mode === 'merge' });
    const change = await (await store()).update(
      c.get('principal').tenant,
      scope,
      (current) => (mode === 'merge' ? applyUpdate(current, update) : update),
      { mode, keys: Object.keys(update) },
    );
    if (change.outbox) await deliver(deps, change.outbox.id, change.outbox.entry);
    return change.context;
  }

  const update = (path: string, summary: string, params: z.ZodObject | undefined) =>
    createRoute({
      method: 'post',
      path,
      tags: ['contexts'],
      summary,
      security: BEARER,
      request: {
        ...(params ? { params } : {}),
        ...mapBody('Context keys to values; null deletes a key (merge only)'),
      },
      responses: { 200: json(ContextAnswer, 'The map after the change'), ...errors(400, 401, 403, 413, 415) },
    });

  routes.openapi(
    update(
      '/contexts/update-global',
      'Merge keys into the global context; published to every worker at once',
      undefined,
    ),
    async (c) => c.json({ context: await save(c, { kind: 'global' }, c.req.valid('json'), 'merge') }, 200),
  );
  routes.openapi(
    update(
      '/contexts/update-job-map/{job}',
      'Merge keys into a job’s overrides; workers see them after stage or redeploy',
      z.object({ job: JobName }),
    ),
    async (c) =>
      c.json(
        {
          context: await save(
            c,
            { kind: 'job', name: c.req.param('job') as string },
            c.req.valid('json'),
            'merge',
          ),
        },
        200,
      ),
  );
  routes.openapi(
    update(
      '/contexts/update-worker-map/{worker}',
      'Merge keys into a worker’s overrides; sent to that worker at once',
      z.object({ worker: WorkerId }),
    ),
    async (c) =>
      c.json(
        {
          context: await save(
            c,
            { kind: 'worker', id: c.req.param('worker') as string },
            c.req.valid('json'),
            'merge',
          ),
        },
        200,
      ),
  );
  routes.openapi(
    update(
      '/contexts/update-worker-nomerge/{worker}',
      'Replace a worker’s overrides wholesale; sent to that worker at once',
      z.object({ worker: WorkerId }),
    ),
    async (c) =>
      c.json(
        {
          context: await save(
            c,
            { kind: 'worker', id: c.req.param('worker') as string },
            c.req.valid('json'),
            'replace',
          ),
        },
        200,
      ),
  );

  const read = (path: string, summary: string, params: z.ZodObject | undefined) =>
    createRoute({
      method: 'get',
      path,
      tags: ['contexts'],
      summary,
      security: BEARER,
      ...(params ? { request: { params } } : {}),
      responses: { 200: json(ContextMapSchema, 'The map (`{}` if none)'), ...errors(401, 403) },
    });

  routes.openapi(read('/contexts/global', 'The global context', undefined), async (c) =>
    c.json(await (await store()).read(c.get('principal').tenant, { kind: 'global' }), 200),
  );
  routes.openapi(
    read('/contexts/worker/{worker}', 'A worker’s overrides', z.object({ worker: WorkerId })),
    async (c) =>
      c.json(
        await (await store()).read(c.get('principal').tenant, {
          kind: 'worker',
          id: c.req.param('worker') as string,
        }),
        200,
      ),
  );
  routes.openapi(read('/contexts/job/{job}', 'A job’s overrides', z.object({ job: JobName })), async (c) =>
    c.json(
      await (await store()).read(c.get('principal').tenant, {
        kind: 'job',
        name: c.req.param('job') as string,
      }),
      200,
    ),
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/contexts/export',
      tags: ['contexts'],
      summary: 'Export the global context (backup)',
      security: BEARER,
      responses: { 200: json(ExportDocument, 'The export document'), ...errors(401, 403) },
    }),
    async (c) => {
      const global = await (await store()).read(c.get('principal').tenant, { kind: 'global' });
      return c.json({ format: EXPORT_FORMAT, exported_at: new Date().toISOString(), global }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/contexts/import',
      tags: ['contexts'],
      summary: 'Import an export document: replaces the global context wholesale (restore)',
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: ImportDocument } } } },
      responses: {
        200: json(ContextAnswer, 'The global map after the import'),
        ...errors(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      const document = c.req.valid('json');
      const context = await save(c, { kind: 'global' }, document.global, 'replace');
      return c.json({ context }, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/contexts/resolve',
      tags: ['contexts'],
      summary: 'The context a job gets on a worker, with the scope each key came from',
      security: BEARER,
      request: { query: z.object({ job: JobName, worker: WorkerId }) },
      responses: { 200: json(Resolved, 'Resolved context and provenance'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { job, worker } = c.req.valid('query');
      return c.json(await resolveContextFor(await store(), c.get('principal').tenant, job, worker), 200);
    },
  );

  return { name: 'contexts', routes };
}
