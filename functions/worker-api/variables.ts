/**
 * `GET /api/worker/variables` (role `worker`): the tenant's variables, which a worker
 * substitutes for `${dyn|NAME}` when it (re)starts a job. Variables are configuration,
 * not secrets; secrets go through `POST /api/worker/secrets/resolve`.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, errors, json } from '../app/openapi-common.ts';
import { variablesCollection } from '../variables/store.ts';

export function registerWorkerVariables(routes: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  routes.openapi(
    createRoute({
      method: 'get',
      path: '/worker/variables',
      tags: ['worker'],
      summary: 'Variables for ${dyn|NAME} references',
      security: BEARER,
      responses: {
        200: json(z.object({ variables: z.record(z.string(), z.string()) }), 'Variables'),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const snap = await variablesCollection(await deps.clients.firestore(), c.get('principal').tenant).get();
      return c.json(
        { variables: Object.fromEntries(snap.docs.map((d) => [d.id, d.get('value') as string])) },
        200,
      );
    },
  );
}
