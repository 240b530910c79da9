/** The `tenants` family: the system admin creates tenants; everyone may list their own. */
import { createRoute, z } from '@hono/zod-openapi';
import { PageQuery } from '../../shared/api/page-query.ts';
import { pageFrom } from '../../shared/api/paging.ts';
import { TenantName } from '../../shared/auth/name-schemas.ts';
import { ApiError } from '../../shared/errors.ts';
import { rootCollection } from '../adapters/firestore-paths.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, jsonPage } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole, requireSystemAdmin } from '../auth/middleware.ts';
import { authServices } from '../auth/services.ts';

const Tenant = z.object({ name: z.string(), created_at: z.string() }).openapi('Tenant');
const CreateTenant = z
  .strictObject({
    name: TenantName,
  })
  .openapi('CreateTenant');

export function tenantsFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const auth = authServices(deps);
  routes.use('/tenants', authenticate(deps));

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/tenants',
      tags: ['tenants'],
      summary: 'Create a tenant (system admin)',
      security: BEARER,
      middleware: [requireSystemAdmin()] as const,
      request: body(CreateTenant),
      responses: { 201: json(Tenant, 'The tenant'), ...errors(400, 401, 403, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid('json');
      const tenant = { name, created_at: new Date().toISOString() };
      try {
        await (await auth.store()).tenant(name).create(tenant);
      } catch (err) {
        if ((err as { code?: number }).code === 6) throw ApiError.conflict(`tenant ${name} already exists`);
        throw err;
      }
      return c.json(tenant, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/tenants',
      tags: ['tenants'],
      summary: 'Tenants: all of them for the system admin (by name, a page at a time), else the caller’s own',
      security: BEARER,
      middleware: [requireRole('viewer')] as const,
      request: { query: PageQuery },
      responses: { 200: jsonPage(z.array(Tenant), 'Tenants'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const principal = c.get('principal');
      const store = await auth.store();
      const request = pageRequest(c.req.valid('query'));
      if (principal.systemAdmin) {
        let query = rootCollection(store.db, 'tenants').orderBy('name');
        if (request.after) query = query.startAfter(request.after[0]);
        const snap = await query.limit(request.limit + 1).get();
        const page = pageFrom(
          snap.docs.map((d) => d.data() as z.infer<typeof Tenant>),
          request,
          (t) => [t.name],
        );
        setNextPage(c, page.next);
        return c.json(page.items, 200);
      }
      const own = (await store.tenant(principal.tenant).get()).data() as z.infer<typeof Tenant> | undefined;
      return c.json(own ? [own] : [], 200);
    },
  );

  return { name: 'tenants', routes };
}
