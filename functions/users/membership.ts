/**
 * Users and their tenants: add a user (new, or an existing one joining a tenant), remove
 * one from a tenant (deleting it with its last membership), change a password. Who may do
 * which to whom is decided by shared/auth/user-admin.ts, again inside the transaction that
 * commits it. Removing a user or changing a password bumps its credential version and
 * deletes its browser sessions, which revokes every token issued from the old credential.
 */
import type { Principal } from '../../shared/auth/principal.ts';
import type { AssignableRole } from '../../shared/auth/roles.ts';
import {
  addMemberDecision,
  passwordChangeDecision,
  removeMemberDecision,
} from '../../shared/auth/user-admin.ts';
import { ApiError } from '../../shared/errors.ts';
import type { AppDeps } from '../app/deps.ts';
import { hashPassword, verifyPassword } from '../auth/passwords.ts';
import { FailureLimiter } from '../auth/rate-limit.ts';
import { authServices } from '../auth/services.ts';
import { newGeneration } from '../identity/credential-refs.ts';
import type { IdentityStore, UserRecord } from '../identity/store.ts';

export async function addMember(
  deps: AppDeps,
  principal: Principal,
  input: { username: string; password?: string | undefined; role: AssignableRole; tenant: string },
): Promise<void> {
  const store = await authServices(deps).store();
  const { username, tenant, role } = input;
  if (!(await store.tenantExists(tenant))) throw ApiError.notFound(`tenant ${tenant} does not exist`);
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;
  await store.db.runTransaction(async (tx) => {
    const ref = store.user(username);
    const existing = (await tx.get(ref)).data() as UserRecord | undefined;
    const how = addMemberDecision(principal, username, tenant, existing, {
      withPassword: passwordHash !== undefined,
    });
    if (how === 'join') {
      tx.update(ref, { memberships: { ...existing!.memberships, [tenant]: role } });
      return;
    }
    const record: UserRecord = {
      username,
      password_hash: passwordHash!,
      generation: newGeneration(),
      credential_version: 1,
      memberships: { [tenant]: role },
      system_admin: false,
      created_at: new Date().toISOString(),
    };
    tx.create(ref, record);
  });
}

export async function removeMember(
  deps: AppDeps,
  principal: Principal,
  username: string,
  tenant: string,
): Promise<void> {
  const store = await authServices(deps).store();
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
  forgetUser(deps, username);
}

/**
 * Changes one's own password (with the current one, checked like a login: same failure
 * limit, `loginScopes`) or, as an admin, resets another user's.
 */
export async function changePassword(
  deps: AppDeps,
  principal: Principal,
  username: string,
  input: { password: string; current_password?: string | undefined; loginScopes: string[] },
): Promise<void> {
  const store = await authServices(deps).store();
  const how = passwordChangeDecision(principal, username, await store.getUser(username));
  if (how === 'self') await assertCurrentPassword(store, username, input.current_password, input.loginScopes);
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
  forgetUser(deps, username);
}

function forgetUser(deps: AppDeps, username: string): void {
  const auth = authServices(deps);
  auth.forget(`user:${username}`);
  auth.forget(`session:${username}`);
}

/** A wrong or missing current password is a failed login: 403 here, and it counts toward 429. */
async function assertCurrentPassword(
  store: IdentityStore,
  username: string,
  currentPassword: string | undefined,
  scopes: string[],
): Promise<void> {
  const limiter = new FailureLimiter(store.db);
  const attempt = await limiter.begin(scopes);
  const user = await store.getUser(username);
  const ok =
    currentPassword !== undefined && !!user && (await verifyPassword(currentPassword, user.password_hash));
  if (ok) await attempt.succeeded();
  else {
    throw ApiError.forbidden(
      currentPassword === undefined
        ? 'changing your own password needs current_password'
        : 'current_password is not your current password',
    );
  }
}
