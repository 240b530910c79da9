/**
 * `GET /api/worker/jobs` (role `worker`): the jobs deployed to the calling worker,
 * rendered for it. A worker fetches this on start and whenever a message tells it
 * that a deployment or a context changed.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, errors, json } from '../app/openapi-common.ts';
import { ContextStore } from '../contexts/store.ts';
import { renderStaged } from '../jobs/deployments.ts';
import { type JobRecord, jobsCollection } from '../jobs/store.ts';

const WorkerJob = z
  .object({
    name: z.string(),
    version: z.number(),
    definition: z.record(z.string(), z.unknown()).nullable(),
    error: z.string().optional(),
  })
  .openapi('WorkerJob');

export function registerWorkerJobs(routes: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  routes.openapi(
    createRoute({
      method: 'get',
      path: '/worker/jobs',
      tags: ['worker'],
      summary: 'Jobs deployed to the calling worker, rendered for it',
      security: BEARER,
      responses: { 200: json(z.array(WorkerJob), 'Deployed jobs'), ...errors(401, 403) },
    }),
    async (c) => {
      const { tenant, subject: worker } = c.get('principal');
      const db = await deps.clients.firestore();
      const { FieldPath } = await import('@google-cloud/firestore');
      // One segment per name: `deployments.dot.w.version` would look for worker `dot`.
      const snap = await jobsCollection(db, tenant)
        .where(new FieldPath('deployments', worker, 'version'), '>=', 0)
        .get();
      const contexts = new ContextStore(db);
      const jobs = await Promise.all(
        snap.docs.map(async (doc) => {
          const record = doc.data() as JobRecord;
          const rendered = await renderStaged(contexts, tenant, record, worker);
          return rendered.ok
            ? { name: record.name, version: rendered.version, definition: rendered.definition }
            : {
                name: record.name,
                version: rendered.version,
                definition: null,
                error: rendered.errors.map((e) => `${e.path}: ${e.message}`).join('; '),
              };
        }),
      );
      return c.json(jobs, 200);
    },
  );
}
