/**
 * `GET /api/worker/jobs` (role `worker`): the jobs deployed to the calling worker,
 * rendered for it. A worker fetches this on start and whenever a message tells it
 * that a deployment or a context changed.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { hasOwn } from '../../shared/own.ts';
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
      return c.json(await deployedJobs(deps, tenant, worker), 200);
    },
  );
}

export type WorkerJobType = z.infer<typeof WorkerJob>;

/**
 * The jobs deployed to a worker, rendered for it (`definition` null, with the `error`, for
 * one that does not render); with `only`, just that job, and none when it is not deployed
 * to the worker.
 */
export async function deployedJobs(
  deps: AppDeps,
  tenant: string,
  worker: string,
  only?: string,
): Promise<WorkerJobType[]> {
  const db = await deps.clients.firestore();
  let records: JobRecord[];
  if (only !== undefined) {
    const record = (await jobsCollection(db, tenant).doc(only).get()).data() as JobRecord | undefined;
    records = record && hasOwn(record.deployments, worker) ? [record] : [];
  } else {
    const { FieldPath } = await import('@google-cloud/firestore');
    // One segment per name: `deployments.dot.w.version` would look for worker `dot`.
    const snap = await jobsCollection(db, tenant)
      .where(new FieldPath('deployments', worker, 'version'), '>=', 0)
      .get();
    records = snap.docs.map((doc) => doc.data() as JobRecord);
  }
  const contexts = new ContextStore(db);
  return await Promise.all(
    records.map(async (record) => {
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
}
