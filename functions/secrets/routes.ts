/**
 * The `secrets` family (admin), CONTRACT section 6: `PUT /api/secrets/{scope}/{name}`
 * stores a value encrypted; listing shows scope, name and `updated_at`, never values.
 * Jobs reference secrets as `${secret|scope/name}`; only the worker running such a job
 * can have them revealed (`POST /api/worker/secrets/resolve`).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { PageQuery } from '../../shared/api/page-query.ts';
import { pageInMemory } from '../../shared/api/paging.ts';
import { resourceId } from '../../shared/auth/name-schemas.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, jsonPage, noContent } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { changeSecret } from './change.ts';
import { SecretStore } from './store.ts';

const Params = z.object({
  scope: resourceId('scopes'),
  name: resourceId('names'),
});

export function secretsFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use('/secrets', authenticate(deps), requireRole('admin'));
  routes.use('/secrets/*', authenticate(deps), requireRole('admin'));
  const store = async () => new SecretStore(await deps.clients.firestore(), deps.config.secretsKey);

  routes.openapi(
    createRoute({
      method: 'put',
      path: '/secrets/{scope}/{name}',
      tags: ['secrets'],
      summary: 'Store a secret (encrypted at rest; never returned)',
      security: BEARER,
      request: {
        params: Params,
        ...body(
          z
            .strictObject({
              value: z
                .string()
                .min(1)
                .max(64 * 1024),
            })
            .openapi('SecretValue'),
        ),
      },
      responses: { 204: noContent('Stored'), ...errors(400, 401, 403, 503) },
    }),
    async (c) => {
      const { scope, name } = c.req.valid('param');
      await changeSecret(deps, c.get('principal').tenant, scope, name, c.req.valid('json').value);
      return c.body(null, 204);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/secrets',
      tags: ['secrets'],
      summary:
        'Secrets of the tenant: scope, name and updated_at, never values; by scope and name, a page at a time',
      security: BEARER,
      request: { query: PageQuery },
      responses: {
        200: jsonPage(
          z.array(z.object({ scope: z.string(), name: z.string(), updated_at: z.string() })),
          'Secrets',
        ),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const secrets = await (await store()).list(c.get('principal').tenant);
      const page = pageInMemory(secrets, pageRequest(c.req.valid('query')), (s) => [s.scope, s.name]);
      setNextPage(c, page.next);
      return c.json(page.items, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'delete',
      path: '/secrets/{scope}/{name}',
      tags: ['secrets'],
      summary: 'Delete a secret',
      security: BEARER,
      request: { params: Params },
      responses: { 204: noContent('Deleted'), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { scope, name } = c.req.valid('param');
      if (!(await changeSecret(deps, c.get('principal').tenant, scope, name, null))) {
        throw ApiError.notFound(`no secret ${scope}/${name}`);
      }
      return c.body(null, 204);
    },
  );

  return { name: 'secrets', routes };
}
