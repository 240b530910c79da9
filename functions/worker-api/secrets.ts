/**
 * `POST /api/worker/secrets/resolve` (role `worker`): the values of the secrets a job uses
 * as rendered for the calling worker, deployed there, and nothing else (403 otherwise). Not
 * every secret the job uses on any worker: one job may reach each worker's own secret through
 * its worker context, and a worker host sees only its own (docs/security.md).
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { SECRET_REFS_PER_REQUEST } from '../../shared/api/worker-limits.ts';
import { ApiError } from '../../shared/errors.ts';
import { JobName } from '../../shared/job/schema.ts';
import { findRuntimeRefs } from '../../shared/runtime-refs.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, json } from '../app/openapi-common.ts';
import { SecretStore } from '../secrets/store.ts';
import { deployedJobs } from './jobs.ts';

export function registerSecretResolution(routes: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  routes.openapi(
    createRoute({
      method: 'post',
      path: '/worker/secrets/resolve',
      tags: ['worker'],
      summary: 'Values of the secrets a job deployed to this worker uses',
      security: BEARER,
      request: body(
        z.strictObject({
          job: JobName,
          refs: z.array(z.string().max(257)).min(1).max(SECRET_REFS_PER_REQUEST),
        }),
      ),
      responses: {
        200: json(z.object({ values: z.record(z.string(), z.string()) }), 'Values'),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const { job, refs } = c.req.valid('json');
      const { tenant, subject: worker } = c.get('principal');
      // Rendered as the worker gets it, held to the secrets approved at stage.
      const [deployed] = await deployedJobs(deps, tenant, worker, job);
      const used = deployed?.definition ? findRuntimeRefs(deployed.definition).secrets : [];
      const refused = refs.filter((ref) => !used.includes(ref));
      if (refused.length)
        throw ApiError.forbidden(`job ${job} on this worker does not use ${refused.join(', ')}`);
      const db = await deps.clients.firestore();
      return c.json({ values: await new SecretStore(db, deps.config.secretsKey).reveal(tenant, refs) }, 200);
    },
  );
}
