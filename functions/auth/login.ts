/**
 * Logging in with a password: the failed-login scopes a password check counts against,
 * and the check itself, which decides the tenant and role a user token acts with. The
 * `tokens` family (user tokens), `auth` (the web UI's session login) and `users` (a
 * password change, which re-checks the current password) all log in through here.
 */
import type { Context } from 'hono';
import { canonicalUsername, DEFAULT_TENANT } from '../../shared/auth/names.ts';
import type { Role } from '../../shared/auth/principal.ts';
import { ApiError } from '../../shared/errors.ts';
import { hasOwn, own } from '../../shared/own.ts';
import type { AppDeps } from '../app/deps.ts';
import { userCredentialRef } from '../identity/credential-refs.ts';
import { dummyPasswordHash, verifyPassword } from './passwords.ts';
import { clientAddress, type FailureLimiter } from './rate-limit.ts';
import { authServices, type TokenClaims } from './services.ts';

/**
 * The failed-login scopes of a password check: the user and the client address. Logins
 * and own-password changes share them, so guessing through either counts against both.
 */
export function loginScopes(c: Context, deps: AppDeps, username: string): string[] {
  return [`user:${username}`, `ip:${clientAddress(c, deps.config.trustedProxyHops)}`];
}

/** Checks a username and password and decides the tenant and role the token acts with. */
export async function userClaims(
  c: Context,
  deps: AppDeps,
  rawUsername: string,
  password: string,
  requestedTenant: string | undefined,
  limiter: FailureLimiter,
): Promise<TokenClaims> {
  const username = canonicalUsername(rawUsername) ?? rawUsername.normalize('NFKC');
  const scopes = loginScopes(c, deps, username);
  const attempt = await limiter.begin(scopes);
  const store = await authServices(deps).store();
  const user = canonicalUsername(rawUsername) ? await store.getUser(username) : undefined;
  const ok = await verifyPassword(password, user?.password_hash ?? (await dummyPasswordHash()));
  if (!user || !ok) throw ApiError.unauthenticated('invalid username or password');
  await attempt.succeeded();
  const tenant =
    requestedTenant ??
    (hasOwn(user.memberships, DEFAULT_TENANT) || user.system_admin
      ? DEFAULT_TENANT
      : Object.keys(user.memberships)[0]);
  if (!tenant) throw ApiError.forbidden('this user is not a member of any tenant');
  let role: Role | undefined = own(user.memberships, tenant);
  if (!role && user.system_admin && (await store.tenantExists(tenant))) role = 'admin';
  if (!role) throw ApiError.forbidden(`user ${username} is not a member of tenant ${tenant}`);
  return {
    sub: username,
    kind: 'user',
    tenant,
    roles: [role],
    cred: userCredentialRef(user),
    ...(user.system_admin ? { sys: true } : {}),
  };
}
