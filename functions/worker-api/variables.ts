/**
 * `GET /api/worker/variables[?job=NAME]` (role `worker`): the values of the variables that
 * the jobs deployed to the calling worker reference (`${dyn|NAME}`, `${dyn|NAME||fallback}`,
 * in their definitions as rendered for this worker), which it substitutes when it (re)starts
 * a job; with `job`, those of that job only. Nothing else: variables are admin-only on the
 * user API, and a worker is trusted with what its jobs use (docs/security.md), as
 * `POST /api/worker/secrets/resolve` gives it only its jobs' secrets.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { isPrototypeName } from '../../shared/auth/names.ts';
import { ApiError } from '../../shared/errors.ts';
import { JobName } from '../../shared/job/schema.ts';
import { findRuntimeRefs, isVariableName } from '../../shared/runtime-refs.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, errors, json } from '../app/openapi-common.ts';
import { variablesCollection } from '../variables/store.ts';
import { deployedJobs } from './jobs.ts';

export function registerWorkerVariables(routes: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  routes.openapi(
    createRoute({
      method: 'get',
      path: '/worker/variables',
      tags: ['worker'],
      summary: 'Values of the variables (dyn|NAME references) of the jobs deployed to this worker',
      security: BEARER,
      request: {
        query: z.object({
          job: JobName.optional().openapi({
            description: 'Only the variables of this job (it must be deployed to the calling worker)',
          }),
        }),
      },
      responses: {
        200: json(
          z.object({ variables: z.record(z.string(), z.string()) }),
          'Variables that exist, by name; a referenced variable that does not is absent',
        ),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const { job } = c.req.valid('query');
      const { tenant, subject: worker } = c.get('principal');
      const jobs = await deployedJobs(deps, tenant, worker, job);
      if (job !== undefined && !jobs.length)
        throw ApiError.forbidden(`job ${job} is not deployed to this worker`);
      const names = new Set<string>();
      for (const deployed of jobs) {
        if (!deployed.definition) continue; // it does not render: the worker cannot run it
        for (const name of findRuntimeRefs(deployed.definition).variables)
          if (isVariableName(name) && !isPrototypeName(name)) names.add(name);
      }
      if (!names.size) return c.json({ variables: {} }, 200);
      const db = await deps.clients.firestore();
      const snaps = await db.getAll(
        ...[...names].sort().map((name) => variablesCollection(db, tenant).doc(name)),
      );
      const variables: Record<string, string> = {};
      for (const snap of snaps) if (snap.exists) variables[snap.id] = snap.get('value') as string;
      return c.json({ variables }, 200);
    },
  );
}
