/** The `enrollment-secrets` family (admin): secrets with which workers register themselves. */

import { randomUUID } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import { PageQuery } from '../../shared/api/page-query.ts';
import { newKey } from '../../shared/auth/keys.ts';
import { CredentialLifetime, resourceId } from '../../shared/auth/name-schemas.ts';
import { parseDuration } from '../../shared/duration.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import { BEARER, body, errors, json, jsonPage, noContent } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { authServices } from '../auth/services.ts';
import type { EnrollmentSecretRecord, KeyIndexEntry } from '../identity/store.ts';

const CreateSecret = z
  .strictObject({
    name: z.string().min(1).max(128),
    expires_in: CredentialLifetime.optional().openapi({ example: '24h' }),
    max_uses: z.number().int().min(1).optional(),
  })
  .openapi('CreateEnrollmentSecret');
const SecretView = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: z.string(),
    expires_at: z.string().optional(),
    max_uses: z.number().optional(),
    uses: z.number(),
  })
  .openapi('EnrollmentSecret');

export function enrollmentSecretsFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const auth = authServices(deps);
  routes.use('/enrollment-secrets', authenticate(deps), requireRole('admin'));
  routes.use('/enrollment-secrets/*', authenticate(deps), requireRole('admin'));

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/enrollment-secrets',
      tags: ['enrollment-secrets'],
      summary: 'Create an enrollment secret (shown once)',
      security: BEARER,
      request: body(CreateSecret),
      responses: {
        201: json(z.object({ id: z.string(), secret: z.string() }), 'The secret'),
        ...errors(400, 401, 403),
      },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const expiresAt = input.expires_in
        ? new Date(Date.now() + parseDuration(input.expires_in)).toISOString()
        : undefined;
      const tenant = c.get('principal').tenant;
      const store = await auth.store();
      const { key, hash } = newKey('enrollment');
      const record: EnrollmentSecretRecord = {
        id: randomUUID(),
        name: input.name,
        secret_hash: hash,
        created_at: new Date().toISOString(),
        uses: 0,
        ...(expiresAt ? { expires_at: expiresAt } : {}),
        ...(input.max_uses ? { max_uses: input.max_uses } : {}),
      };
      const batch = store.db.batch();
      batch.create(store.enrollmentSecret(tenant, record.id), record);
      batch.create(store.keyIndex(hash), {
        kind: 'enrollment',
        tenant,
        id: record.id,
      } satisfies KeyIndexEntry);
      await batch.commit();
      return c.json({ id: record.id, secret: key }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/enrollment-secrets',
      tags: ['enrollment-secrets'],
      summary:
        'Enrollment secrets of the tenant (never the secrets themselves), oldest first, a page at a time',
      security: BEARER,
      request: { query: PageQuery },
      responses: { 200: jsonPage(z.array(SecretView), 'Secrets'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const page = await (await auth.store()).list<EnrollmentSecretRecord>(
        c.get('principal').tenant,
        'enrollment-secrets',
        pageRequest(c.req.valid('query')),
      );
      setNextPage(c, page.next);
      return c.json(
        page.items.map(({ secret_hash: _, ...rest }) => rest),
        200,
      );
    },
  );

  routes.openapi(
    createRoute({
      method: 'delete',
      path: '/enrollment-secrets/{id}',
      tags: ['enrollment-secrets'],
      summary: 'Delete an enrollment secret',
      security: BEARER,
      request: { params: z.object({ id: resourceId('enrollment secret ids') }) },
      responses: { 204: noContent('Deleted'), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const tenant = c.get('principal').tenant;
      const store = await auth.store();
      if (!(await store.removeKeyed(store.enrollmentSecret(tenant, id), 'secret_hash'))) {
        throw ApiError.notFound(`no enrollment secret ${id}`);
      }
      return c.body(null, 204);
    },
  );

  return { name: 'enrollment-secrets', routes };
}
