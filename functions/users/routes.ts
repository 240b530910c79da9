/**
 * The `users` family (admin): users are global principals with one role per tenant.
 * The handlers validate and call membership.ts, where who may add, remove and reset whom
 * (shared/auth/user-admin.ts) is decided inside the transaction that commits it.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { PageQuery } from '../../shared/api/page-query.ts';
import { pageInMemory } from '../../shared/api/paging.ts';
import { TenantName } from '../../shared/auth/name-schemas.ts';
import { canonicalUsername, isPrototypeName, PROTOTYPE_NAME_MESSAGE } from '../../shared/auth/names.ts';
import { ASSIGNABLE_ROLES } from '../../shared/auth/roles.ts';
import { ApiError } from '../../shared/errors.ts';
import { own } from '../../shared/own.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, json, jsonPage, noContent } from '../app/openapi-common.ts';
import { pageRequest, setNextPage } from '../app/paging.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { loginScopes } from '../auth/login.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import { authServices } from '../auth/services.ts';
import { addMember, changePassword, removeMember } from './membership.ts';

const Password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `passwords need at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(1024);
const Username = z
  .string()
  .max(64)
  .refine(
    (u) => canonicalUsername(u) === u,
    'usernames are 1-64 lowercase ASCII letters, digits, . _ - (no look-alike characters)',
  )
  .refine((u) => !isPrototypeName(u), PROTOTYPE_NAME_MESSAGE);

const CreateUser = z
  .strictObject({
    username: Username,
    password: Password.optional().openapi({
      description:
        'Required for a new user; omitted only by the system admin adding an existing user to a tenant',
    }),
    role: z.enum(ASSIGNABLE_ROLES),
    tenant: TenantName.optional(),
  })
  .openapi('CreateUser');

const NewPassword = z
  .strictObject({
    password: Password,
    current_password: z.string().max(1024).optional().openapi({
      description: 'Required when changing one’s own password; not sent by an admin resetting another user’s',
    }),
  })
  .openapi('NewPassword');

const UserView = z.object({ username: z.string(), tenant: z.string(), role: z.string() }).openapi('User');
const UsernameParam = z.object({ username: Username });

export function usersFamily(deps: AppDeps): RouteFamily {
  const routes = createRouter();
  const auth = authServices(deps);
  routes.use('/users', authenticate(deps));
  routes.use('/users/*', authenticate(deps));

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/users',
      tags: ['users'],
      summary: 'Create a user, or add an existing user to a tenant',
      security: BEARER,
      middleware: [requireRole('admin')] as const,
      request: body(CreateUser),
      responses: { 201: json(UserView, 'The membership'), ...errors(400, 401, 403, 409) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const tenant = targetTenant(c, input.tenant);
      const principal = c.get('principal');
      await addMember(deps, principal, { ...input, tenant });
      return c.json({ username: input.username, tenant, role: input.role }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/users',
      tags: ['users'],
      summary: 'Users of the caller’s tenant, by username, a page at a time',
      security: BEARER,
      middleware: [requireRole('admin')] as const,
      request: { query: PageQuery },
      responses: { 200: jsonPage(z.array(UserView), 'Users'), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const tenant = c.get('principal').tenant;
      const users = await (await auth.store()).usersOf(tenant);
      const page = pageInMemory(users, pageRequest(c.req.valid('query')), (u) => [u.username]);
      setNextPage(c, page.next);
      return c.json(
        page.items.map((u) => ({ username: u.username, tenant, role: own(u.memberships, tenant)! })),
        200,
      );
    },
  );

  routes.openapi(
    createRoute({
      method: 'delete',
      path: '/users/{username}',
      tags: ['users'],
      summary:
        'Remove a user from the tenant (and delete it when it has no tenant left); its tokens stop working',
      security: BEARER,
      middleware: [requireRole('admin')] as const,
      request: { params: UsernameParam },
      responses: { 204: noContent('Removed'), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { username } = c.req.valid('param');
      const principal = c.get('principal');
      const tenant = principal.tenant;
      await removeMember(deps, principal, username, tenant);
      return c.body(null, 204);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/users/{username}/password',
      tags: ['users'],
      summary:
        'Change your own password (with current_password), or, as an admin, reset the password of a user ' +
        'who belongs to your tenant alone (the system admin: anyone’s); old tokens stop working',
      security: BEARER,
      request: { params: UsernameParam, ...body(NewPassword) },
      responses: { 204: noContent('Changed'), ...errors(400, 401, 403, 404, 429) },
    }),
    async (c) => {
      const { username } = c.req.valid('param');
      const input = c.req.valid('json');
      const principal = c.get('principal');
      await changePassword(deps, principal, username, {
        ...input,
        loginScopes: loginScopes(c, deps, username),
      });
      return c.body(null, 204);
    },
  );

  return { name: 'users', routes };
}

/** The tenant a user operation acts on: the caller's own, or any for the system admin. */
export function targetTenant(c: Context<AppEnv>, requested: string | undefined): string {
  const principal = c.get('principal');
  if (!requested || requested === principal.tenant) return principal.tenant;
  if (!principal.systemAdmin)
    throw ApiError.forbidden(`only the system admin may act in tenant ${requested}`);
  return requested;
}
