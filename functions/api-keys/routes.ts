/**
 * The `api-keys` family (admin): keys for automation, shown once and stored only as
 * a hash. Deleting a key revokes every token issued from it.
 */

import { randomUUID } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import { PageQuery } from '../../shared/api/page-query.ts';
import { newKey } from '../../shared/auth/keys.ts';
import { CredentialLifetime, resourceId } from '../../shared/auth/name-schemas.ts';
import { isPrototypeName, PROTOTYPE_NAME_MESSAGE } from '../../shared/auth/names.ts';
import { ASSIGNABLE_ROLES } from '../../shared/auth/roles.ts';
import { parseDuration } from '../../shared/duration.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, jsonPage, noContent } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { authServices } from '../auth/services.ts';
import type { ApiKeyRecord, KeyIndexEntry } from '../identity/store.ts';

const CreateApiKey = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(128)
      .refine((name) => !isPrototypeName(name), PROTOTYPE_NAME_MESSAGE),
    role: z.enum(ASSIGNABLE_ROLES),
    expires_in: CredentialLifetime.optional().openapi({ example: '90d' }),
  })
  .openapi('CreateApiKey');

const ApiKeyView = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z.string(),
    created_at: z.string(),
    expires_at: z.string().optional(),
  })
  .openapi('ApiKey');
const CreatedApiKey = ApiKeyView.extend({
  key: z.string().openapi({ description: 'Shown once; store it now' }),
}).openapi('CreatedApiKey');

export function apiKeysFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const auth = authServices(deps);
  routes.use('/api-keys', authenticate(deps), requireRole('admin'));
  routes.use('/api-keys/*', authenticate(deps), requireRole('admin'));

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/api-keys',
      tags: ['api-keys'],
      summary: 'Create an API key (shown once)',
      security: BEARER,
      request: body(CreateApiKey),
      responses: { 201: json(CreatedApiKey, 'The key'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const tenant = c.get('principal').tenant;
      const store = await auth.store();
      const { key, hash } = newKey('api-key');
      const record: ApiKeyRecord = {
        id: randomUUID(),
        name: input.name,
        role: input.role,
        key_hash: hash,
        created_at: new Date().toISOString(),
        ...(input.expires_in
          ? { expires_at: new Date(Date.now() + parseDuration(input.expires_in)).toISOString() }
          : {}),
      };
      const index: KeyIndexEntry = { kind: 'api-key', tenant, id: record.id };
      const batch = store.db.batch();
      batch.create(store.apiKey(tenant, record.id), record);
      batch.create(store.keyIndex(hash), index);
      await batch.commit();
      return c.json({ ...view(record), key }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/api-keys',
      tags: ['api-keys'],
      summary: 'API keys of the tenant (never the keys themselves), oldest first, a page at a time',
      security: BEARER,
      request: { query: PageQuery },
      responses: { 200: jsonPage(z.array(ApiKeyView), 'Keys'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const page = await (await auth.store()).list<ApiKeyRecord>(
        c.get('principal').tenant,
        'api-keys',
        pageRequest(c.req.valid('query')),
      );
      setNextPage(c, page.next);
      return c.json(page.items.map(view), 200);
    },
  );

  routes.openapi(
    createRoute({
      method: 'delete',
      path: '/api-keys/{id}',
      tags: ['api-keys'],
      summary: 'Delete an API key; its tokens stop working within 5 seconds',
      security: BEARER,
      request: { params: z.object({ id: resourceId('API key ids') }) },
      responses: { 204: noContent('Deleted'), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const tenant = c.get('principal').tenant;
      const store = await auth.store();
      if (!(await store.removeKeyed(store.apiKey(tenant, id), 'key_hash')))
        throw ApiError.notFound(`no API key ${id}`);
      auth.forget(`api-key:${tenant}:${id}`);
      return c.body(null, 204);
    },
  );

  return { name: 'api-keys', routes };
}

function view(record: ApiKeyRecord) {
  return {
    id: record.id,
    name: record.name,
    role: record.role,
    created_at: record.created_at,
    ...(record.expires_at ? { expires_at: record.expires_at } : {}),
  };
}
