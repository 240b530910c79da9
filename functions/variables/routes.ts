/**
 * The `variables` family (admin), CONTRACT section 6: the `${dyn|NAME}` store. A change
 * records a `variable` / `variable-deleted` event and sends `update-variable` to every
 * worker, which uses the new value from its next run on, without a redeploy.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { PageQuery } from '../../shared/api/page-query.ts';
import { pageFrom } from '../../shared/api/paging.ts';
import { isPrototypeName, PROTOTYPE_NAME_MESSAGE } from '../../shared/auth/names.ts';
import { ApiError } from '../../shared/errors.ts';
import { isVariableName, VARIABLE_NAME, VARIABLE_NAME_RULE } from '../../shared/runtime-refs.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, jsonPage, noContent } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { changeVariable, variablesCollection } from './store.ts';

const NameParam = z.object({
  name: z
    .string()
    .regex(VARIABLE_NAME, VARIABLE_NAME_RULE)
    .refine(isVariableName, VARIABLE_NAME_RULE)
    .refine((name) => !isPrototypeName(name), PROTOTYPE_NAME_MESSAGE),
});
const Variable = z
  .object({ name: z.string(), value: z.string(), updated_at: z.string() })
  .openapi('Variable');

export function variablesFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  routes.use('/variables', authenticate(deps), requireRole('admin'));
  routes.use('/variables/*', authenticate(deps), requireRole('admin'));

  routes.openapi(
    createRoute({
      method: 'put',
      path: '/variables/{name}',
      tags: ['variables'],
      summary: 'Set a variable; workers use it from their next run on',
      security: BEARER,
      request: {
        params: NameParam,
        ...body(z.strictObject({ value: z.string().max(64 * 1024) }).openapi('VariableValue')),
      },
      responses: { 204: noContent('Set'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      await changeVariable(
        deps,
        c.get('principal').tenant,
        c.req.valid('param').name,
        c.req.valid('json').value,
      );
      return c.body(null, 204);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/variables',
      tags: ['variables'],
      summary: 'Variables with their values, by name, a page at a time',
      security: BEARER,
      request: { query: PageQuery },
      responses: { 200: jsonPage(z.array(Variable), 'Variables'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const request = pageRequest(c.req.valid('query'));
      let query = variablesCollection(await deps.clients.firestore(), c.get('principal').tenant).orderBy(
        'name',
      );
      if (request.after) query = query.startAfter(request.after[0]);
      const snap = await query.limit(request.limit + 1).get();
      const page = pageFrom(
        snap.docs.map((d) => d.data() as z.infer<typeof Variable>),
        request,
        (v) => [v.name],
      );
      setNextPage(c, page.next);
      return c.json(page.items, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/variables/{name}',
      tags: ['variables'],
      summary: 'One variable',
      security: BEARER,
      request: { params: NameParam },
      responses: { 200: json(Variable, 'The variable'), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const snap = await variablesCollection(await deps.clients.firestore(), c.get('principal').tenant)
        .doc(name)
        .get();
      if (!snap.exists) throw ApiError.notFound(`no variable ${name}`);
      return c.json(snap.data() as z.infer<typeof Variable>, 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'delete',
      path: '/variables/{name}',
      tags: ['variables'],
      summary: 'Delete a variable',
      security: BEARER,
      request: { params: NameParam },
      responses: { 204: noContent('Deleted'), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      if (!(await changeVariable(deps, c.get('principal').tenant, name, null)))
        throw ApiError.notFound(`no variable ${name}`);
      return c.body(null, 204);
    },
  );

  return { name: 'variables', routes };
}
