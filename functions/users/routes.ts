/**
 * The `users` family (admin): users are global principals with one role per tenant.
 * Who may add, remove and reset whom is decided in shared/auth/user-admin.ts. Removing a
 * user or changing a password bumps its credential version and deletes its browser
 * sessions, which revokes every token issued from the old credential.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { TenantName } from '../../shared/auth/name-schemas.ts';
import { canonicalUsername, isPrototypeName, PROTOTYPE_NAME_MESSAGE } from '../../shared/auth/names.ts';
import { ASSIGNABLE_ROLES } from '../../shared/auth/roles.ts';
import {
  addMemberDecision,
  passwordChangeDecision,
  removeMemberDecision,
} from '../../shared/auth/user-admin.ts';
import { ApiError } from '../../shared/errors.ts';
import { own } from '../../shared/own.ts';
import type { AppDeps } from '../app/deps.ts';
import type { AppEnv } from '../app/env.ts';
import { BEARER, body, errors, json, noContent } from '../app/openapi-common.ts';
import { createRouter, type RouteFamily } from '../app/router.ts';
import { loginScopes } from '../auth/login.ts';
import { authenticate, requireRole } from '../auth/middleware.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from '../auth/passwords.ts';
import { FailureLimiter } from '../auth/rate-limit.ts';
import { authServices } from '../auth/services.ts';
import { newGeneration } from '../identity/credential-refs.ts';
import type { IdentityStore, UserRecord } from '../identity/store.ts';

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
      const store = await auth.store();
      if (!(await store.tenantExists(tenant))) throw ApiError.notFound(`tenant ${tenant} does not exist`);
      const passwordHash = input.password ? await hashPassword(input.password) : undefined;
      await store.db.runTransaction(async (tx) => {
        const ref = store.user(input.username);
        const existing = (await tx.get(ref)).data() as UserRecord | undefined;
        const how = addMemberDecision(principal, input.username, tenant, existing, {
          withPassword: passwordHash !== undefined,
        });
        if (how === 'join')
          tx.update(ref, { memberships: { ...existing!.memberships, [tenant]: input.role } });
        else {
          const record: UserRecord = {
            username: input.username,
            password_hash: passwordHash!,
            generation: newGeneration(),
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
        users.map((u) => ({ username: u.username, tenant, role: own(u.memberships, tenant)! })),
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
      const store = await auth.store();
      await store.db.runTransaction(async (tx) => {
        const ref = store.user(username);
        const [user, sessions] = await Promise.all([
          tx.get(ref).then((snap) => snap.data() as UserRecord | undefined),
          tx.get(store.sessionsOf(username)),
        ]);
        const how = removeMemberDecision(principal, username, tenant, user);
        if (how === 'delete') tx.delete(ref);
        else {
          const memberships = Object.fromEntries(
            Object.entries(user!.memberships).filter(([name]) => name !== tenant),
          );
          tx.update(ref, { memberships, credential_version: user!.credential_version + 1 });
        }
        for (const session of sessions.docs) tx.delete(session.ref);
      });
      forgetUser(username);
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
      const store = await auth.store();
      const how = passwordChangeDecision(principal, username, await store.getUser(username));
      if (how === 'self') await assertCurrentPassword(c, store, username, input.current_password);
      const hash = await hashPassword(input.password);
      await store.db.runTransaction(async (tx) => {
        const ref = store.user(username);
        const [user, sessions] = await Promise.all([
          tx.get(ref).then((snap) => snap.data() as UserRecord | undefined),
          tx.get(store.sessionsOf(username)),
        ]);
        // Decided again on what the transaction read: the user may have changed meanwhile.
        if (passwordChangeDecision(principal, username, user) !== how) throw ApiError.conflict('try again');
        tx.update(ref, { password_hash: hash, credential_version: user!.credential_version + 1 });
        for (const session of sessions.docs) tx.delete(session.ref);
      });
      forgetUser(username);
      return c.body(null, 204);
    },
  );

  function forgetUser(username: string): void {
    auth.forget(`user:${username}`);
    auth.forget(`session:${username}`);
  }

  /** A wrong or missing current password is a failed login: 403 here, and it counts toward 429. */
  async function assertCurrentPassword(
    c: Context<AppEnv>,
    store: IdentityStore,
    username: string,
    currentPassword: string | undefined,
  ): Promise<void> {
    const limiter = new FailureLimiter(store.db);
    const scopes = loginScopes(c, deps, username);
    await limiter.assertAllowed(scopes);
    const user = await store.getUser(username);
    const ok =
      currentPassword !== undefined && !!user && (await verifyPassword(currentPassword, user.password_hash));
    if (!ok) {
      await limiter.recordFailure(scopes);
      throw ApiError.forbidden(
        currentPassword === undefined
          ? 'changing your own password needs current_password'
          : 'current_password is not your current password',
      );
    }
  }

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
