/**
 * The `users` family (admin): users are global principals with one role per tenant.
 * Deleting a user or changing a password bumps its credential version, which revokes
 * every token issued from the old one.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { canonicalUsername } from '../../shared/auth/names.ts';
import { ASSIGNABLE_ROLES } from '../../shared/auth/roles.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, json, noContent } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../auth/passwords.ts';
import { authServices } from '../auth/services.ts';
import type { UserRecord } from '../identity/store.ts';

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
  );

const CreateUser = z
  .strictObject({
    username: Username,
    password: Password.optional().openapi({
      description: 'Required for a new user; omit to add an existing user to this tenant',
    }),
    role: z.enum(ASSIGNABLE_ROLES),
    tenant: z.string().max(64).optional(),
  })
  .openapi('CreateUser');

const UserView = z.object({ username: z.string(), tenant: z.string(), role: z.string() }).openapi('User');
const UsernameParam = z.object({ username: z.string().max(64) });

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
      const store = await auth.store();
      if (!(await store.tenantExists(tenant))) throw ApiError.notFound(`tenant ${tenant} does not exist`);
      const passwordHash = input.password ? await hashPassword(input.password) : undefined;
      await store.db.runTransaction(async (tx) => {
        const ref = store.user(input.username);
        const existing = (await tx.get(ref)).data() as UserRecord | undefined;
        if (existing?.memberships[tenant])
          throw ApiError.conflict(`user ${input.username} is already a member of ${tenant}`);
        if (existing && passwordHash) {
          throw ApiError.conflict(
            `user ${input.username} exists; omit the password to add them to tenant ${tenant}`,
          );
        }
        if (!existing && !passwordHash)
          throw ApiError.invalid('a new user needs a password', [
            { path: 'password', message: 'required for a new user' },
          ]);
        if (existing) tx.update(ref, { [`memberships.${tenant}`]: input.role });
        else {
          const record: UserRecord = {
            username: input.username,
            password_hash: passwordHash!,
            credential_version: 1,
            memberships: { [tenant]: input.role },
            system_admin: false,
            created_at: new Date().toISOString(),
          };
          tx.create(ref, record);
        }
      });
      return c.json({ username: input.username, tenant, role: input.role }, 201);
    },
  );

  routes.openapi(
    createRoute({
      method: 'get',
      path: '/users',
      tags: ['users'],
      summary: 'Users of the caller’s tenant',
      security: BEARER,
      middleware: [requireRole('admin')] as const,
      responses: { 200: json(z.array(UserView), 'Users'), ...errors(401, 403) },
    }),
    async (c) => {
      const tenant = c.get('principal').tenant;
      const users = await (await auth.store()).usersOf(tenant);
      return c.json(
        users.map((u) => ({ username: u.username, tenant, role: u.memberships[tenant]! })),
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
      const tenant = c.get('principal').tenant;
      const store = await auth.store();
      await store.db.runTransaction(async (tx) => {
        const ref = store.user(username);
        const user = (await tx.get(ref)).data() as UserRecord | undefined;
        if (!user?.memberships[tenant]) throw ApiError.notFound(`no user ${username} in tenant ${tenant}`);
        const { [tenant]: _, ...rest } = user.memberships;
        if (Object.keys(rest).length === 0 && !user.system_admin) tx.delete(ref);
        else tx.update(ref, { memberships: rest, credential_version: user.credential_version + 1 });
      });
      auth.forget(`user:${username}`);
      auth.forget(`session:${username}`);
      return c.body(null, 204);
    },
  );

  routes.openapi(
    createRoute({
      method: 'post',
      path: '/users/{username}/password',
      tags: ['users'],
      summary:
        'Change a password (yourself, or an admin of a tenant the user belongs to); old tokens stop working',
      security: BEARER,
      request: {
        params: UsernameParam,
        ...body(z.strictObject({ password: Password }).openapi('NewPassword')),
      },
      responses: { 204: noContent('Changed'), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { username } = c.req.valid('param');
      const { password } = c.req.valid('json');
      const principal = c.get('principal');
      const self = principal.kind === 'user' && principal.subject === username;
      if (!self && !(principal.roles.includes('admin') && principal.kind !== 'worker')) {
        throw ApiError.forbidden('only the user or an admin may change a password');
      }
      const store = await auth.store();
      const hash = await hashPassword(password);
      await store.db.runTransaction(async (tx) => {
        const ref = store.user(username);
        const user = (await tx.get(ref)).data() as UserRecord | undefined;
        if (!user || (!self && !user.memberships[principal.tenant] && !principal.systemAdmin)) {
          throw ApiError.notFound(`no user ${username} in tenant ${principal.tenant}`);
        }
        tx.update(ref, { password_hash: hash, credential_version: user.credential_version + 1 });
      });
      auth.forget(`user:${username}`);
      auth.forget(`session:${username}`);
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
